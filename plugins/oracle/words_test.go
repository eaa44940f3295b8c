package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/plugins/lexical-judge/lexical"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Each answer type is said by its rule: after "It's", a number or a duration as
// written, a sum, a time or a day in words, a code character by character; a yes or no
// and a text as written, as one sentence.
func TestSpokenByAnswerType(t *testing.T) {
	for _, c := range []struct{ typ, gold, want string }{
		{sdk.AnswerNumber, "3", "It's 3."},
		{sdk.AnswerNumber, "80.01 centimetres", "It's 80.01 centimetres."},
		{sdk.AnswerNumber, "1,345 metres", "It's 1,345 metres."},
		{sdk.AnswerDuration, "1 hour 35 minutes", "It's 1 hour 35 minutes."},
		{sdk.AnswerMoney, "£14.50", "It's fourteen pounds fifty."},
		{sdk.AnswerMoney, "$27.35", "It's twenty-seven dollars thirty-five."},
		{sdk.AnswerMoney, "$5.05", "It's five dollars and five cents."},
		{sdk.AnswerMoney, "$1.01", "It's one dollar and one cent."},
		{sdk.AnswerMoney, "£132", "It's one hundred thirty-two pounds."},
		{sdk.AnswerMoney, "£1,250", "It's one thousand two hundred fifty pounds."},
		{sdk.AnswerMoney, "€0.40", "It's forty cents."},
		{sdk.AnswerMoney, "about £5", "It's about £5."}, // not a sum alone: as written
		{sdk.AnswerClock, "4:50", "It's four fifty."},
		{sdk.AnswerClock, "7:05", "It's seven oh five."},
		{sdk.AnswerClock, "9:00", "It's nine o'clock."},
		{sdk.AnswerClock, "7:25 pm", "It's seven twenty-five p.m."},
		{sdk.AnswerClock, "11:15 a.m.", "It's eleven fifteen a.m."},
		{sdk.AnswerClock, "noon", "It's noon."},
		{sdk.AnswerDate, "June 2nd", "It's the second of June."},
		{sdk.AnswerDate, "21 April", "It's the twenty-first of April."},
		{sdk.AnswerDate, "the 30th", "It's the thirtieth."},
		{sdk.AnswerDate, "Monday the 17th", "It's Monday the seventeenth."},
		{sdk.AnswerCode, "SR942", "It's S, R, 9, 4, 2."},
		{sdk.AnswerCode, "q7m5", "It's Q, 7, M, 5."},
		{sdk.AnswerName, "Tilly", "It's Tilly."},
		{sdk.AnswerName, "the pasta bake", "It's the pasta bake."},
		{sdk.AnswerText, "only outside the church, never inside", "Only outside the church, never inside."},
		{sdk.AnswerYesNo, "no, it makes toxic gas", "No, it makes toxic gas."},
		// No type stated: the judge's inference, and a code by its shape.
		{"", "QMFTRL", "It's Q, M, F, T, R, L."},
		{"", "£12.80", "It's twelve pounds eighty."},
		{"", "yes", "Yes."},
	} {
		got := spoken(&dataset.Scenario{GoldAnswer: c.gold, AnswerType: c.typ})
		if got != c.want {
			t.Errorf("%s %q is said %q, want %q", c.typ, c.gold, got, c.want)
		}
	}
}

func TestNumberWords(t *testing.T) {
	for n, want := range map[int]string{
		0: "zero", 13: "thirteen", 40: "forty", 88: "eighty-eight", 100: "one hundred",
		398: "three hundred ninety-eight", 1000: "one thousand", 1007: "one thousand seven",
		21345: "twenty-one thousand three hundred forty-five", 2000000: "two million",
	} {
		if got := numberWords(n); got != want {
			t.Errorf("numberWords(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int]string{1: "first", 2: "second", 3: "third", 8: "eighth", 12: "twelfth",
		20: "twentieth", 22: "twenty-second", 25: "twenty-fifth", 31: "thirty-first"} {
		if got := ordinalWords(n); got != want {
			t.Errorf("ordinalWords(%d) = %q, want %q", n, got, want)
		}
	}
}

// Heard perfectly, every wording is still the gold to the judge: for each scenario of
// the repository's dev splits, the lexical judge, asked as the scorer asks
// it (the turns before T, T's text, the gold, its variants and type), accepts the spoken
// text as the answer.
func TestSpokenIsTheGoldToTheJudge(t *testing.T) {
	files, _ := filepath.Glob("../../datasets/open-v*/*/scenarios.jsonl")
	n := 0
	for _, f := range files {
		if filepath.Base(filepath.Dir(f)) != "dev" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			continue
		}
		d, err := dataset.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		for i := range d.Scenarios {
			s := &d.Scenarios[i]
			var ctx []sdk.DialogueTurn
			req := ""
			for _, tu := range s.Turns {
				if tu.Label == "T" {
					req = tu.Text
					break
				}
				ctx = append(ctx, sdk.DialogueTurn{Speaker: tu.Speaker, Text: tu.Text})
			}
			say := spoken(s)
			dec := lexical.Decide(sdk.AnswerQuery{Context: ctx, Request: req, GoldAnswer: s.GoldAnswer,
				GoldAccepted: s.GoldAccepted, AnswerType: s.AnswerType, Response: say})
			if !dec.Correct {
				t.Errorf("%s (%s): %q said as %q is refused: %s", s.ScenarioID, answerType(s), s.GoldAnswer, say, dec.Why)
			}
			n++
		}
	}
	if n == 0 {
		t.Skip("no dev split in datasets/")
	}
	t.Logf("%d scenarios", n)
}
