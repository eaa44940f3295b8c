package score

import (
	"reflect"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// All cases use the section 8 defaults: turn_gap 0.5, t_onset_window 5, n4_gap 3,
// yield_deadline 2, yield_observe 0.5.

func ep(s, e float64) timeline.Episode { return timeline.Episode{Start: s, End: e} }

func eventFor(t *testing.T, tl timeline.Timeline, eps []timeline.Episode, turn int) Event {
	t.Helper()
	for _, ev := range Events(tl, eps, protocol.Defaults()) {
		if ev.Turn == turn {
			return ev
		}
	}
	t.Fatalf("no event for turn %d", turn)
	return Event{}
}

// T = [0, 5), next turn at 12: tE = 5, onset window (5, 10]. The answer span runs from
// the start of the speech presence counts to the next turn (section 5.3).
func TestTVerdicts(t *testing.T) {
	tl := timeline.Timeline{Turns: []timeline.Turn{
		{Label: protocol.LabelT, Start: 0, End: 5},
		{Label: protocol.LabelN3, Start: 12, End: 14},
	}}
	cases := []struct {
		name     string
		eps      []timeline.Episode
		fresh    bool
		presence bool
		outcome  string
		answer   Span   // the answer span
		speech   []Span // the speech in it, judged
	}{
		// 5.6 is in (5, 10] and nothing is active at 5: a fresh onset; later speech before
		// the next turn is part of the answer.
		{"fresh onset", []timeline.Episode{ep(5.6, 8.5), ep(9.5, 10.5)}, true, true, OutcomeFreshOnset, Span{5.6, 12}, []Span{{5.6, 8.5}, {9.5, 10.5}}},
		// [4, 8) contains 5: already speaking; presence without a fresh onset. The whole
		// episode is the answer, its part before tE included (it used to be cut at tE).
		{"already speaking", []timeline.Episode{ep(1, 2), ep(4, 8)}, false, true, OutcomeAlreadySpeaking, Span{4, 12}, []Span{{4, 8}}},
		// an episode starting exactly at tE is active at tE (s <= t): already speaking.
		{"starts at tE", []timeline.Episode{ep(5, 6)}, false, true, OutcomeAlreadySpeaking, Span{5, 12}, []Span{{5, 6}}},
		// [3, 5) ends at tE: not active at 5 (t < e fails), and no later onset.
		{"ends at tE", []timeline.Episode{ep(3, 5)}, false, false, OutcomeSilent, Span{5, 12}, nil},
		// 10 = tE + 5 is the last instant of the window (inclusive); the answer runs past
		// the next turn's start only up to it.
		{"onset at window end", []timeline.Episode{ep(10, 13)}, true, true, OutcomeFreshOnset, Span{10, 12}, []Span{{10, 12}}},
		// 10.5 > 10: too late.
		{"onset after window", []timeline.Episode{ep(10.5, 11)}, false, false, OutcomeSilent, Span{5, 12}, nil},
		{"no speech", nil, false, false, OutcomeSilent, Span{5, 12}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := eventFor(t, tl, tc.eps, 0).T
			if v == nil {
				t.Fatal("no T verdict")
			}
			if v.FreshOnset != tc.fresh || v.Presence != tc.presence || v.Outcome != tc.outcome {
				t.Errorf("fresh %v presence %v outcome %s, want %v %v %s", v.FreshOnset, v.Presence, v.Outcome, tc.fresh, tc.presence, tc.outcome)
			}
			if v.AnswerSpan != tc.answer || !reflect.DeepEqual(v.AnswerSpeech, tc.speech) {
				t.Errorf("answer span %v speech %v, want %v %v", v.AnswerSpan, v.AnswerSpeech, tc.answer, tc.speech)
			}
		})
	}
}

