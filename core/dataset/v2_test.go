package dataset

import (
	"slices"
	"strings"
	"testing"
)

func TestAddressingOf(t *testing.T) {
	for text, want := range map[string]string{
		"Aria, what time is it?":                     AddressOpening,
		"What time does it come out, Aria?":          AddressEnd,
		"So Aria, what time does it come out?":       AddressMid,
		"If it needs an hour, Aria, when is it done": AddressMid,
		"Hey Aria, when is it done?":                 AddressHey,
		"Okay, so, hey aria: when is it done?":       AddressHey,
		"Aria? ... When is it done?":                 AddressNameAlone,
		"Aria. When is it done?":                     AddressNameAlone,
		"When is it done?":                           "",
		"Ariadne, when is it done?":                  "",
	} {
		if got := AddressingOf(text); got != want {
			t.Errorf("AddressingOf(%q) = %q, want %q", text, got, want)
		}
	}
}

// The v2 fields are optional (a pair without them is valid: open v1), and when given
// each is checked: a mutation breaks exactly its rule.
func TestV2Fields(t *testing.T) {
	good := func() (Scenario, Scenario) {
		e, im := validPair()
		e.Task, im.Task = "time-date", "time-date"
		e.Addressing = AddressOpening
		im.CueText = "you keep the kitchen timers"
		e.Turns = slices.Clone(e.Turns)
		im.Turns = slices.Clone(im.Turns)
		e.Turns[5].Tags = []string{TagN2DeviceMentions}
		e.Turns[5].Text = "Hey Siri, play what Aria played yesterday."
		im.Turns[5] = e.Turns[5]
		e.Turns[6].Tags = []string{TagN1AboutAria}
		im.Turns[6] = e.Turns[6]
		return e, im
	}
	e, im := good()
	if vs := Validate(&Dataset{File: "x.jsonl", Scenarios: []Scenario{e, im}, Lines: []int{1, 2}}); len(vs) != 0 {
		t.Fatalf("valid v2 pair reported %v", vs)
	}
	cases := []struct {
		name   string
		rule   Rule
		mutate func(e, im *Scenario)
	}{
		{"unknown task", RuleTask, func(e, im *Scenario) { e.Task = "maths" }},
		{"tasks differ", RulePairTask, func(e, im *Scenario) { im.Task = "arithmetic" }},
		{"cue text on explicit", RuleCueText, func(e, im *Scenario) { e.CueText = "Aria" }},
		{"cue text not said", RuleCueText, func(e, im *Scenario) { im.CueText = "you're keeping score" }},
		{"cue text after T", RuleCueText, func(e, im *Scenario) { im.CueText = "play what aria played" }},
		{"unknown addressing", RuleAddressing, func(e, im *Scenario) { e.Addressing = "start" }},
		{"addressing on implicit", RuleAddressing, func(e, im *Scenario) { im.Addressing = AddressOpening }},
		{"addressing not where T names Aria", RuleAddressing, func(e, im *Scenario) { e.Addressing = AddressEnd }},
		{"unknown tag", RuleTags, func(e, im *Scenario) { e.Turns[6].Tags = []string{"n1_thanks"} }},
		{"tag twice", RuleTags, func(e, im *Scenario) { e.Turns[6].Tags = []string{TagN1AboutAria, TagN1AboutAria} }},
		{"tag on another label", RuleTags, func(e, im *Scenario) { e.Turns[1].Tags = []string{TagN1AboutAria} }},
		{"device tag on a human N2", RuleTags, func(e, im *Scenario) { e.Turns[1].Tags = []string{TagN2DeviceMentions} }},
		{"addresses-aria tag without the name", RuleTags, func(e, im *Scenario) {
			e.Turns[6].Text = "She has been a lifesaver this week."
			im.Turns[6].Text = e.Turns[6].Text
			e.Turns[6].Tags = []string{TagN1AddressesAria}
		}},
	}
	for _, c := range cases {
		e, im := good()
		c.mutate(&e, &im)
		vs := Validate(&Dataset{File: "x.jsonl", Scenarios: []Scenario{e, im}, Lines: []int{1, 2}})
		want := []Rule{c.rule}
		if c.rule == RuleTask {
			want = []Rule{RuleTask, RulePairTask} // the implicit version's is known
		}
		got := rules(vs)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: rules %v, want %v (%v)", c.name, got, want, vs)
		}
	}
}

// dataset stats counts the v2 fields, and prints nothing about them for a set without.
func TestStatsCountV2Fields(t *testing.T) {
	e, im := validPair()
	var b strings.Builder
	st := ComputeStats(&Dataset{Scenarios: []Scenario{e, im}})
	st.Print(&b)
	if st.V2 != nil || strings.Contains(b.String(), "task") {
		t.Fatalf("a v1 set shows v2 counts: %+v\n%s", st.V2, b.String())
	}
	e.Task, im.Task, e.Addressing, im.CueText = "recall", "recall", AddressOpening, "kitchen timers"
	e.AnswerType, im.AnswerType = "name", "name"
	e.Turns = slices.Clone(e.Turns)
	e.Turns[6].Tags = []string{TagN1AboutAria}
	st = ComputeStats(&Dataset{Scenarios: []Scenario{e, im}})
	if st.V2 == nil || st.V2.Tasks["recall"] != 1 || st.V2.Addressing[AddressOpening] != 1 || st.V2.CueText != 1 || st.V2.TagScenarios[TagN1AboutAria] != 1 || st.V2.AnswerTypes["name"] != 1 || st.V2.NonNumeric != 1 {
		t.Fatalf("v2 counts %+v", st.V2)
	}
	b.Reset()
	st.Print(&b)
	for _, want := range []string{"task (pairs)", "recall", "cue_text recorded: 1 of 1", TagN1AboutAria, "answer type (pairs)", "no amount"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("stats output lacks %q:\n%s", want, b.String())
		}
	}
}
