package construct

import (
	"bytes"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, err := Generate(GenerateSpec{Pairs: 50, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(GenerateSpec{Pairs: 50, Seed: 7})
	ja, _ := dataset.MarshalScenarios(a)
	jb, _ := dataset.MarshalScenarios(b)
	if !bytes.Equal(ja, jb) {
		t.Fatal("same seed, different scenarios.jsonl")
	}
	c, _ := Generate(GenerateSpec{Pairs: 50, Seed: 8})
	jc, _ := dataset.MarshalScenarios(c)
	if bytes.Equal(ja, jc) {
		t.Fatal("different seeds gave the same scenarios")
	}
	// The first pairs do not depend on how many are asked for.
	d, _ := Generate(GenerateSpec{Pairs: 10, Seed: 7})
	jd, _ := dataset.MarshalScenarios(d)
	if !bytes.HasPrefix(ja, jd) {
		t.Fatal("the first 10 pairs changed when 50 were asked for")
	}
}

func TestTwoHundredGeneratedPairsValidate(t *testing.T) {
	scs, err := Generate(GenerateSpec{Pairs: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	d := &dataset.Dataset{File: "generated", Scenarios: scs}
	for _, v := range dataset.Validate(d) {
		t.Error(v)
	}
	st := dataset.ComputeStats(d)
	if st.Conditions[protocol.Explicit] != 200 || st.Conditions[protocol.Implicit] != 200 {
		t.Errorf("conditions %v", st.Conditions)
	}
	for _, p := range protocol.TPositions {
		if n := st.TPositions[p]; n < 132 || n > 134 {
			t.Errorf("T position %s: %d of 400, want a third", p, n)
		}
	}
	if st.SpeakerSets[3] == 0 || st.SpeakerSets[4] == 0 {
		t.Errorf("speaker sets %v: want both 3 and 4", st.SpeakerSets)
	}
	for _, l := range protocol.Labels {
		if st.Labels[l] == 0 {
			t.Errorf("no %s turns in 200 pairs", l)
		}
	}
	if st.N2Addressee[protocol.AddresseeHuman] == 0 || st.N2Addressee[protocol.AddresseeDevice] == 0 {
		t.Errorf("N2 addressees %v", st.N2Addressee)
	}
	if st.N4ByAsker == 0 || st.N4ByOther == 0 {
		t.Errorf("N4 resolved by asker %d, by others %d", st.N4ByAsker, st.N4ByOther)
	}
}

func TestLowerFirstKeepsNames(t *testing.T) {
	for in, want := range map[string]string{
		"Marcus, can you help?": "Marcus, can you help?",
		"Aria's right.":         "Aria's right.",
		"What time is it?":      "what time is it?",
		"I think so.":           "I think so.",
	} {
		if got := lowerFirst(in); got != want {
			t.Errorf("lowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}

// The paper's size: 2,000 pairs.
func BenchmarkGenerate2000Pairs(b *testing.B) {
	for b.Loop() {
		if _, err := Generate(GenerateSpec{Pairs: 2000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate2000Pairs(b *testing.B) {
	scs, _ := Generate(GenerateSpec{Pairs: 2000, Seed: 1})
	d := &dataset.Dataset{Scenarios: scs}
	for b.Loop() {
		if vs := dataset.Validate(d); len(vs) != 0 {
			b.Fatal(vs[0])
		}
	}
}

// Properties the validator cannot see: nobody gives the answer after T, Aria is named
// only where the label says she is addressed or mentioned (the implicit version's
// rewritten turn before T refers to "the assistant" instead), and nobody answers their
// own request to another person.
func TestGeneratedConversationsAreCoherent(t *testing.T) {
	scs, _ := Generate(GenerateSpec{Pairs: 300, Seed: 21})
	for k, s := range scs {
		ti := s.TIndex()
		for i, tu := range s.Turns {
			if i > ti && strings.Contains(tu.Text, s.GoldAnswer) {
				t.Errorf("%s turn %d gives away the answer %q after T: %q", s.ScenarioID, i, s.GoldAnswer, tu.Text)
			}
			named := dataset.NamesAria(tu.Text)
			switch tu.Label {
			case protocol.LabelN2, protocol.LabelN3, protocol.LabelN4R:
				if named {
					t.Errorf("%s turn %d (%s) names Aria: %q", s.ScenarioID, i, tu.Label, tu.Text)
				}
			case protocol.LabelN1, protocol.LabelN4Q:
				rewritten := s.Condition == protocol.Implicit && i == ti-1 && k > 0 && scs[k-1].Turns[i].Text != tu.Text
				if named == rewritten {
					t.Errorf("%s turn %d (%s): names Aria = %v: %q", s.ScenarioID, i, tu.Label, named, tu.Text)
				}
			}
			if i > 0 && s.Turns[i-1].Speaker == tu.Speaker && tu.Label == protocol.LabelN2 && s.Turns[i-1].Label == protocol.LabelN2 &&
				tu.Addressee == protocol.AddresseeHuman && strings.HasSuffix(s.Turns[i-1].Text, "?") {
				t.Errorf("%s turn %d: %s answers their own question", s.ScenarioID, i, tu.Speaker)
			}
		}
	}
}

// The implicit T is not cued by a mention of Aria's name in the turn right before it.
func TestNoNameRightBeforeImplicitT(t *testing.T) {
	scs, _ := Generate(GenerateSpec{Pairs: 300, Seed: 5})
	for _, s := range scs {
		if ti := s.TIndex(); s.Condition == protocol.Implicit && dataset.NamesAria(s.Turns[ti-1].Text) {
			t.Errorf("%s: turn before the implicit T names Aria: %q", s.ScenarioID, s.Turns[ti-1].Text)
		}
	}
}
