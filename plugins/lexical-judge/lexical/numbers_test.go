package lexical

import (
	"context"
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// Numbers as people say them and as ASR writes them (issue 22): every form in a row
// answers every gold form of that row, and the pairs of TestNumberFormsStayApart do not.
// The forms marked "whisper" are what Whisper tiny.en wrote for flite speech of the
// spoken form (plugins/whisper/README.md).
var numberForms = []struct {
	name  string
	gold  []string // written as a dataset writes the gold answer
	forms []string // responses that answer it
}{
	{"time 3:30", []string{"3:30", "3:30 pm", "half past three"}, []string{
		"3:30", "3.30", "330", "three thirty", "half past three", "It's at 3:30.",
		"$330",  // whisper, slt voice
		"3 30",  // whisper, kal16 voice
		"15:30", // the same time on a 24-hour clock
		"three thirty p.m.", "at half past 3",
	}},
	{"time 7:15", []string{"7:15", "quarter past seven"}, []string{
		"7:15", "quarter past seven", "a quarter past seven", "seven fifteen", "7.15", "715", "7 15", "19:15",
	}},
	{"time 8:45", []string{"8:45"}, []string{"quarter to nine", "eight forty five", "8.45", "845", "a quarter to 9"}},
	{"time 7:00", []string{"7:00", "7 o'clock"}, []string{"seven", "7 o'clock", "seven o'clock", "7:00", "at 7 pm", "19:00"}},
	{"time 10:05", []string{"10:05"}, []string{"ten oh five", "10:05", "1005", "ten o five"}},
	{"time 12:00", []string{"12:00"}, []string{"noon", "twelve", "12 o'clock", "midnight"}},
	{"money $42", []string{"$42", "42 dollars", "forty-two dollars"}, []string{
		"$42", "forty-two dollars", "42 dollars", "forty two", "it costs 42 bucks", "$42.00",
	}},
	{"money $4.20", []string{"$4.20"}, []string{"$4.20", "four dollars twenty", "four dollars and twenty cents", "4.20", "four twenty", "4 dollars 20"}},
	{"money €9.50", []string{"€9.50"}, []string{"nine euros fifty", "9.50 euros", "nine fifty", "nine point five"}},
	{"ordinal 12th", []string{"12th", "the twelfth"}, []string{"12th", "twelfth", "the 12th of May", "May twelfth"}},
	{"ordinal 2nd", []string{"2nd floor"}, []string{"second floor", "the 2nd floor"}},
	{"ordinal 21st", []string{"21st"}, []string{"twenty first", "21st", "twenty-first"}},
	{"count 3", []string{"3 apples", "three apples"}, []string{"three apples", "3 apples", "three apples and two pears"}},
	{"count 12", []string{"12 eggs"}, []string{"a dozen eggs", "twelve eggs", "12 eggs", "one dozen eggs"}},
	{"count 1500", []string{"1,500"}, []string{"fifteen hundred", "one thousand five hundred", "1500", "1,500"}},
	{"decimal 2.5", []string{"2.5 km", "2.5"}, []string{"two and a half", "two point five kilometres", "2.5", "2.50"}},
	{"percent", []string{"50%"}, []string{"fifty percent", "50 per cent", "50%"}},
	{"year 1984", []string{"1984"}, []string{"nineteen eighty four", "1984", "nineteen eighty-four"}},
}

func TestNumberFormsMatch(t *testing.T) {
	n := 0
	for _, row := range numberForms {
		for _, gold := range row.gold {
			for _, resp := range row.forms {
				n++
				if ok, missing := MatchAnswer(gold, resp); !ok {
					t.Errorf("%s: gold %q, response %q: not matched (missing %q; response reads %q)", row.name, gold, resp, missing, readings(normalize(resp)))
				}
			}
		}
	}
	forms := 0
	for _, row := range numberForms {
		forms += len(row.forms)
	}
	if forms < 60 {
		t.Errorf("the table has %d response forms; the issue asks for at least 60", forms)
	}
	t.Logf("%d forms, %d gold x response pairs", forms, n)
}

// Forms that look alike and mean other things stay unequal.
func TestNumberFormsStayApart(t *testing.T) {
	cases := []struct{ gold, response string }{
		{"3:30", "3:13"},
		{"3:30", "three thirteen"},
		{"3:30", "4:30"},
		{"3:30", "half past two"},
		{"3:30", "three"},
		{"3:30", "13:30"},
		{"3:30", "thirty"},
		{"7:15", "quarter to seven"},
		{"7:15", "seven fifty"},
		{"7:15", "7:50"},
		{"7:45", "quarter past seven"},
		{"fifteen", "fifty"},
		{"15", "fifty"},
		{"13", "thirty"},
		{"$4.20", "$42"},
		{"$42", "$4.20"},
		{"$42", "four twenty"},
		{"$42", "$24"},
		{"$3.30", "$330"},
		{"$9.50", "nine dollars"},
		{"12th", "twelve"},
		{"12th", "11th"},
		{"2nd floor", "two floors"},
		{"2.5", "25"},
		{"2.5", "two"},
		{"1984", "1948"},
		{"1984", "nineteen forty eight"},
		{"330 people", "3:30"},
		{"330 people", "half past three"},
		{"7", "7:00"},
		{"7:00", "17"},
		{"12 eggs", "two dozen"},
		{"1,500", "150"},
		{"50%", "fifteen percent"},
	}
	for _, c := range cases {
		if ok, _ := MatchAnswer(c.gold, c.response); ok {
			t.Errorf("gold %q is answered by %q (response reads %q)", c.gold, c.response, readings(normalize(c.response)))
		}
	}
}

// A gold answer's accepted variants (the scenario's gold_accepted) answer it too.
func TestAcceptedVariants(t *testing.T) {
	ctx := context.Background()
	var j Judge
	q := sdk.AnswerQuery{GoldAnswer: "the blue folder", GoldAccepted: []string{"the navy one", ""}, Response: "It's the navy one."}
	v, err := j.JudgeAnswer(ctx, q)
	if err != nil || v.Label != sdk.LabelCorrect || v.Raw != `{"label":"correct","accepted":"the navy one"}` {
		t.Errorf("accepted variant: %+v, %v", v, err)
	}
	q.GoldAccepted = nil
	if v, _ := j.JudgeAnswer(ctx, q); v.Label != sdk.LabelIncorrect {
		t.Errorf("without the variant: %+v", v)
	}
	q.GoldAccepted = []string{"the navy one", "the dark folder"}
	q.Response = "the red one"
	if v, _ := j.JudgeAnswer(ctx, q); v.Label != sdk.LabelIncorrect || v.Raw != `{"label":"incorrect","missing":["blue","folder"]}` {
		t.Errorf("matching no variant: %+v", v)
	}
	// The gold itself still answers, and reports no variant.
	q.Response = "the blue folder"
	if v, _ := j.JudgeAnswer(ctx, q); v.Label != sdk.LabelCorrect || v.Raw != `{"label":"correct"}` {
		t.Errorf("gold with variants: %+v", v)
	}
}
