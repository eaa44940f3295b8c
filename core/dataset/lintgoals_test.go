package dataset

import (
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// goalPair is an explicit version holding the given task, addressing, answer and turns.
func goalPair(task, addressing, answerType, gold string, turns ...Turn) Scenario {
	return Scenario{Task: task, Addressing: addressing, AnswerType: answerType, GoldAnswer: gold, Turns: turns}
}

func lintGoalsOf(g *Goals, scs []Scenario) map[string]LintCheck {
	out := map[string]LintCheck{}
	lintGoals(g, scs, func(name, value, goal string, pass bool, detail string) {
		out[name] = LintCheck{Name: name, Value: value, Goal: goal, Pass: pass, Detail: detail}
	})
	return out
}

// Each declared share is measured on the set and fails by name when it is missed.
func TestLintGoalsMeasureTheDeclaredShares(t *testing.T) {
	n1 := Turn{Label: protocol.LabelN1, Text: "Thanks, Aria.", Tags: []string{TagN1AddressesAria}}
	dev := Turn{Label: protocol.LabelN2, Addressee: protocol.AddresseeDevice, Text: "Alexa, stop."}
	n3 := Turn{Label: protocol.LabelN3, Text: "Where's the tape."}
	n3dots := Turn{Label: protocol.LabelN3, Text: "Where's the... oh."}
	q := Turn{Label: protocol.LabelN4Q, Text: "Aria, what's the time?"}
	g := &Goals{
		TolerancePoints: 5, Tasks: map[string]float64{"recall": 50, "code": 50}, MaxTaskShare: 50,
		MinNonNumeric: 50, MaxYesNo: 0, Addressing: map[string]float64{"opening": 50, "end": 50}, MaxOpening: 50,
		Inventory:  map[string]map[string]float64{"n1": {"0": 50, "1": 50}, "n4": {"0": 50, "1": 50}},
		MinN4Pairs: 50, HardNegatives: map[string]float64{TagN1AddressesAria: 50}, MaxN3Ellipsis: 50,
	}
	set := []Scenario{
		goalPair("recall", "opening", "name", "Priya", n1, dev, n3, q),
		goalPair("code", "end", "code", "4471", dev, n3dots),
	}
	set[0].TPosition, set[1].TPosition = "middle", "late-middle"
	g.TPositions = map[string]float64{"middle": 50, "late-middle": 50}
	for name, c := range lintGoalsOf(g, set) {
		if !c.Pass {
			t.Errorf("%s fails on a set that meets it: %s (%s)", name, c.Value, c.Detail)
		}
	}
	// A third pair skews every share.
	set = append(set, goalPair("code", "end", "yes_no", "no, it's too wide", n3dots))
	set[2].TPosition = "middle"
	got := lintGoalsOf(g, set)
	for _, name := range []string{"task kinds", "T positions", "largest task kind", "addressing forms", "inventory n1", "inventory n4", "pairs with an N4 event (declared)", "hard negatives", `N3 marked "..."`, "yes/no golds"} {
		if got[name].Pass {
			t.Errorf("%s passes on a set that misses it: %s", name, got[name].Value)
		}
	}
	if !strings.Contains(got["task kinds"].Detail, "code 66.7% (declared 50%)") {
		t.Errorf("task kinds detail %q does not name the share missed", got["task kinds"].Detail)
	}
	// A code with a letter is no quantity; a code of digits is.
	if !NonNumeric(&Scenario{AnswerType: "code", GoldAnswer: "B7K2"}) || NonNumeric(&Scenario{AnswerType: "code", GoldAnswer: "4471"}) {
		t.Error("NonNumeric reads codes wrongly")
	}
}
