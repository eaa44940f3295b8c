package main

import (
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// One pair of the shipped dataset (examples/scenarios), spoken by flite with bench.hcl's
// voices, through the real scheduler: the explicit T gets a response and the implicit
// one does not, which is the explicit > implicit presence the baseline must show.
func TestShippedPairThroughScheduler(t *testing.T) {
	ds, err := dataset.Load("../../examples/scenarios")
	if err != nil {
		t.Fatal(err)
	}
	presence := map[string]bool{}
	m := startCascade(t, map[string]any{}, nil)
	for _, sc := range ds.Scenarios {
		if sc.PairID != "hand-01" {
			continue
		}
		var lines []line
		for _, tn := range sc.Turns {
			lines = append(lines, line{label: tn.Label, speaker: tn.Speaker, text: tn.Text})
		}
		rec, events := play(t, m, spokenConversation(t, sc.ScenarioID, shortPreamble, lines))
		logRecord(t, rec, events)
		presence[sc.Condition] = eventsByLabel(events, protocol.LabelT)[0].T.Presence
	}
	if len(presence) != 2 {
		t.Fatalf("pair hand-01 not found in both conditions: %v", presence)
	}
	if !presence["explicit"] || presence["implicit"] {
		t.Errorf("T presence explicit %v, implicit %v: want true, false", presence["explicit"], presence["implicit"])
	}
}
