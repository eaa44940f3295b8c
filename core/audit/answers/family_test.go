package answers

import (
	"context"
	"slices"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/sdk"
)

func scenario(pair, gold string, accepted ...string) dataset.Scenario {
	return dataset.Scenario{PairID: pair, ScenarioID: pair + "-explicit", Condition: "explicit",
		GoldAnswer: gold, GoldAccepted: accepted,
		Turns: []dataset.Turn{
			{Speaker: "C", Text: "It's a two kilo roast.", Label: "N2"},
			{Speaker: "A", Text: "The roast needs twenty minutes a kilo.", Label: "N2"},
			{Speaker: "B", Text: "Aria, how long does it need altogether?", Label: "T"},
			{Speaker: "C", Text: "Great.", Label: "N3"},
		}}
}

func texts(ws []Wrong, kind string) []string {
	var out []string
	for _, w := range ws {
		if w.Kind == kind {
			out = append(out, w.Text)
		}
	}
	return out
}

// Each kind of wrong answer the issue names, derived from a gold and its variants.
func TestFamily(t *testing.T) {
	s := scenario("p1", "1 hour 50 minutes", "an hour and fifty minutes", "110 minutes")
	f := Family(&s)
	want := map[string][]string{
		KindPlusOne:      {"2 hour 50 minutes", "1 hour 51 minutes", "111 minutes"},
		KindMinusOne:     {"0 hour 50 minutes", "1 hour 49 minutes", "109 minutes"},
		KindTimesTen:     {"1100 minutes"},
		KindDividedByTen: {"11 minutes", "0.1 hour 50 minutes"},
		KindUnitSwapped:  {"1 day 50 minutes", "1 hour 50 seconds", "an hour and fifty days", "a minute and fifty minutes", "110 hours"},
		KindPartAlone:    {"1 hour", "50 minutes", "an hour", "fifty minutes"},
		KindNegated:      {"not 1 hour 50 minutes", "it isn't 110 minutes"},
		KindRequest:      {"Aria, how long does it need altogether?"},
		KindConversation: {"It's a two kilo roast. The roast needs twenty minutes a kilo."},
	}
	for kind, ws := range want {
		got := texts(f, kind)
		for _, w := range ws {
			if !slices.Contains(got, w) {
				t.Errorf("%s: %q not derived; got %q", kind, w, got)
			}
		}
	}
	for _, w := range f {
		if w.Text == s.GoldAnswer || slices.Contains(s.GoldAccepted, w.Text) {
			t.Errorf("the family holds the right answer %q", w.Text)
		}
	}

	money := scenario("p2", "$0.40", "40 cents", "forty cents")
	got := texts(Family(&money), KindUnitSwapped)
	for _, w := range []string{"40 dollars", "forty dollars", "forty pence", "£0.40", "0.40 cents"} {
		if !slices.Contains(got, w) {
			t.Errorf("money: %q not derived; got %q", w, got)
		}
	}
	clock := scenario("p3", "1:00 am", "one in the morning")
	f = Family(&clock)
	for kind, w := range map[string]string{KindUnitSwapped: "1:00 pm", KindPlusOne: "2:00 am", KindMinusOne: "12:00 am"} {
		if !slices.Contains(texts(f, kind), w) {
			t.Errorf("clock: %s %q not derived; got %q", kind, w, texts(f, kind))
		}
	}
	if !slices.Contains(texts(f, KindUnitSwapped), "one in the evening") {
		t.Errorf("clock: am/pm in words not swapped: %q", texts(f, KindUnitSwapped))
	}
	// An amount equal to an accepted form is no wrong answer: 2199 + 1 mm is "about 2.2 metres".
	approx := scenario("p4", "2,199 millimetres", "about 2.2 metres")
	if got := texts(Family(&approx), KindPlusOne); slices.Contains(got, "2200 millimetres") {
		t.Errorf("a slip equal to an accepted form is derived: %q", got)
	}
}

