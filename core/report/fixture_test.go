package report

import (
	"fmt"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// conversation is the timeline of every test item (seconds):
//
//	N1 [0, 2)  T [2.5, 5)  N2 (human) [5.5, 7)  N2 (device) [12, 14)  N4_Q [14.5, 16)  N4_R [19, 20)  N3 [20.5, 22)
func conversation() timeline.Timeline {
	return timeline.Timeline{Turns: []timeline.Turn{
		{Label: protocol.LabelN1, Speaker: "A", Text: "Aria is new here.", Start: 0, End: 2},
		{Label: protocol.LabelT, Speaker: "B", Text: "Aria, what time is it?", Start: 2.5, End: 5},
		{Label: protocol.LabelN2, Addressee: protocol.AddresseeHuman, Speaker: "C", Text: "Bob, pass the salt.", Start: 8.5, End: 10},
		{Label: protocol.LabelN2, Addressee: protocol.AddresseeDevice, Speaker: "A", Text: "Hey Siri, timer.", Start: 12, End: 14},
		{Label: protocol.LabelN4Q, Speaker: "B", Text: "Aria, how far is it?", Start: 14.5, End: 16},
		{Label: protocol.LabelN4R, Speaker: "C", Text: "Never mind, I know.", Start: 19, End: 20},
		{Label: protocol.LabelN3, Speaker: "A", Text: "Hmm, where was I.", Start: 20.5, End: 22},
	}, Duration: 24}
}

func ep(s, e float64) timeline.Episode { return timeline.Episode{Start: s, End: e} }

// Speech fragments with known verdicts on conversation().
var (
	answerFresh   = ep(5.5, 8)     // T: fresh onset
	answerAlready = ep(4, 8)       // T: already speaking at 5
	n4Yield       = ep(16.5, 19.5) // N4: eligible, silent at 21: pass
	n4Voicing     = ep(16.5, 21.2) // N4: eligible, still voicing at 21
	n4InQuestion  = ep(15, 15.5)   // N4: spoke during the question: excluded
	n3Short       = ep(21, 21.08)  // N3: 80 ms of speech
	n2Device      = ep(13, 13.25)  // N2 device: 250 ms of speech
)

// scored builds one conversation's verdicts through score.Score (the real path) and
// judges them as a judge would: answers correct when answerOK, window speech an
// acknowledgement when ackOK.
func scored(model, cond string, pair int, pos string, answerOK, ackOK bool, eps ...timeline.Episode) score.Scored {
	id := fmt.Sprintf("p%03d", pair)
	s := score.Score(score.Item{Model: model, Condition: cond, PairID: id, ScenarioID: id + "-" + cond,
		TPosition: pos, Timeline: conversation(), Episodes: eps}, protocol.Defaults())
	for i := range s.Events {
		ev := &s.Events[i]
		if ev.T != nil && ev.T.Presence {
			ev.T.Answer = &score.Judgement{OK: answerOK, Parsed: true}
			if !answerOK {
				ev.T.Answer.Failure = score.FailIncorrect
				if pair%5 == 0 {
					ev.T.Answer.Failure, ev.T.Answer.Parsed = score.FailUnparseable, false
				}
			}
		}
		if ev.Silence != nil && !ev.Silence.Silent() {
			ev.Silence.Judgement = &score.Judgement{OK: ackOK, Parsed: true}
			if !ackOK {
				ev.Silence.Judgement.Failure = score.FailIntrusion
			}
		}
	}
	return s
}

// fixture is two models, both conditions, `pairs` scenario pairs each. "alpha" answers
// most explicit requests with a fresh onset and yields; "beta" tends to be speaking
// already and keeps voicing over the resolution.
func fixture(pairs int) []score.Scored {
	var out []score.Scored
	for i := range pairs {
		pos := protocol.TPositions[i%3]
		// alpha explicit: fresh onset 3 of 4, eligible N4 every other, yields.
		var eps []timeline.Episode
		if i%4 != 0 {
			eps = append(eps, answerFresh)
		}
		if i%2 == 0 {
			eps = append(eps, n4Yield)
		}
		out = append(out, scored("alpha", protocol.Explicit, i, pos, i%3 != 0, true, eps...))
		// alpha implicit: fresh onset 1 of 3, speaks during some questions.
		eps = nil
		if i%3 == 0 {
			eps = append(eps, answerFresh)
		}
		if i%2 == 1 {
			eps = append(eps, n4InQuestion)
		}
		out = append(out, scored("alpha", protocol.Implicit, i, pos, true, false, eps...))
		// beta explicit: already speaking, keeps voicing, short N3 speech.
		eps = []timeline.Episode{answerAlready, n4Voicing}
		if i%2 == 0 {
			eps = append(eps, n3Short)
		}
		out = append(out, scored("beta", protocol.Explicit, i, pos, false, i%2 == 0, eps...))
		// beta implicit: silent on T half the time, talks to the device.
		eps = []timeline.Episode{n2Device}
		if i%2 == 0 {
			eps = append(eps, answerFresh)
		}
		out = append(out, scored("beta", protocol.Implicit, i, pos, i%4 == 0, false, eps...))
	}
	return out
}

func testParams(minEligible int) protocol.Params {
	p := protocol.Defaults()
	p.MinEligible = minEligible
	p.BootstrapResamples = 200
	return p
}

func testMeta() Meta {
	return Meta{
		Run:     "smoke-<1>",
		Harness: provenance.Harness{Version: "0.1.0-dev", Commit: "abc123"},
		Dataset: provenance.Dataset{Name: "duplex-mpe-mini", Hash: "sha256:00ff", Scenarios: 12},
		Models: []provenance.Plugin{
			{Name: "alpha", Plugin: "silent", Version: "1.0", Identity: map[string]string{"weights": "none"}},
			{Name: "beta", Plugin: "random-talk", Version: "1.0"},
		},
		Judge:    &provenance.Plugin{Name: "judge", Plugin: "lexical-judge", Version: "0.1", Identity: map[string]string{"rules": "sha256:aa"}},
		ASR:      &provenance.Plugin{Name: "asr", Plugin: "pocketsphinx", Version: "5"},
		Protocol: protocol.Defaults(),
		VAD:      protocol.DefaultVAD(),
		Date:     "2026-11-29T14:00:00Z",

		FailedConversations: map[string]int{"beta": 2},
		JudgeVerdicts:       180,
		UnparseableVerdicts: 3,
	}
}
