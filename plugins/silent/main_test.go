package main

import (
	"context"
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk"
)

func TestNeverSpeaks(t *testing.T) {
	s := &silent{}
	if err := s.Configure(context.Background(), map[string]any{"input_rate": 16000.0, "frame_ms": 160.0}); err != nil {
		t.Fatal(err)
	}
	c, err := s.Start(context.Background(), sdk.ConversationStart{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if f := c.Format(); f != (sdk.Format{InputRate: 16000, OutputRate: 24000, FrameSize: 2560}) {
		t.Errorf("format %+v", f)
	}
	loud := make([]float32, 2560)
	for i := range loud {
		loud[i] = 0.9
	}
	for k := 0; k < 100; k++ {
		out, err := c.Step(context.Background(), loud)
		if err != nil || len(out.Samples) > 0 || out.Text != "" || out.Flush {
			t.Fatalf("frame %d: %+v %v", k, out, err)
		}
	}
	if err := s.Configure(context.Background(), map[string]any{"output_rate": 1.0}); err == nil {
		t.Error("an output rate of 1 Hz accepted")
	}
}