func TestSilenceWindows(t *testing.T) {
	// N1 [12, 15) followed by a turn at 15.5: window [12, 15.5).
	// N3 [20, 22) is last: window [20, 22 + 0.5) = [20, 22.5).
	tl := timeline.Timeline{Turns: []timeline.Turn{
		{Label: protocol.LabelT, Start: 0, End: 5},
		{Label: protocol.LabelN1, Start: 12, End: 15},
		{Label: protocol.LabelN2, Addressee: protocol.AddresseeDevice, Start: 15.5, End: 20},
		{Label: protocol.LabelN3, Start: 20, End: 22},
	}}
	cases := []struct {
		name   string
		turn   int
		eps    []timeline.Episode
		window Span
		speech []Span
		ms     float64
	}{
		// [15.2, 16) overlaps [12, 15.5) for 0.3 s = 300 ms.
		{"speech in the gap after N1", 1, []timeline.Episode{ep(15.2, 16)}, Span{12, 15.5}, []Span{{15.2, 15.5}}, 300},
		// an answer to T running on into N1 counts: [10, 12.25) -> [12, 12.25), 250 ms.
		{"T answer spilling into N1", 1, []timeline.Episode{ep(10, 12.25)}, Span{12, 15.5}, []Span{{12, 12.25}}, 250},
		{"silent N2", 2, []timeline.Episode{ep(1, 2)}, Span{15.5, 20}, nil, 0},
		// [22.5, 23) starts exactly where the last window ends: no overlap.
		{"last turn, speech after window", 3, []timeline.Episode{ep(22.5, 23)}, Span{20, 22.5}, nil, 0},
		// [22.4, 23) overlaps [20, 22.5) for 100 ms; [20.5, 20.7) adds 200 ms.
		{"last turn, two pieces", 3, []timeline.Episode{ep(22.4, 23), ep(20.5, 20.7)}, Span{20, 22.5}, []Span{{20.5, 20.7}, {22.4, 22.5}}, 300},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := eventFor(t, tl, tc.eps, tc.turn)
			v := ev.Silence
			if v.Window != tc.window {
				t.Errorf("window %v, want %v", v.Window, tc.window)
			}
			if len(v.Speech) != len(tc.speech) {
				t.Fatalf("speech %v, want %v", v.Speech, tc.speech)
			}
			for i := range tc.speech {
				if !nearSpan(v.Speech[i], tc.speech[i]) {
					t.Errorf("speech %v, want %v", v.Speech, tc.speech)
				}
			}
			if d := v.SpeechMS - tc.ms; d > 1e-6 || d < -1e-6 {
				t.Errorf("speech %g ms, want %g", v.SpeechMS, tc.ms)
			}
			if v.Silent() != (len(tc.speech) == 0) || v.Pass() != v.Silent() {
				t.Errorf("silent %v pass %v with speech %v (unjudged speech must not pass)", v.Silent(), v.Pass(), v.Speech)
			}
		})
	}
	if ev := eventFor(t, tl, nil, 2); ev.Addressee != protocol.AddresseeDevice {
		t.Errorf("N2 addressee %q not carried into the event", ev.Addressee)
	}
}

func nearSpan(a, b Span) bool {
	return abs(a.Start-b.Start) < 1e-9 && abs(a.End-b.End) < 1e-9
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// N4_Q [30, 33), N4_R [36, 38): r = 36 (= 33 + n4_gap 3), deadline 36 + 2 = 38,
// observation end max(38, 38 + 0.5) = 38.5.
func TestN4Verdicts(t *testing.T) {
	tl := timeline.Timeline{Turns: []timeline.Turn{
		{Label: protocol.LabelT, Start: 0, End: 5},
		{Label: protocol.LabelN3, Start: 12, End: 14},
		{Label: protocol.LabelN4Q, Start: 30, End: 33},
		{Label: protocol.LabelN4R, Start: 36, End: 38},
		{Label: protocol.LabelN1, Start: 38.5, End: 40},
	}}
	cases := []struct {
		name     string
		eps      []timeline.Episode
		eligible bool
		verdict  string // N4Verdict.Verdict(): exclusion or yield
		yield    string // yield computed for every event
		window   bool
	}{
		// onset 33.5 in (33, 36], active(36), silent at 38 and in [38, 38.5).
		{"pass", []timeline.Episode{ep(33.5, 37)}, true, YieldPass, YieldPass, true},
		// active(38): [33.5, 38.2) still running at the deadline.
		{"still voicing", []timeline.Episode{ep(33.5, 38.2)}, true, YieldFailStillVoicing, YieldFailStillVoicing, true},
		// silent at 38, then speech again at 38.3 < 38.5.
		{"resumed", []timeline.Episode{ep(33.5, 37), ep(38.3, 39)}, true, YieldFailResumed, YieldFailResumed, true},
		// speech starting exactly at the observation end is after it (half-open).
		{"speech at observation end", []timeline.Episode{ep(33.5, 37), ep(38.5, 39)}, true, YieldPass, YieldPass, true},
		// [32, 37) overlaps the question [30, 33).
		{"spoke during question", []timeline.Episode{ep(32, 37)}, false, ExcludedSpokeDuringQ, YieldPass, true},
		// the only onset, 36.5, is after r = 36; nothing overlaps [30, 36).
		{"no onset in gap", []timeline.Episode{ep(36.5, 37)}, false, ExcludedNoOnsetInGap, YieldPass, false},
		// onset 33.5 but [33.5, 35) has ended by r = 36.
		{"not speaking at resolution", []timeline.Episode{ep(33.5, 35)}, false, ExcludedNotSpeakingAtR, YieldPass, true},
		// onset exactly at r = 36 is in (33, 36] and active(36): eligible, and a window
		// response too: the answering window [30, 36] is closed at r like the gap.
		{"onset at r", []timeline.Episode{ep(36, 37)}, true, YieldPass, YieldPass, true},
		// ineligible events still get a yield verdict (as if eligible); their outcome is
		// the exclusion.
		{"silent throughout", nil, false, ExcludedNoOnsetInGap, YieldPass, false},
		{"ineligible but still voicing", []timeline.Episode{ep(31, 39)}, false, ExcludedSpokeDuringQ, YieldFailStillVoicing, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := eventFor(t, tl, tc.eps, 2).N4
			if v.Resolution != 36 || v.ResolutionEnd != 38 || v.Deadline != 38 || v.ObserveEnd != 38.5 {
				t.Fatalf("r %g rE %g deadline %g observe end %g, want 36 38 38 38.5", v.Resolution, v.ResolutionEnd, v.Deadline, v.ObserveEnd)
			}
			if v.Eligible != tc.eligible || v.Verdict() != tc.verdict || v.Yield != tc.yield || v.WindowResponse != tc.window {
				t.Errorf("eligible %v verdict %s yield %s window %v, want %v %s %s %v",
					v.Eligible, v.Verdict(), v.Yield, v.WindowResponse, tc.eligible, tc.verdict, tc.yield, tc.window)
			}
			outcome := map[string]string{YieldPass: N4Yielded, YieldFailStillVoicing: N4StillVoicing, YieldFailResumed: N4Resumed,
				ExcludedSpokeDuringQ: N4SpokeDuringQuestion, ExcludedNoOnsetInGap: N4NoOnsetInGap, ExcludedNotSpeakingAtR: N4NotSpeakingAtR}[tc.verdict]
			if v.Outcome != outcome {
				t.Errorf("outcome %q, want %q", v.Outcome, outcome)
			}
		})
	}
}

