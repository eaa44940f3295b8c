package main

import (
	"context"
	"math"
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk"
)

func configured(t *testing.T, cfg map[string]any) *randomTalk {
	t.Helper()
	r := &randomTalk{}
	if err := r.Configure(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return r
}

// talkingFraction plays an hour of frames and returns the share with output.
func talkingFraction(t *testing.T, r *randomTalk, id string, seed int64) (float64, []bool) {
	t.Helper()
	c, err := r.Start(context.Background(), sdk.ConversationStart{ID: id, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	f := c.Format()
	frames := 3600 * f.InputRate / f.FrameSize
	in := make([]float32, f.FrameSize)
	talk := make([]bool, frames)
	n := 0
	for k := range talk {
		out, err := c.Step(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Samples) > 0 {
			talk[k] = true
			n++
		}
	}
	return float64(n) / float64(frames), talk
}

// Bursts start at burst_rate per minute of silence and last mean_length on average, so
// the long-run share of talking time is rate*mean / (60 + rate*mean).
func TestBurstStatistics(t *testing.T) {
	for _, c := range []struct{ rate, mean float64 }{{6, 2}, {20, 1.5}, {2, 5}} {
		r := configured(t, map[string]any{"burst_rate": c.rate, "mean_length": c.mean, "seed": 3.0})
		got, _ := talkingFraction(t, r, "c", 1)
		want := c.rate * c.mean / (60 + c.rate*c.mean)
		if math.Abs(got-want) > 0.25*want {
			t.Errorf("rate %g/min, mean %g s: talking %.3f of the time, want about %.3f", c.rate, c.mean, got, want)
		}
	}
	silent := configured(t, map[string]any{"burst_rate": 0.0})
	if got, _ := talkingFraction(t, silent, "c", 1); got != 0 {
		t.Errorf("burst_rate 0 talks %.3f of the time", got)
	}
}

func TestSeeding(t *testing.T) {
	r := configured(t, map[string]any{"seed": 5.0})
	_, a := talkingFraction(t, r, "c1", 1)
	_, b := talkingFraction(t, r, "c1", 1)
	_, c := talkingFraction(t, r, "c2", 1)
	_, d := talkingFraction(t, configured(t, map[string]any{"seed": 6.0}), "c1", 1)
	same := func(x, y []bool) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Error("the same conversation replayed differently")
	}
	if same(a, c) || same(a, d) {
		t.Error("another conversation id or config seed gave the same bursts")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []map[string]any{
		{"burst_rate": -1.0}, {"mean_length": 0.0}, {"seed": 1.5}, {"burst_rate": "often"}, {"frame_ms": 0.0}, {"input_rate": 16000.0, "frame_ms": 0.01},
	} {
		if err := (&randomTalk{}).Configure(context.Background(), cfg); err == nil {
			t.Errorf("config %v accepted", cfg)
		}
	}
}
