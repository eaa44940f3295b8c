package main

import (
	"context"
	"testing"

	"github.com/duplexmpe/duplexmpe/plugins/always-talk/speech"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// play feeds the plugin frames of input built by in(t) (t = the frame's start in
// seconds) and returns, per frame, how many output samples it replied with.
func play(t *testing.T, cfg map[string]any, seconds float64, in func(t float64) float32) []int {
	t.Helper()
	p := &pauseResponder{}
	if err := p.Configure(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	c, err := p.Start(context.Background(), sdk.ConversationStart{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	f := c.Format()
	frame := make([]float32, f.FrameSize)
	var out []int
	for k := 0; float64(k*f.FrameSize) < seconds*float64(f.InputRate); k++ {
		for i := range frame {
			frame[i] = in(float64(k*f.FrameSize+i) / float64(f.InputRate))
		}
		o, err := c.Step(context.Background(), frame)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(o.Samples); n > 0 && n > speech.FrameOutput(f, k) {
			t.Fatalf("frame %d: %d samples, more than one frame's worth", k, n)
		}
		out = append(out, len(o.Samples))
	}
	return out
}

// speechUntil is input speech (a constant 0.5) in the given spans, silence elsewhere.
func speechIn(spans ...[2]float64) func(float64) float32 {
	return func(t float64) float32 {
		for _, s := range spans {
			if t >= s[0] && t < s[1] {
				return 0.5
			}
		}
		return 0
	}
}

// Default config (24 kHz, 80 ms frames, pause 1 s, answers of 2.5 s): speech until 1.0 s;
// after frame 24 (ending at 2.0 s) the input has been silent for exactly 1 s, so the reply
// to frame 24 starts the answer: 60000 samples, 31 whole frames and a quarter.
func TestAnswersAfterThePause(t *testing.T) {
	out := play(t, nil, 8, speechIn([2]float64{0, 1}))
	for k, n := range out {
		want := 0
		switch {
		case k >= 24 && k < 55:
			want = 1920
		case k == 55:
			want = 60000 - 31*1920
		}
		if n != want {
			t.Fatalf("frame %d: %d samples, want %d (replies %v)", k, n, want, out)
		}
	}
}

// A pause shorter than pause_ms is not answered; after an answer, silence alone does not
// start another: only a new pause after speech does.
func TestPausesAndRearming(t *testing.T) {
	cfg := map[string]any{"input_rate": 16000.0, "output_rate": 16000.0, "frame_ms": 20.0, "pause_ms": 500.0, "answer_ms": 200.0}
	out := play(t, cfg, 6, speechIn([2]float64{0, 1}, [2]float64{1.45, 2}, [2]float64{4, 4.5}))
	var starts []float64
	for k, n := range out {
		if n > 0 && (k == 0 || out[k-1] == 0) {
			starts = append(starts, float64(k+1)*0.02) // audible from the end of frame k
		}
	}
	// The 0.45 s pause at 1.0 is not answered; 2.0 + 0.5 -> 2.5; the long silence after
	// that answer gets no second one; 4.5 + 0.5 -> 5.0.
	if len(starts) != 2 || starts[0] != 2.5 || starts[1] != 5.0 {
		t.Errorf("answers start at %v, want [2.5 5]", starts)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []map[string]any{{"pause_ms": 0.0}, {"answer_ms": -1.0}, {"silence_level": 2.0}, {"frame_ms": "x"}} {
		if err := (&pauseResponder{}).Configure(context.Background(), cfg); err == nil {
			t.Errorf("config %v accepted", cfg)
		}
	}
}
