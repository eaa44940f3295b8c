package lexical

import (
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// Without answer_type, the type comes from the gold and its variants (open v1's forms).
func TestInferType(t *testing.T) {
	cases := []struct {
		gold     string
		accepted []string
		want     string
	}{
		{"yes", []string{"it will fit"}, sdk.AnswerYesNo},
		{"No, it won't", nil, sdk.AnswerYesNo},
		{"$0.40", []string{"forty cents"}, sdk.AnswerMoney},
		{"£1.70", nil, sdk.AnswerMoney},
		{"13:40", []string{"13 minutes 40 seconds"}, sdk.AnswerDuration},
		{"14", []string{"fourteen nights", "two weeks"}, sdk.AnswerDuration},
		{"60 minutes", []string{"an hour"}, sdk.AnswerDuration},
		{"1:00 am", []string{"one in the morning"}, sdk.AnswerClock},
		{"5:18", []string{"eighteen minutes past five", "5:18 pm"}, sdk.AnswerClock},
		{"7:15", nil, sdk.AnswerClock},
		{"1.5 cm", []string{"1.5 centimetres per day"}, sdk.AnswerNumber},
		{"30 to 1", nil, sdk.AnswerNumber},
		{"21st", nil, sdk.AnswerDate},
		{"March 3", nil, sdk.AnswerDate},
		{"Omar", nil, sdk.AnswerText},
	}
	for _, c := range cases {
		if got := InferType(c.gold, c.accepted); got != c.want {
			t.Errorf("InferType(%q, %q) = %s, want %s", c.gold, c.accepted, got, c.want)
		}
	}
}

// The scenario's answer_type decides how "13:40" reads: a time of day is answered by
// "one forty" (twenty to two in the afternoon), a duration of 13 min 40 s is not.
func TestAnswerTypeDecides(t *testing.T) {
	q := sdk.AnswerQuery{GoldAnswer: "13:40", Response: "one forty", AnswerType: sdk.AnswerClock}
	if d := Decide(q); !d.Correct || d.Type != sdk.AnswerClock {
		t.Errorf("clock time: %+v", d)
	}
	q.AnswerType = sdk.AnswerDuration
	if d := Decide(q); d.Correct {
		t.Errorf("duration: %+v", d)
	}
	q.Response = "thirteen minutes and forty seconds"
	if d := Decide(q); !d.Correct || d.Rule != "duration" {
		t.Errorf("duration said in units: %+v", d)
	}
	q.AnswerType = "colour" // a type this judge does not know: inferred instead
	if d := Decide(q); d.Type != sdk.AnswerClock {
		t.Errorf("unknown type: judged as %s", d.Type)
	}
}

// Meaning by type: what each rule refuses and what it still accepts.
func TestDecideReadsMeaning(t *testing.T) {
	fits := []string{"yes, it fits", "it will fit"}
	hour35 := []string{"an hour and thirty-five minutes", "ninety-five minutes", "one hour thirty-five"}
	boarding := "Aria, boarding's at four fifty and it's three fifty-five now, how many minutes is that?"
	options := "Aria, is it the red one or the blue one we ordered?"
	ctx := []sdk.DialogueTurn{
		{Speaker: "A", Text: "The code for the gate is four four seven one."},
		{Speaker: "B", Text: "And the alarm takes thirty seconds to arm."},
		{Speaker: "C", Text: "Right, I'll write both down later."},
	}
	cases := []struct {
		gold     string
		accepted []string
		request  string
		response string
		ok       bool
	}{
		// yes/no polarity
		{"yes", fits, "", "No, it won't fit", false},
		{"yes", fits, "", "It won't fit.", false},
		{"yes", fits, "", "Yes and no.", false},
		{"yes", fits, "", "Yes, it will.", true},
		{"yes", fits, "", "It'll fit.", true},
		{"no", []string{"it won't fit"}, "", "No, it's too wide.", true},
		{"no", []string{"it won't fit"}, "", "It fits.", false},
		// durations: units, compounds, halves
		{"60 minutes", []string{"an hour"}, "", "Two hours.", false},
		{"60 minutes", []string{"an hour"}, "", "About an hour.", true},
		{"1 hour 35 minutes", hour35, "", "thirty-five minutes", false},
		{"1 hour 35 minutes", hour35, "", "an hour and 35 minutes", true},
		{"1 hour 35 minutes", hour35, "", "5700 seconds", true},
		{"14", []string{"fourteen nights", "two weeks"}, "", "two days", false},
		{"14", []string{"fourteen nights", "two weeks"}, "", "a fortnight", true},
		{"14 months", []string{"a year and two months"}, "", "two months", false},
		{"14 months", []string{"a year and two months"}, "", "one year and two months", true},
		{"90 seconds", []string{"a minute and a half"}, "", "Half a minute.", false},
		{"90 seconds", []string{"a minute and a half"}, "", "One and a half minutes.", true},
		// money: scale and currency
		{"$0.40", []string{"40 cents"}, "", "Forty dollars.", false},
		{"$0.40", []string{"40 cents"}, "", "forty pence", false},
		{"$0.40", []string{"40 cents"}, "", "Forty cents each.", true},
		{"£1.70", []string{"a pound seventy"}, "", "Seventy pence.", false},
		{"£1.70", []string{"a pound seventy"}, "", "one pound seventy", true},
		{"£1.70", []string{"a pound seventy"}, "", "170 pence", true},
		{"$9.50", nil, "", "nine dollars and fifty pence", false},
		// clock times: whole hours, halves of the day; Whisper's renderings still read
		{"1:00 am", []string{"one in the morning"}, "", "one thirty", false},
		{"1:00 am", []string{"one in the morning"}, "", "1 pm", false},
		{"1:00 am", []string{"one in the morning"}, "", "13:00", false},
		{"1:00 am", []string{"one in the morning"}, "", "At one.", true},
		{"3:30", nil, "", "3.30", true},
		{"3:30", nil, "", "330", true},
		{"5:18", []string{"eighteen minutes past five"}, "", "eighteen seconds past five", false},
		{"5:18", []string{"eighteen minutes past five"}, "", "It's eighteen minutes past five.", true},
		// numbers with units, ratios
		{"120 km", nil, "", "120 miles", false},
		{"1,120 grams", []string{"1.12 kilos"}, "", "1,120 kilograms", false},
		{"1,120 grams", []string{"1.12 kilos"}, "", "about 1.12 kilograms", true},
		{"7 cm", []string{"7 centimetres a week"}, "", "1 centimetre a day", true},
		{"7 cm", []string{"7 centimetres a week"}, "", "7 centimetres a day", false},
		{"30 to 1", nil, "", "30:2", false},
		{"30 to 1", nil, "", "thirty to one", true},
		// negation
		{"55 minutes", nil, "", "Not 55 minutes.", false},
		{"Sarah", nil, "", "Not Tom but Sarah.", true},
		{"Sarah", nil, "", "It isn't Sarah.", false},
		{"Kitchen Lights", nil, "", "It isn't the fifth one, it's Kitchen Lights.", true},
		{"the lamp", []string{"the eight pound lamp"}, "", "Not the eight pound lamp.", false},
		{"glue it and frame it", nil, "", "Not glue it and frame it.", false},
		{"glue it and frame it", nil, "", "Not the box, it's glue it and frame it.", true},
		{"Sarah", nil, "", "Not Tom, it was Sarah.", true},
		{"one sky piece and the door", nil, "", "Not one sky piece and the door.", false},
		{"the lamp", []string{"the eight pound lamp"}, "", "Not the chair, it's the eight pound lamp.", true},
		{"55 minutes", nil, "", "Not 55 minutes but an hour.", false},
		// reading back the request or the conversation
		{"55 minutes", []string{"fifty-five"}, boarding, "Boarding's at four fifty and it's three fifty-five now, how many minutes is that?", false},
		{"55 minutes", []string{"fifty-five"}, boarding, "Boarding's at four fifty and it's three fifty-five now, so fifty-five minutes.", true},
		{"the blue one", nil, options, "The blue one.", true},
		{"the blue one", nil, options, "Is it the red one or the blue one we ordered?", false},
		{"4471", []string{"four four seven one"}, "", "The code for the gate is four four seven one.", true},
		{"4471", []string{"four four seven one"}, "", "The code for the gate is four four seven one. And the alarm takes thirty seconds to arm.", false},
	}
	for _, c := range cases {
		q := sdk.AnswerQuery{GoldAnswer: c.gold, GoldAccepted: c.accepted, Request: c.request, Response: c.response}
		if c.gold == "4471" {
			q.Context = ctx
		}
		if d := Decide(q); d.Correct != c.ok {
			t.Errorf("gold %q, response %q: correct = %v (%s, rule %q: %s), want %v", c.gold, c.response, d.Correct, d.Type, d.Rule, d.Why, c.ok)
		}
	}
}

// A number with a unit of time is compared as a duration even when the scenario types it
// number: "40 weeks" is not "forty days", and a bare "forty" still answers it.
func TestNumberWithTimeUnit(t *testing.T) {
	for _, c := range []struct {
		response string
		ok       bool
	}{{"Forty days.", false}, {"40 seconds", false}, {"Forty weeks.", true}, {"Forty.", true}, {"About nine months and a bit, forty weeks.", true}} {
		d := Decide(sdk.AnswerQuery{GoldAnswer: "40 weeks", GoldAccepted: []string{"forty weeks"}, Response: c.response, AnswerType: sdk.AnswerNumber})
		if d.Correct != c.ok {
			t.Errorf("response %q: correct = %v (rule %q: %s), want %v", c.response, d.Correct, d.Rule, d.Why, c.ok)
		}
	}
}

// A gold that denies something (answer type text, name or yes/no) is answered by a
// response that denies it too, and not by one that says it.
func TestGoldThatDenies(t *testing.T) {
	for _, c := range []struct {
		typ, gold, response string
		accepted            []string
		ok                  bool
	}{
		{sdk.AnswerText, "leave it with Mrs Dunn, not under the mat", "Leave it with Mrs Dunn, not under the mat.", nil, true},
		{sdk.AnswerText, "leave it with Mrs Dunn, not under the mat", "Under the mat, not with Mrs Dunn.", nil, false},
		{sdk.AnswerText, "don't use dryer two, the drum's cracked", "Don't use dryer two, the drum's cracked.", nil, true},
		{sdk.AnswerText, "don't use dryer two, the drum's cracked", "Use dryer two.", nil, false},
		{sdk.AnswerName, "trainers", "Don't put trainers in it.", []string{"don't put trainers in it"}, true},
		{sdk.AnswerName, "trainers", "Not trainers.", []string{"don't put trainers in it"}, false},
		{sdk.AnswerYesNo, "yes, the blue one has no nuts", "Yes, the blue one has no nuts.", nil, true},
		{sdk.AnswerYesNo, "yes, the blue one has no nuts", "No, the blue one has nuts.", nil, false},
	} {
		d := Decide(sdk.AnswerQuery{GoldAnswer: c.gold, GoldAccepted: c.accepted, Response: c.response, AnswerType: c.typ})
		if d.Correct != c.ok {
			t.Errorf("%s gold %q, response %q: correct = %v (rule %q: %s), want %v", c.typ, c.gold, c.response, d.Correct, d.Rule, d.Why, c.ok)
		}
	}
}

// A number's unit must agree with the gold's: a weight in pounds is not a sum of dollars.
func TestNumberUnitAgrees(t *testing.T) {
	for _, c := range []struct {
		response string
		ok       bool
	}{{"35.3 dollars", false}, {"About 35.3 pounds.", true}, {"35.3 lb", true}, {"Thirty-five point three.", true}, {"35.3 kilos", false}, {"35.3 pence", false}, {"thirty-five point three cents", false}} {
		d := Decide(sdk.AnswerQuery{GoldAnswer: "35.3 pounds", GoldAccepted: []string{"thirty-five point three pounds"}, Response: c.response, AnswerType: sdk.AnswerNumber})
		if d.Correct != c.ok {
			t.Errorf("response %q: correct = %v (rule %q: %s), want %v", c.response, d.Correct, d.Rule, d.Why, c.ok)
		}
	}
}

// A code is read character by character and in order (answer_type code): a letter is
// never a function word, and the same characters in another order are another code.
func TestCodeIsReadInOrder(t *testing.T) {
	for _, c := range []struct {
		gold     string
		accepted []string
		response string
		ok       bool
	}{
		{"B7K2", []string{"B seven K two"}, "It's B seven K two.", true},
		{"B7K2", []string{"B seven K two"}, "The reference is B7K2.", true},
		{"B7K2", []string{"B seven K two"}, "K seven B two.", false},
		{"B7K2", []string{"B seven K two"}, "seven K two", false},
		{"A7", nil, "Seven.", false},
		{"A7", nil, "A seven.", true},
		{"4471", []string{"four four seven one"}, "Four seven four one.", false},
		{"4118", []string{"forty-one eighteen"}, "Forty-one eighteen.", true},
		{"4118", []string{"forty-one eighteen"}, "Eighteen forty-one.", false},
		{"4471", []string{"four four seven one"}, "Four four seven one.", true},
	} {
		d := Decide(sdk.AnswerQuery{GoldAnswer: c.gold, GoldAccepted: c.accepted, Response: c.response, AnswerType: sdk.AnswerCode})
		if d.Correct != c.ok {
			t.Errorf("code %q, response %q: correct = %v (rule %q: %s), want %v", c.gold, c.response, d.Correct, d.Rule, d.Why, c.ok)
		}
	}
}

// Decide never panics, whatever the response and gold.
func FuzzDecide(f *testing.F) {
	f.Add("1 hour 35 minutes", "an hour and a half and", "not a", "duration")
	f.Add("$0.40", "a pound and 70 pence a", "half a", "money")
	f.Add("yes", "no not never yes", "it", "")
	f.Add("30 to 1", "30:", "3:", "number")
	f.Add("1:00 am", "eighteen minutes past", "twenty to", "clock_time")
	f.Fuzz(func(t *testing.T, gold, response, request, typ string) {
		Decide(sdk.AnswerQuery{GoldAnswer: gold, GoldAccepted: []string{response, request}, Request: request, Response: response, AnswerType: typ,
			Context: []sdk.DialogueTurn{{Text: request}, {Text: response}}})
	})
}

// What ASR makes of a correct spoken answer (measured by the oracle through Whisper
// tiny.en on open v2's dev split) is correct: a code cut into other words, a closed
// compound, a date's day as a cardinal beside its month. What only looks like them is
// still refused.
func TestASRShapesOfACorrectAnswer(t *testing.T) {
	cases := []struct {
		typ, gold, response string
		want                bool
	}{
		{sdk.AnswerCode, "AMP411", "It's AM P4-11.", true},
		{sdk.AnswerCode, "3194", "It's 3-194.", true},
		{sdk.AnswerCode, "SR942", "It's S R 9 4 2.", true},
		{sdk.AnswerCode, "AMP411", "It's AM P4-12.", false},
		{sdk.AnswerCode, "AMP411", "It's 411 AMP.", false},
		{sdk.AnswerCode, "AMP411", "I am, 4-11 P.", false},
		{sdk.AnswerCode, "3194", "3-19, then 4.", false},
		{sdk.AnswerText, "one sky piece and the lighthouse door", "one skypiece and the lighthouse door.", true},
		{sdk.AnswerText, "the skypiece", "It's the sky piece.", true},
		{sdk.AnswerText, "one sky piece and the lighthouse door", "one skyline and the lighthouse door.", false},
		{sdk.AnswerText, "one sky piece and the lighthouse door", "one sea piece and the lighthouse door.", false},
		{sdk.AnswerDate, "March 25th", "On 25 March.", true},
		{sdk.AnswerDate, "March 25th", "It's March 25.", true},
		{sdk.AnswerDate, "March 25th", "The 25 of March.", true},
		{sdk.AnswerDate, "March 25th", "On 24 March.", false},
		{sdk.AnswerDate, "March 25th", "25 days after March.", false},
	}
	for _, c := range cases {
		d := Decide(sdk.AnswerQuery{GoldAnswer: c.gold, Response: c.response, AnswerType: c.typ})
		if d.Correct != c.want {
			t.Errorf("%s %q answered by %q: correct %v (%s), want %v", c.typ, c.gold, c.response, d.Correct, d.Why, c.want)
		}
	}
	// As open v2 states ov2-0855's code, with forms read letter by letter ("a m p 4 11",
	// which "AM P4-11" holds with "am" the compound of "a m").
	q := sdk.AnswerQuery{GoldAnswer: "AMP411", GoldAccepted: []string{"A M P four one one", "A M P four eleven", "capital A M P four one one"},
		Response: "It's AM P4-11.", AnswerType: sdk.AnswerCode}
	if d := Decide(q); !d.Correct || len(d.Missing) > 0 {
		t.Errorf("ov2-0855 heard as %q: %+v", q.Response, d)
	}
	q.Response = "It's AM P4-12."
	if d := Decide(q); d.Correct {
		t.Errorf("ov2-0855 answered %q: %+v", q.Response, d)
	}
}
