package main

import (
	"context"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/plugins/always-talk/speech"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// 30 s of the plugin's output, in every declared format the real models use, is one
// Silero episode from (about) the first sample to the last: plain tones would not be.
func TestSileroHearsSpeechThroughout(t *testing.T) {
	d, err := vad.Open(vad.Options{})
	if err != nil {
		t.Fatalf("%v\n(this test runs the real Silero model: run `make deps` first)", err)
	}
	defer d.Close()
	for _, cfg := range []map[string]any{
		{}, // Moshi: 24 kHz, 80 ms
		{"input_rate": 16000.0, "output_rate": 24000.0, "frame_ms": 1000.0}, // MiniCPM-o
		{"input_rate": 16000.0, "output_rate": 16000.0, "frame_ms": 40.0},   // Voila
	} {
		a := &alwaysTalk{}
		if err := a.Configure(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		c, err := a.Start(context.Background(), sdk.ConversationStart{ID: "x"})
		if err != nil {
			t.Fatal(err)
		}
		f := c.Format()
		in := make([]float32, f.FrameSize)
		var out []float32
		for k := 0; k < 30*f.InputRate/f.FrameSize; k++ {
			o, err := c.Step(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Samples) != speech.FrameOutput(f, k) {
				t.Fatalf("frame %d: %d samples, want %d", k, len(o.Samples), speech.FrameOutput(f, k))
			}
			out = append(out, o.Samples...)
		}
		eps, err := d.Episodes(audio.PCM{Samples: out, Rate: f.OutputRate}, protocol.DefaultVAD())
		if err != nil {
			t.Fatal(err)
		}
		if len(eps) != 1 || eps[0].Start > 0.1 || eps[0].End < 29.9 {
			t.Errorf("format %+v: episodes %v, want one covering [0, 30)", f, eps)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []map[string]any{
		{"input_rate": 100.0}, {"frame_ms": "80"}, {"output_rate": 22050.5}, {"input_rate": 16000.0, "frame_ms": 0.01},
	} {
		if err := (&alwaysTalk{}).Configure(context.Background(), cfg); err == nil {
			t.Errorf("config %v accepted", cfg)
		}
	}
}