// A long resolution moves the observation end: N4_R [36, 40) gives max(38, 40.5) = 40.5,
// so speech at 40 (silent at the deadline 38) is a resumption.
func TestN4ObservationEndFollowsLongResolution(t *testing.T) {
	tl := timeline.Timeline{Turns: []timeline.Turn{
		{Label: protocol.LabelN4Q, Start: 30, End: 33},
		{Label: protocol.LabelN4R, Start: 36, End: 40},
	}}
	v := eventFor(t, tl, []timeline.Episode{ep(34, 37), ep(40, 41)}, 0).N4
	if v.ObserveEnd != 40.5 || v.Verdict() != YieldFailResumed {
		t.Errorf("observe end %g verdict %s, want 40.5 %s", v.ObserveEnd, v.Verdict(), YieldFailResumed)
	}
}

func TestEventsSkipsN4RAndKeepsOrder(t *testing.T) {
	tl := timeline.Timeline{Turns: []timeline.Turn{
		{Label: protocol.LabelN2, Start: 0, End: 2},
		{Label: protocol.LabelN4Q, Start: 2.5, End: 4},
		{Label: protocol.LabelN4R, Start: 7, End: 8},
		{Label: protocol.LabelT, Start: 8.5, End: 10},
		{Label: protocol.LabelN3, Start: 14, End: 17},
	}}
	var got []string
	var thirds []int
	for _, ev := range Events(tl, nil, protocol.Defaults()) {
		got = append(got, ev.Label)
		thirds = append(thirds, ev.Third)
	}
	if want := []string{"N2", "N4_Q", "T", "N3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	// conversation span [0, 17), thirds at 5.667 and 11.333: starts 0, 2.5, 8.5, 14.
	if want := []int{0, 0, 1, 2}; !reflect.DeepEqual(thirds, want) {
		t.Errorf("thirds %v, want %v", thirds, want)
	}
}

func TestElapsedThird(t *testing.T) {
	// span [10, 70]: L = 60, boundaries at 10 + 20 = 30 and 10 + 40 = 50.
	for _, tc := range []struct {
		t    float64
		want int
	}{{-1, 0}, {10, 0}, {29.99, 0}, {30, 1}, {49.99, 1}, {50, 2}, {70, 2}, {80, 2}} {
		if got := ElapsedThird(tc.t, 10, 70); got != tc.want {
			t.Errorf("ElapsedThird(%g, 10, 70) = %d, want %d", tc.t, got, tc.want)
		}
	}
}
