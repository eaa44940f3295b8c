package main

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// babble is speech-like sound: noise under syllables of random length and loudness,
// with short pauses, at 24 kHz.
func babble(rng *rand.Rand, seconds float64) []float32 {
	const rate = 24000
	out := make([]float32, 0, int(seconds*rate))
	for len(out) < int(seconds*rate) {
		n := int((0.08 + 0.22*rng.Float64()) * rate)
		amp := 0.02 + 0.3*rng.Float64()
		for i := range n {
			env := math.Sin(math.Pi * float64(i) / float64(n))
			out = append(out, float32(amp*env*(2*rng.Float64()-1)))
		}
		out = append(out, make([]float32, int(0.05*rng.Float64()*rate))...)
	}
	return out
}

// Wherever a turn's clip falls between two of the input's 10 ms hops, its end is heard
// once, at the hop where it ends (the best phase correlates at least at match), and the
// answer starts delay_ms after the clip's end to within a few milliseconds; other turns,
// before it, are not taken for it.
func TestMatcherHearsATurnEndAtAnyPhase(t *testing.T) {
	const rate = 24000
	rng := rand.New(rand.NewPCG(1, 2))
	turn := babble(rng, 2.4)
	turn = append(turn, make([]float32, rate/5)...) // the clip's trailing silence
	tm, err := templatesOf(audio.PCM{Samples: turn, Rate: rate})
	if err != nil {
		t.Fatal(err)
	}
	answer := babble(rng, 1)
	f := sdk.Format{InputRate: rate, OutputRate: rate, FrameSize: 1920}
	o := &oracle{match: defaultMatch, delayS: 0.5}
	for _, shift := range []int{0, 37, 120, 203, 239} {
		// Other speech, a pause, the turn starting shift samples after a hop, silence.
		var room []float32
		room = append(room, babble(rng, 3)...)
		room = append(room, make([]float32, rate/2+shift)...)
		tStart := len(room)
		room = append(room, turn...)
		tEnd := float64(len(room)) / rate
		room = append(room, make([]float32, 3*rate)...)
		c := &conversation{o: o, format: f, id: "t", cues: []cue{{templates: tm, answer: answer}}}
		var out []float32
		for k := 0; (k+1)*f.FrameSize <= len(room); k++ {
			o, err := c.Step(context.Background(), room[k*f.FrameSize:(k+1)*f.FrameSize])
			if err != nil {
				t.Fatal(err)
			}
			if o.Samples == nil {
				o.Samples = make([]float32, f.FrameSize)
			}
			out = append(out, o.Samples...)
		}
		if c.next != 1 {
			t.Errorf("shift %d: the turn's end was never heard (best r %.3f)", shift, c.best)
			continue
		}
		first := -1
		for i, x := range out {
			if x != 0 {
				first = i
				break
			}
		}
		start := float64(first) / rate
		if first < tStart || math.Abs(start-(tEnd+0.5)) > 0.005 {
			t.Errorf("shift %d: the answer starts at %.4f s, want %.4f s (the turn ends at %.4f s)", shift, start, tEnd+0.5, tEnd)
		}
	}
}
