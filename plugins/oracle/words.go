package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/plugins/lexical-judge/lexical"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// The wording of an answer, per answer type. The gold answer is written for reading
// ("£14.50", "4:50", "SR942", "80.01 centimetres"); said alone, as written, the chain
// hears it wrong: the VAD cuts the first and last tens of milliseconds of the answer (no
// speech pad), and Whisper tiny.en, given a word or a figure alone, writes "silly" for
// Tilly, "80.0, 1 cm" for 80.01, "." for £14.50, "This is our 942" for S, R, 9, 4, 2.
// So every answer is one short sentence with a lead-in ("It's ..."), and sums, times and
// days are said in words. The wording of each type was chosen by speaking every dev gold
// in candidate wordings with the oracle's voice, cutting it with Silero VAD as the scorer
// does, transcribing it with Whisper tiny.en as plugins/whisper does and judging it with
// the lexical judge (README.md, "Wording", has the table).

var (
	ones = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
		"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	tens     = []string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
	ordinals = map[string]string{"one": "first", "two": "second", "three": "third", "five": "fifth",
		"eight": "eighth", "nine": "ninth", "twelve": "twelfth"}
)

// numberWords says a whole number from 0 to 999,999,999 without "and", as the US voices
// say numerals (1345 -> "one thousand three hundred forty-five"): Whisper tiny.en wrote
// "two hundred and eighteen" as "280" and "one thousand three hundred and forty-five"
// as "1300 and 45" (README.md, "Wording").
func numberWords(n int) string {
	switch {
	case n < 0:
		return "minus " + numberWords(-n)
	case n < 20:
		return ones[n]
	case n < 100:
		if n%10 == 0 {
			return tens[n/10]
		}
		return tens[n/10] + "-" + ones[n%10]
	case n < 1000:
		h := ones[n/100] + " hundred"
		if n%100 == 0 {
			return h
		}
		return h + " " + numberWords(n%100)
	}
	for _, u := range []struct {
		size int
		name string
	}{{1000000, "million"}, {1000, "thousand"}} {
		if n < u.size {
			continue
		}
		head, rest := numberWords(n/u.size)+" "+u.name, n%u.size
		if rest == 0 {
			return head
		}
		return head + " " + numberWords(rest)
	}
	return strconv.Itoa(n)
}

// ordinalWords says the ordinal of n: 2 -> "second", 25 -> "twenty-fifth".
func ordinalWords(n int) string {
	w := numberWords(n)
	i := strings.LastIndexAny(w, " -") + 1
	head, last := w[:i], w[i:]
	switch {
	case ordinals[last] != "":
		last = ordinals[last]
	case strings.HasSuffix(last, "y"):
		last = strings.TrimSuffix(last, "y") + "ieth"
	default:
		last += "th"
	}
	return head + last
}

// currencies: a currency's sign, its unit and its hundredth, each singular and plural.
var currencies = map[string][4]string{
	"£": {"pound", "pounds", "penny", "pence"},
	"$": {"dollar", "dollars", "cent", "cents"},
	"€": {"euro", "euros", "cent", "cents"},
}

var moneyForm = regexp.MustCompile(`^([£$€])\s?(\d[\d,]*)(?:\.(\d\d))?$`)

// moneyWords says a sum as people say prices: "£14.50" -> "fourteen pounds fifty", "£132"
// -> "one hundred thirty-two pounds", "$5.05" -> "five dollars and five cents", "£0.40" ->
// "forty pence"; ok is false for a gold that is not a sum in one of the signs.
func moneyWords(g string) (string, bool) {
	m := moneyForm.FindStringSubmatch(strings.TrimSpace(g))
	if m == nil {
		return "", false
	}
	c := currencies[m[1]]
	major, err := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
	if err != nil {
		return "", false
	}
	minor := 0
	if m[3] != "" {
		minor, _ = strconv.Atoi(m[3])
	}
	plural := func(n int, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	}
	switch {
	case minor == 0:
		return numberWords(major) + " " + plural(major, c[0], c[1]), true
	case major == 0:
		return numberWords(minor) + " " + plural(minor, c[2], c[3]), true
	case minor < 10: // "five dollars five" could be $5.50
		return fmt.Sprintf("%s %s and %s %s", numberWords(major), plural(major, c[0], c[1]), numberWords(minor), plural(minor, c[2], c[3])), true
	}
	return fmt.Sprintf("%s %s %s", numberWords(major), plural(major, c[0], c[1]), numberWords(minor)), true
}

var clockForm = regexp.MustCompile(`(?i)^(\d{1,2}):(\d\d)\s*(?:([ap])\.?\s?m\.?)?$`)

