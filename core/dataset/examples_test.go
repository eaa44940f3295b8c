package dataset

import (
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// The shipped hand-written set validates and covers what the issue asks of it.
func TestShippedScenariosValidate(t *testing.T) {
	d, vs, err := ValidatePath("../../examples/scenarios")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Error(v)
	}
	st := ComputeStats(d)
	if st.Pairs < 12 || st.Conditions[protocol.Explicit] != st.Pairs || st.Conditions[protocol.Implicit] != st.Pairs {
		t.Errorf("pairs %d, conditions %v", st.Pairs, st.Conditions)
	}
	if st.SpeakerSets[3] == 0 || st.SpeakerSets[4] == 0 {
		t.Errorf("speaker sets %v: want 3 and 4", st.SpeakerSets)
	}
	if st.N4ByAsker == 0 || st.N4ByOther == 0 {
		t.Errorf("N4 resolved by asker %d, by others %d", st.N4ByAsker, st.N4ByOther)
	}
	for _, p := range protocol.TPositions {
		if st.TPositions[p] == 0 {
			t.Errorf("no T in %s", p)
		}
	}
	settings := map[string]bool{}
	for _, s := range d.Scenarios {
		settings[s.Attributes.Setting] = true
		if ti := s.TIndex(); s.Condition == protocol.Implicit && NamesAria(s.Turns[ti-1].Text) {
			t.Errorf("%s: the turn before the implicit T names Aria", s.ScenarioID)
		}
	}
	if len(settings) < 8 {
		t.Errorf("only %d settings", len(settings))
	}
}
