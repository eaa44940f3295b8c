package session_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/plan"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/session"
	"github.com/duplexmpe/duplexmpe/plugins/always-talk/speech"
)

// TestPlanLengthIsTheSchedulersOnTheDevSplit: the length `plan` counts for a
// conversation (plan.ConversationSeconds, every wait at its cap) is the length the
// scheduler plays, to the sample, for the conversations of the open v1 dev split under
// both gap profiles and the timing-cue control. Each turn's clip lasts what plan counts
// for a dataset not synthesised yet (its words at plan.SecondsPerWord) and is real
// speech; the model is the always-talk baseline over gRPC (it never falls silent, so
// every wait lasts to its cap), heard by the real Silero detector. The clips are at
// 16 kHz and the model hears 24 kHz or 16 kHz with frames that do not divide the
// segments, so resampling and frame rounding are both exercised.
func TestPlanLengthIsTheSchedulersOnTheDevSplit(t *testing.T) {
	ds, err := dataset.Load("../../datasets/open-v1/dev/scenarios.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	voice, err := speech.Voice(16000)
	if err != nil {
		t.Fatal(err)
	}
	const clipRate = 16000
	clip := func(sec float64, from int) audio.PCM {
		n := int(math.Round(sec * clipRate))
		out := make([]float32, n)
		for i := range out {
			out[i] = voice[(from+i)%len(voice)]
		}
		return audio.PCM{Samples: out, Rate: clipRate}
	}
	paper := protocol.Defaults()
	paper.TWaitCap = 7.3
	natural := paper
	natural.GapProfile = protocol.GapNatural
	timing := paper
	timing.TimingControl = true
	cases := []struct {
		name   string
		p      protocol.Params
		config map[string]any
	}{
		{"paper", paper, map[string]any{"input_rate": 24000.0, "output_rate": 24000.0, "frame_ms": 80.0}},
		{"natural", natural, map[string]any{"input_rate": 16000.0, "output_rate": 24000.0, "frame_ms": 150.0}},
		{"timing control", timing, map[string]any{"input_rate": 24000.0, "output_rate": 16000.0, "frame_ms": 110.0}},
	}
	// Every scenario of the split once: the pairs alternate between the paper and the
	// natural profile (both versions of a pair under the same), and a slice of them
	// under the timing-cue control, whose pads come from the seed and the pair. -short
	// plays a slice of each.
	pick := func(name string, pair int) bool {
		step := map[bool]int{false: 1, true: 5}[testing.Short()]
		switch name {
		case "paper":
			return pair%2 == 0 && pair/2%step == 0
		case "natural":
			return pair%2 == 1 && pair/2%step == 0
		}
		return pair%(7*step) == 3
	}
	preambleS := 1.7
	played := 0
	for _, c := range cases {
		m, _ := startModel(t, "always-talk", c.config)
		opts := options(t)
		opts.Params = c.p
		for i := range ds.Scenarios {
			if !pick(c.name, i/2) {
				continue
			}
			sc := ds.Scenarios[i]
			opts.Seed = int64(1000 + i)
			conv := session.Conversation{ID: sc.ScenarioID, PairID: sc.PairID, Preamble: clip(preambleS, 0)}
			for j := range sc.Turns {
				turn := &sc.Turns[j]
				turn.DurationS = float64(len(strings.Fields(turn.Text))) * plan.SecondsPerWord
				conv.Turns = append(conv.Turns, session.Turn{Index: j, Label: turn.Label, Speaker: turn.Speaker, Text: turn.Text,
					Audio: clip(turn.DurationS, 7919*(j+1)), GapAfterS: turn.GapAfterS})
			}
			rec, err := session.Run(context.Background(), m, conv, opts)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Failed() {
				t.Fatalf("%s %s: %s", c.name, sc.ScenarioID, rec.Failure)
			}
			played++
			if w := rec.TWait; w == nil || w.Ending != record.WaitCap {
				t.Fatalf("%s %s: the wait after T %+v did not last to its cap: the comparison needs one that does", c.name, sc.ScenarioID, w)
			}
			f := rec.Format
			got := int64(rec.Frames) * int64(f.FrameSize)
			secs := plan.ConversationSeconds(&sc, plan.Clips{Rate: clipRate, PreambleS: preambleS}, c.p, opts.Seed, plan.Frame{InputRate: f.InputRate, Size: f.FrameSize})
			if want := int64(math.Round(secs * float64(f.InputRate))); want != got {
				t.Errorf("%s %s: plan counts %d samples (%.4f s), the scheduler played %d (%.4f s)", c.name, sc.ScenarioID, want, secs, got, float64(got)/float64(f.InputRate))
			}
			// Where each turn begins and ends is the layout's too.
			l := session.Lay(plan.Shape(&sc, plan.Clips{Rate: clipRate, PreambleS: preambleS}), c.p, opts.Seed, f.InputRate)
			if err := sameTurns(l, f.FrameSize, rec); err != nil {
				t.Errorf("%s %s: %v", c.name, sc.ScenarioID, err)
			}
		}
	}
	if played < 10 {
		t.Fatalf("only %d conversations compared", played)
	}
}

// sameTurns checks the turns the scheduler recorded against the layout's placement with
// every wait at its cap.
func sameTurns(l session.Layout, frame int, rec *record.Record) error {
	f := int64(frame)
	var at int64
	turn := 0
	for _, s := range l.Segments {
		switch {
		case s.Kind == session.SegWait:
			at = (at + s.Samples + f - 1) / f * f
			continue
		case s.Kind == session.SegClip && s.Turn >= 0:
			if turn >= len(rec.Timeline.Turns) {
				return fmt.Errorf("the scheduler recorded %d turns", len(rec.Timeline.Turns))
			}
			got := rec.Timeline.Turns[turn]
			start, end := float64(at)/float64(l.Rate), float64(at+s.Samples)/float64(l.Rate)
			if got.Start != start || got.End != end {
				return fmt.Errorf("turn %d at [%.5f, %.5f), the layout places it at [%.5f, %.5f)", turn, got.Start, got.End, start, end)
			}
			turn++
		}
		at += s.Samples
	}
	if turn != len(rec.Timeline.Turns) {
		return fmt.Errorf("the layout has %d turns, the scheduler recorded %d", turn, len(rec.Timeline.Turns))
	}
	return nil
}