// clockWords says a time of day as digital clocks are read: "4:50" -> "four fifty",
// "7:05" -> "seven oh five", "9:00" -> "nine o'clock", "3:10 pm" -> "three ten p.m.".
func clockWords(g string) (string, bool) {
	m := clockForm.FindStringSubmatch(strings.TrimSpace(g))
	if m == nil {
		return "", false
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	if h > 23 || mi > 59 {
		return "", false
	}
	var out string
	switch {
	case mi == 0:
		out = numberWords(h) + " o'clock"
	case mi < 10:
		out = numberWords(h) + " oh " + numberWords(mi)
	default:
		out = numberWords(h) + " " + numberWords(mi)
	}
	if m[3] != "" {
		out += " " + strings.ToLower(m[3]) + ".m."
	}
	return out, true
}

var weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

var months = []string{"January", "February", "March", "April", "May", "June", "July", "August",
	"September", "October", "November", "December"}

var (
	dateMonthDay = regexp.MustCompile(`(?i)^(?:the\s+)?([a-z]+)\s+(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?$`)
	dateDayMonth = regexp.MustCompile(`(?i)^(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+([a-z]+)$`)
	dateDay      = regexp.MustCompile(`(?i)^(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)$`)
)

// dateWords says a day as "the twenty-fifth of March" ("March 25th", "25 March", "the
// 25th"), or a weekday's as "Monday the seventeenth"; ok is false for any other shape.
func dateWords(g string) (string, bool) {
	g = strings.TrimSpace(g)
	month := func(s string) string {
		for _, m := range months {
			if strings.EqualFold(m, s) || len(s) >= 3 && strings.EqualFold(m[:3], s) {
				return m
			}
		}
		return ""
	}
	day := func(s string) int {
		d, err := strconv.Atoi(s)
		if err != nil || d < 1 || d > 31 {
			return 0
		}
		return d
	}
	if m := dateMonthDay.FindStringSubmatch(g); m != nil && month(m[1]) != "" && day(m[2]) > 0 {
		return "the " + ordinalWords(day(m[2])) + " of " + month(m[1]), true
	}
	if m := dateDayMonth.FindStringSubmatch(g); m != nil && month(m[2]) != "" && day(m[1]) > 0 {
		return "the " + ordinalWords(day(m[1])) + " of " + month(m[2]), true
	}
	if m := dateMonthDay.FindStringSubmatch(g); m != nil && day(m[2]) > 0 {
		for _, w := range weekdays {
			if strings.EqualFold(w, m[1]) {
				return w + " the " + ordinalWords(day(m[2])), true
			}
		}
	}
	if m := dateDay.FindStringSubmatch(g); m != nil && day(m[1]) > 0 {
		return "the " + ordinalWords(day(m[1])), true
	}
	return "", false
}

// codeWords reads a code character by character, letters as capitals, digits as digits:
// "SR942" -> "S, R, 9, 4, 2".
func codeWords(g string) string {
	var parts []string
	for _, r := range g {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			parts = append(parts, string(unicode.ToUpper(r)))
		}
	}
	return strings.Join(parts, ", ")
}

// codeLike is a gold written as a code: letters and digits, no space, at least three.
var codeLike = regexp.MustCompile(`^[A-Z0-9]{3,}$`)

// answerType is the scenario's answer type, or what the judge infers from its gold when
// the scenario states none (a gold like "QMFTRL" is a code).
func answerType(s *dataset.Scenario) string {
	if s.AnswerType != "" {
		return s.AnswerType
	}
	g := strings.TrimSpace(s.GoldAnswer)
	if codeLike.MatchString(g) && strings.IndexFunc(g, unicode.IsLetter) >= 0 {
		return sdk.AnswerCode
	}
	return lexical.InferType(g, s.GoldAccepted)
}

// sentence makes s one sentence: a capital first letter, a full stop unless it ends
// with one.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	if !strings.ContainsRune(".!?", r[len(r)-1]) {
		r = append(r, '.')
	}
	return string(r)
}

// spoken is the gold answer as the oracle says it, by its answer type (the rule is
// stated once, here; README.md has the measurements behind it):
//
//	number      "It's" and the gold as written      "It's 80.01 centimetres."
//	duration    "It's" and the gold as written      "It's 1 hour 35 minutes."
//	money       "It's" and the sum in words         "It's fourteen pounds fifty."
//	clock_time  "It's" and the time in words        "It's four fifty."
//	date        "It's the <ordinal> of <month>"     "It's the second of June."
//	code        "It's" and each character           "It's S, R, 9, 4, 2."
//	name        "It's" and the gold as written      "It's Tilly."
//	text        the gold as written, one sentence   "Only outside the church, never inside."
//	yes_no      the gold as written, one sentence   "No, it makes toxic gas."
//
// A sum, time or day that does not parse as one is said as written, after "It's".
func spoken(s *dataset.Scenario) string {
	g := strings.TrimSpace(s.GoldAnswer)
	its := func(x string) string { return sentence("It's " + x) }
	switch answerType(s) {
	case sdk.AnswerYesNo, sdk.AnswerText:
		return sentence(g)
	case sdk.AnswerCode:
		return its(codeWords(g))
	case sdk.AnswerMoney:
		if w, ok := moneyWords(g); ok {
			return its(w)
		}
	case sdk.AnswerClock:
		if w, ok := clockWords(g); ok {
			return its(w)
		}
	case sdk.AnswerDate:
		if w, ok := dateWords(g); ok {
			return its(w)
		}
	}
	return its(g)
}
