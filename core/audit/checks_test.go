package audit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
)

func scene(id string, asker string, n1 string) dataset.Scenario {
	return dataset.Scenario{PairID: id, ScenarioID: id + "-explicit", Condition: "explicit", Speakers: []string{"A", "B", "C"},
		Turns: []dataset.Turn{
			{Speaker: "A", Text: "The pasta needs eleven minutes.", Label: "N2", Addressee: "human", GapAfterS: 0.3},
			{Speaker: "C", Text: n1, Label: "N1", GapAfterS: 0.4},
			{Speaker: asker, Text: "Aria, when is it done?", Label: "T"},
			{Speaker: "B", Text: "Grab the colander, Sam.", Label: "N2", Addressee: "human", GapAfterS: 0.2},
			{Speaker: "C", Text: "Fine.", Label: "N2", Addressee: "human"},
		}}
}

// The name check counts scenarios holding an N1-N3 turn with "Aria" and a question
// mark; the who-asks check compares each letter's share of T with its share of turns.
func TestNameAndWhoChecks(t *testing.T) {
	var set []dataset.Scenario
	for i := range 12 {
		n1 := "Aria has been great tonight."
		if i%4 == 0 { // 3 of 12 trap the name responder
			n1 = "Did Aria ever send that message?"
		}
		set = append(set, scene(fmt.Sprint(i), "B", n1))
	}
	if c := nameCheck(set); !c.Pass || c.Value != "3/12 scenarios (25.0%)" {
		t.Errorf("name check %+v", c)
	}
	if c := nameCheck(set[1:]); c.Pass {
		t.Errorf("2 of 11 pass the name check: %+v", c)
	}
	// B speaks 2 of 5 turns (40%) but asks every T: off by 60 points.
	if c := whoChecks(set)[0]; c.Pass || c.Value != "B off by 60.0 points" {
		t.Errorf("who asks T %+v", c)
	}
	// Askers spread A, B, C in turn: each asks 33.3% of T; counting T, A and B say 16 of
	// the 60 turns (26.7%), C 28 (46.7%): C is off by 13.3 points.
	for i := range set {
		set[i].Turns[2].Speaker = []string{"A", "B", "C"}[i%3]
	}
	if c := whoChecks(set)[0]; c.Pass || c.Value != "C off by 13.3 points" {
		t.Errorf("who asks T %+v", c)
	}
}

// The pause check under the natural profile: gaps that stop short of a request's
// silence fail it from the threshold they stop at; a lapse after an ordinary turn in
// every scenario passes every threshold up to its length.
func TestPauseCheckThresholds(t *testing.T) {
	var set []dataset.Scenario
	for i := range 10 {
		set = append(set, scene(fmt.Sprint(i), "B", "Aria has been great tonight."))
	}
	c, rows := pauseCheck(set)
	if c.Pass || rows[0].Threshold != PauseFrom || len(rows) != 9 {
		t.Fatalf("pause check %+v %+v", c, rows)
	}
	for _, r := range rows {
		if r.Missed != 0 || r.Intrudes != 0 {
			t.Errorf("at %g s: missed %.2f intrudes %.2f; every gap is under 0.5 s, the last turn's window ends turn_gap after it, and T gets t_onset_window", r.Threshold, r.Missed, r.Intrudes)
		}
	}
	for i := range set {
		set[i].Turns[0].GapAfterS = 4.8 // one of the 4 N1-N3 windows of a scenario is a lapse
	}
	if c, rows := pauseCheck(set); !c.Pass || rows[len(rows)-1].Intrudes != 0.25 {
		t.Errorf("with a lapse in every scenario: %+v", c)
	}
}

// In a built set the voice must not tell who asks: a voice that asks every T fails the
// check by name; voices that ask in proportion to their turns pass.
func TestVoiceCheck(t *testing.T) {
	turns := func(asker string) []dataset.Turn {
		var ts []dataset.Turn
		for _, sp := range []string{"A", "B", "C"} {
			ts = append(ts, dataset.Turn{Speaker: sp, Label: "N2", Addressee: "human"})
		}
		return append(ts, dataset.Turn{Speaker: asker, Label: "T"})
	}
	d := &dataset.Dataset{Manifest: &dataset.Manifest{Voices: map[string]string{"A": "v1", "B": "v2", "C": "v3"}}}
	for i := 0; i < 6; i++ {
		d.Scenarios = append(d.Scenarios, dataset.Scenario{PairID: fmt.Sprint(i), Turns: turns("B")})
	}
	c, err := voiceCheck(d)
	if err != nil {
		t.Fatal(err)
	}
	if c.Pass || len(c.Items) != 3 || !strings.Contains(c.Value, "v2 off by 50.0 points on T") {
		t.Errorf("one voice asks every T, yet %+v", c)
	}
	for i := range d.Scenarios {
		d.Scenarios[i].Turns = turns([]string{"A", "B", "C"}[i%3])
	}
	if c, _ := voiceCheck(d); !c.Pass {
		t.Errorf("voices asking in proportion fail: %+v", c)
	}
}