// A code's family holds it reordered; the shipped judge must refuse those (rules-5).
func TestFamilyCode(t *testing.T) {
	code := scenario("p5", "B7K2", "B seven K two")
	code.AnswerType = sdk.AnswerCode
	got := texts(Family(&code), KindReordered)
	if !slices.Equal(got, []string{"7BK2", "2K7B"}) {
		t.Errorf("code: reordered %q, want 7BK2 and 2K7B", got)
	}
	same := scenario("p6", "1111")
	same.AnswerType = sdk.AnswerCode
	if got := texts(Family(&same), KindReordered); len(got) != 0 {
		t.Errorf("a code of one repeated character has no reordering, got %q", got)
	}
}

// A name's variants may carry a number; its slips are no wrong answers (the place is still
// named right). One turn before T read back is a quotation, not the conversation.
func TestFamilyOfANameAndOfOneTurn(t *testing.T) {
	name := scenario("p7", "Pebble Cove", "Pebble Cove, twelve kilometres")
	name.AnswerType = sdk.AnswerName
	for _, w := range Family(&name) {
		if w.Kind == KindUnitSwapped || w.Kind == KindPlusOne || w.Kind == KindPartAlone {
			t.Errorf("a name gold derives %s %q", w.Kind, w.Text)
		}
	}
	if got := texts(Family(&name), KindNegated); !slices.Contains(got, "not Pebble Cove") {
		t.Errorf("a name gold is not negated: %q", got)
	}
	one := scenario("p8", "40 minutes")
	one.Turns = one.Turns[1:]
	if got := texts(Family(&one), KindConversation); len(got) != 0 {
		t.Errorf("one turn before T is read back as the conversation: %q", got)
	}
}

func TestFamilyYesNo(t *testing.T) {
	yes := scenario("p1", "yes", "yes, it fits", "it will fit", "we'll make it")
	if !IsYesNo(&yes) {
		t.Fatal("gold yes is not read as yes/no")
	}
	got := texts(Family(&yes), KindYesNoSwapped)
	for _, w := range []string{"no", "no, it fits", "it doesn't fit", "it won't fit", "no, it won't fit", "we won't make it", "we'll not make it"} {
		if !slices.Contains(got, w) {
			t.Errorf("yes: %q not derived; got %q", w, got)
		}
	}
	no := scenario("p2", "no", "no, it won't fit")
	got = texts(Family(&no), KindYesNoSwapped)
	for _, w := range []string{"yes", "yes, it will fit"} {
		if !slices.Contains(got, w) {
			t.Errorf("no: %q not derived; got %q", w, got)
		}
	}
	typed := scenario("p3", "Yes, Tom")
	typed.AnswerType = sdk.AnswerName
	if IsYesNo(&typed) {
		t.Error("answer_type name read as yes/no")
	}
}

// acceptAll is a judge that takes any answer: the check must catch it in every pair.
type acceptAll struct{}

func (acceptAll) JudgeAnswer(context.Context, sdk.AnswerQuery) (sdk.Verdict, error) {
	return sdk.Verdict{Label: sdk.LabelCorrect, Parsed: true}, nil
}

func TestCheckCountsPairsAndYesNo(t *testing.T) {
	var scs []dataset.Scenario
	for _, s := range []dataset.Scenario{
		scenario("p1", "55 minutes"), scenario("p2", "yes", "it fits"), scenario("p3", "no"), scenario("p4", "Omar"),
	} {
		im := s
		im.ScenarioID, im.Condition = s.PairID+"-implicit", "implicit"
		scs = append(scs, s, im)
	}
	r, err := CheckAnswers(context.Background(), scs, acceptAll{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Pairs != 4 || r.Scenarios != 8 || r.AcceptedPairs != 4 || r.Judged != len(r.Accepted) || r.Judged == 0 {
		t.Errorf("report %+v: want 4 pairs, 8 scenarios, all 4 accepting", r)
	}
	if r.YesNoPairs != 2 || r.Yes != 1 || r.No != 1 || r.YesNoShare != 0.5 {
		t.Errorf("yes/no: %d pairs (%d yes, %d no), share %v; want 2 (1, 1), 0.5", r.YesNoPairs, r.Yes, r.No, r.YesNoShare)
	}
	if ok, why := r.Pass(); ok || len(why) != 2 {
		t.Errorf("Pass() = %v %q; want a failure for the accepted answers and the yes/no share", ok, why)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := CheckAnswers(ctx, scs, acceptAll{}); err == nil {
		t.Error("a cancelled check returned no error")
	}
}
