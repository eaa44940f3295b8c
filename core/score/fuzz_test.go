package score

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/core/vad"
)

// FuzzEvents builds a timeline and raw speech regions from arbitrary bytes and checks the
// invariants every verdict must satisfy, whatever the input.
func FuzzEvents(f *testing.F) {
	f.Add([]byte{1, 20, 30, 2, 10, 40, 4, 5, 20, 5, 30, 10, 3, 5, 5}, []byte{22, 40, 60, 10, 120, 30})
	f.Add([]byte{4, 0, 20, 5, 30, 10}, []byte{25, 35, 36, 40})
	f.Fuzz(func(t *testing.T, turnBytes, speechBytes []byte) {
		labels := []string{protocol.LabelT, protocol.LabelN1, protocol.LabelN2, protocol.LabelN3, protocol.LabelN4Q, protocol.LabelN4R}
		p := protocol.Defaults()
		var tl timeline.Timeline
		now := 0.0
		for i := 0; i+2 < len(turnBytes) && len(tl.Turns) < 40; i += 3 {
			label := labels[int(turnBytes[i])%len(labels)]
			start := now + float64(turnBytes[i+1])/10
			end := start + 0.1 + float64(turnBytes[i+2])/10
			tl.Turns = append(tl.Turns, timeline.Turn{Index: len(tl.Turns), Label: label, Start: start, End: end})
			now = end
		}
		var regions []timeline.Episode
		for i := 0; i+3 < len(speechBytes) && len(regions) < 40; i += 4 {
			s := float64(binary.LittleEndian.Uint16(speechBytes[i:])) / 500
			regions = append(regions, timeline.Episode{Start: s, End: s + float64(binary.LittleEndian.Uint16(speechBytes[i+2:]))/2000})
		}
		eps := vad.MergeRegions(regions, protocol.DefaultVAD())
		for i, e := range eps {
			if e.Duration() < 0.12-1e-6 {
				t.Fatalf("episode %v shorter than min_speech", e)
			}
			if i > 0 && e.Start-eps[i-1].End <= 0.8 {
				t.Fatalf("episodes %v and %v not more than merge_pause apart", eps[i-1], e)
			}
		}
		for _, ev := range Events(tl, eps, p) {
			switch {
			case ev.T != nil:
				v := ev.T
				if v.FreshOnset != (v.Outcome == OutcomeFreshOnset) || v.Presence != (v.Outcome != OutcomeSilent) ||
					v.ActiveAtEnd != (v.Outcome == OutcomeAlreadySpeaking) || (v.FreshOnset && v.ActiveAtEnd) {
					t.Fatalf("inconsistent T verdict %+v", v)
				}
			case ev.Silence != nil:
				v := ev.Silence
				total := 0.0
				for _, s := range v.Speech {
					if s.Start < v.Window.Start || s.End > v.Window.End || s.End <= s.Start {
						t.Fatalf("speech %v outside window %v", s, v.Window)
					}
					total += s.Duration()
				}
				if math.Abs(total*1000-v.SpeechMS) > 1e-6 || v.SpeechMS > v.Window.Duration()*1000+1e-6 {
					t.Fatalf("speech %g ms in window %v", v.SpeechMS, v.Window)
				}
			case ev.N4 != nil:
				v := ev.N4
				if v.Eligible != (v.Excluded == "") || (v.Eligible && (!v.ActiveAtResolution || !v.OnsetInGap || v.SpokeDuringQuestion)) {
					t.Fatalf("inconsistent eligibility %+v", v)
				}
				if (v.Yield == YieldFailStillVoicing) != timeline.Active(eps, v.Deadline) || v.ObserveEnd < v.Deadline {
					t.Fatalf("inconsistent yield %+v", v)
				}
				if v.OnsetInGap && !v.WindowResponse && v.Resolution > v.Question.End {
					// an onset in (qE, r) lies in [qS, r); only an onset exactly at r may lack a window response
					if _, ok := timeline.FirstOnset(eps, v.Question.End, v.Resolution-1e-9); ok {
						t.Fatalf("onset in the gap but no window response %+v", v)
					}
				}
			default:
				t.Fatalf("event without a verdict: %+v", ev)
			}
		}
	})
}
