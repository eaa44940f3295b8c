package lexical

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// Meaning by answer type (issue 28). The content match (MatchAnswer) finds the gold's
// words; these rules read what the response says with them, by the kind of answer the gold
// is (sdk.AnswerTypes; inferred from the gold when the scenario states none):
//
//   - a reply that reads back the request, or two or more turns of the conversation
//     before it, does not answer with what it reads back (stripRead);
//   - a negated mention ("not 55 minutes") is no answer (negate);
//   - yes/no: the reply's polarity is the gold's ("No, it won't fit" is not "yes");
//   - duration: every stated duration is read whole, by its units and compound parts, and
//     one of them must equal the gold's ("an hour and 20 minutes" is not "20 minutes",
//     "half a minute" is not 90 seconds, "two days" is not two weeks); "13:40" is 13 min
//     40 s, never a time of day;
//   - money: every stated sum is read with its scale and currency ("forty dollars" is not
//     $0.40, "seventy pence" is not £1.70);
//   - clock time: a whole hour is not "one thirty", and a stated am/pm (or 24-hour time)
//     must agree with the gold's when the gold states one;
//   - number: a stated unit of the gold's dimension must be the gold's ("120 miles" is not
//     120 km).

// NegationWords turn the content after them into what the answer is not ("not 55",
// "it isn't nine dollars"); in a yes/no answer they make the reply a "no".
var NegationWords = []string{
	"not", "never", "cannot", "cant", "wont", "dont", "doesnt", "didnt", "isnt", "arent",
	"wasnt", "werent", "wouldnt", "couldnt", "shouldnt", "havent", "hasnt", "hadnt", "aint",
	"mustnt", "neednt",
}

// YesWords and NoWords say a yes/no answer's polarity at once; the first polarity word
// (these, or a NegationWord) of a reply is its polarity.
var (
	YesWords = []string{"yes", "yeah", "yep", "yup", "sure", "definitely", "absolutely", "certainly", "affirmative", "correct"}
	NoWords  = []string{"no", "nope", "nah", "negative"}
)

// DurationUnits are the units of a duration in seconds; months and years count in
// months (MonthUnits), which have no fixed number of seconds.
var DurationUnits = map[string]float64{
	"second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3600, "hr": 3600,
	"day": 86400, "night": 86400, "week": 7 * 86400, "fortnight": 14 * 86400,
}

// MonthUnits are the calendar units of a duration, in months.
var MonthUnits = map[string]float64{"month": 1, "year": 12, "decade": 120}

// CurrencyMajor maps a major currency unit to its currency; CurrencyMinor a minor unit
// (a hundredth) to the currencies it belongs to.
var (
	CurrencyMajor = map[string]string{"dollar": "dollar", "buck": "dollar", "euro": "euro", "pound": "pound", "quid": "pound"}
	CurrencyMinor = map[string][]string{"cent": {"dollar", "euro"}, "penny": {"pound"}, "pence": {"pound"}, "p": {"pound"}}
)

// MeasureUnits group the units of a number by dimension: a response that states a unit of
// the gold's dimension must state the gold's own (or a synonym, same group value).
var MeasureUnits = map[string]string{
	"mile": "length:mile", "kilometer": "length:km", "kilometre": "length:km", "km": "length:km",
	"meter": "length:m", "metre": "length:m", "centimeter": "length:cm", "centimetre": "length:cm",
	"cm": "length:cm", "inch": "length:inch", "foot": "length:foot", "feet": "length:foot", "yard": "length:yard",
	"kilo": "mass:kg", "kilogram": "mass:kg", "kg": "mass:kg", "gram": "mass:g", "lb": "mass:lb",
	"ounce": "mass:oz", "oz": "mass:oz", "stone": "mass:stone", "ton": "mass:ton", "tonne": "mass:tonne",
	"liter": "volume:l", "litre": "volume:l", "milliliter": "volume:ml", "millilitre": "volume:ml",
	"ml": "volume:ml", "gallon": "volume:gallon", "pint": "volume:pint", "cup": "volume:cup",
	"celsius": "temperature:c", "fahrenheit": "temperature:f", "percent": "ratio:percent",
}

// halfOfDay markers: what says a time is in the morning or the afternoon.
var (
	amWords = map[string]bool{"am": true, "morning": true}
	pmWords = map[string]bool{"pm": true, "afternoon": true, "evening": true, "tonight": true}
)

var (
	negationWords = set(NegationWords)
	yesWords      = set(YesWords)
	noWords       = set(NoWords)
	monthNames    = set([]string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"})
)

// InferType is the answer type of a gold answer and its accepted variants when the
// scenario states none, in this order: yes_no when the gold opens with yes or no; money
// when the gold or a variant names a currency; clock_time when the gold says am/pm,
// o'clock, noon or midnight, or is a time H:MM and no variant names a unit of time;
// duration when the gold or a variant puts a unit of time after a number (so "13:40"
// with the variant "13 minutes 40 seconds" is a duration); date when the gold names a
// month or an ordinal; number when the gold holds a number; text otherwise.
func InferType(gold string, accepted []string) string {
	g := Normalize(gold)
	forms := [][]string{g}
	for _, a := range accepted {
		forms = append(forms, Normalize(a))
	}
	any := func(pred func(toks []string, i int) bool, all bool) bool {
		fs := forms
		if !all {
			fs = forms[:1]
		}
		for _, f := range fs {
			for i := range f {
				if pred(f, i) {
					return true
				}
			}
		}
		return false
	}
	if len(g) > 0 && (yesWords[g[0]] || noWords[g[0]]) {
		return sdk.AnswerYesNo
	}
	if any(func(t []string, i int) bool {
		_, major := CurrencyMajor[t[i]]
		_, minor := CurrencyMinor[t[i]]
		return major || (minor && t[i] != "p")
	}, true) {
		return sdk.AnswerMoney
	}
	timeUnit := any(func(t []string, i int) bool {
		return i > 0 && isDurationUnit(t[i]) && (isNumber(t[i-1]) || t[i-1] == "a" || t[i-1] == "an")
	}, true)
	if any(func(t []string, i int) bool {
		return amWords[t[i]] && t[i] != "morning" || t[i] == "pm" || t[i] == "noon" || t[i] == "midnight" || t[i] == "oclock"
	}, false) {
		return sdk.AnswerClock
	}
	if !timeUnit && any(func(t []string, i int) bool { _, _, ok := clock(t[i]); return ok }, false) {
		return sdk.AnswerClock
	}
	if timeUnit {
		return sdk.AnswerDuration
	}
	if any(func(t []string, i int) bool {
		return monthNames[t[i]] || (isNumber(t[i]) && strings.HasSuffix(t[i], "th"))
	}, false) {
		return sdk.AnswerDate
	}
	if any(func(t []string, i int) bool { return isNumber(t[i]) }, false) {
		return sdk.AnswerNumber
	}
	return sdk.AnswerText
}

func isDurationUnit(w string) bool {
	_, a := DurationUnits[w]
	_, b := MonthUnits[w]
	return a || b
}

// typeOf is the type a query is judged by: its own when it is one of sdk.AnswerTypes,
// else the inferred one.
func typeOf(q sdk.AnswerQuery) string {
	if slices.Contains(sdk.AnswerTypes, q.AnswerType) {
		return q.AnswerType
	}
	return InferType(q.GoldAnswer, q.GoldAccepted)
}

// gone marks a response token that is not part of the answer: read back from the
// conversation, or negated. It is no number, unit or word of any gold.
const gone = "\x00"

// minEcho is the shortest run of words that counts as reading a turn back.
const minEcho = 3

// stripRead blanks the response tokens that read back the request (every run of at least
// minEcho tokens the request has too), and, when the response reads back two or more
// turns of the conversation before it (each at least half covered by such runs), the
// tokens read back from any of them. Reading one earlier turn back stays an answer: a
// question about what someone said is answered in their words.
func stripRead(resp []string, request string, context []sdk.DialogueTurn) []string {
	out := slices.Clone(resp)
	prim := make([]string, len(resp))
	for i, t := range resp {
		prim[i] = primary(t)
	}
	for _, i := range echoed(prim, Normalize(request)) {
		out[i] = gone
	}
	var hits [][]int
	for _, c := range context {
		turn := Normalize(c.Text)
		cov := echoed(prim, turn)
		if len(turn) >= minEcho && 2*len(coveredOf(prim, turn)) >= len(turn) {
			hits = append(hits, cov)
		}
	}
	if len(hits) >= 2 {
		for _, c := range context {
			for _, i := range echoed(prim, Normalize(c.Text)) {
				out[i] = gone
			}
		}
	}
	return out
}

// echoed are the positions of resp inside a common run of at least minEcho tokens with src.
func echoed(resp, src []string) []int {
	mark := make([]bool, len(resp))
	for i := range resp {
		for j := range src {
			n := 0
			for i+n < len(resp) && j+n < len(src) && resp[i+n] == src[j+n] {
				n++
			}
			if n >= minEcho {
				for k := i; k < i+n; k++ {
					mark[k] = true
				}
			}
		}
	}
	var out []int
	for i, m := range mark {
		if m {
			out = append(out, i)
		}
	}
	return out
}

// coveredOf are the positions of src inside a common run of at least minEcho tokens with resp.
func coveredOf(resp, src []string) []int { return echoed(src, resp) }

// negate blanks what a negation word denies: after the negation word (and any function
// words), the next token, and when it is a number the whole quantity (numbers, units,
// "and") that follows.
func negate(toks []string) []string {
	out := slices.Clone(toks)
	for i := 0; i < len(out); i++ {
		if !negationWords[primary(out[i])] {
			continue
		}
		j := i + 1
		for j < len(out) && functionWords[primary(out[j])] {
			j++
		}
		if j >= len(out) {
			break
		}
		quantity := isNumber(primary(out[j]))
		out[j] = gone
		for j++; quantity && j < len(out); j++ {
			p := primary(out[j])
			if !(isNumber(p) || unitWords[p] || isDurationUnit(p) || p == "and" || p == "a" || p == "half") {
				break
			}
			out[j] = gone
		}
		i = j - 1
	}
	return out
}

// polarity of a yes/no reply: +1 (yes), -1 (no), 0 (says neither), or 2 (says both "yes"
// and "no" outright: no answer).
func polarity(toks []string) int {
	hasYes, hasNo := false, false
	first := 0
	for _, t := range toks {
		p := primary(t)
		switch {
		case yesWords[p]:
			hasYes = true
			if first == 0 {
				first = 1
			}
		case noWords[p]:
			hasNo = true
			if first == 0 {
				first = -1
			}
		case negationWords[p]:
			if first == 0 {
				first = -1
			}
		}
	}
	if hasYes && hasNo {
		return 2
	}
	return first
}

// quantity is a duration (seconds and calendar months) or a sum of money (hundredths).
type quantity struct {
	sec, mon float64
	currency []string // money: the currencies the unit allows
}

func (a quantity) equal(b quantity) bool {
	return math.Abs(a.sec-b.sec) < 1e-6 && math.Abs(a.mon-b.mon) < 1e-6
}

// amountAt reads the amount a unit may follow at toks[i]: a number, "a"/"an" (1), "half
// a"/"half an" (0.5). n is how many tokens it took (0: none).
func amountAt(toks []string, i int) (v float64, n int) {
	p := primary(toks[i])
	switch {
	case isNumber(p) && !strings.HasSuffix(p, "th") && !strings.Contains(p, ":"):
		f, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return 0, 0
		}
		return f, 1
	case p == "a" || p == "an":
		return 1, 1
	case p == "half" && i+1 < len(toks) && (primary(toks[i+1]) == "a" || primary(toks[i+1]) == "an"):
		return 0.5, 2
	}
	return 0, 0
}

// durationUnit is the size of a unit of time: seconds, or months.
func durationUnit(w string) (sec, mon float64, ok bool) {
	if s, ok := DurationUnits[w]; ok {
		return s, 0, true
	}
	if m, ok := MonthUnits[w]; ok {
		return 0, m, true
	}
	return 0, 0, false
}

// nextSmaller is the unit a bare number after a duration unit counts in: "13 minutes 40"
// is 40 seconds, "one hour thirty-five" 35 minutes.
var nextSmaller = map[string]string{"year": "month", "decade": "year", "week": "day", "fortnight": "day", "day": "hour", "night": "hour", "hour": "minute", "hr": "minute", "minute": "second", "min": "second"}

// durations reads every duration a text states, each compound read whole: "an hour and
// 35 minutes" is one duration of 95 minutes, "a minute and a half" 90 seconds, "half a
// minute" 30 seconds, "13 minutes 40" 820 seconds; with clockAsDuration, "13:40" is 13
// minutes 40 seconds.
func durations(toks []string, clockAsDuration bool) []quantity {
	var out []quantity
	for i := 0; i < len(toks); i++ {
		if clockAsDuration {
			if m, s, ok := clock(primary(toks[i])); ok {
				out = append(out, quantity{sec: float64(m*60 + s)})
				continue
			}
		}
		q, end, ok := durationAt(toks, i)
		if !ok {
			continue
		}
		out = append(out, q)
		i = end - 1
	}
	return out
}

// durationAt reads one (possibly compound) duration starting at toks[i]; end is the
// index after it.
func durationAt(toks []string, i int) (q quantity, end int, ok bool) {
	v, n := amountAt(toks, i)
	if n == 0 || i+n >= len(toks) {
		return q, i, false
	}
	unit := primary(toks[i+n])
	s, m, isUnit := durationUnit(unit)
	if !isUnit {
		return q, i, false
	}
	q.sec, q.mon = v*s, v*m
	j := i + n + 1
	last := s + m*1e9 // order of units: months above every unit of seconds
	for j < len(toks) {
		k := j
		if primary(toks[k]) == "and" {
			k++
		}
		if k+1 < len(toks) && primary(toks[k]) == "a" && primary(toks[k+1]) == "half" { // "a minute and a half"
			q.sec += 0.5 * s
			q.mon += 0.5 * m
			j = k + 2
			continue
		}
		if k >= len(toks) {
			break
		}
		v2, n2 := amountAt(toks, k)
		if n2 == 0 {
			break
		}
		if k+n2 < len(toks) {
			if s2, m2, ok2 := durationUnit(primary(toks[k+n2])); ok2 {
				if s2+m2*1e9 >= last {
					break // not a smaller part: a new duration
				}
				q.sec += v2 * s2
				q.mon += v2 * m2
				last, s, m, unit = s2+m2*1e9, s2, m2, primary(toks[k+n2])
				j = k + n2 + 1
				continue
			}
		}
		// a bare number after a unit counts in the next smaller unit
		small, ok := nextSmaller[unit]
		if !ok || n2 != 1 || !isNumber(primary(toks[k])) || (k+1 < len(toks) && unitWords[primary(toks[k+1])]) {
			break
		}
		s2, m2, _ := durationUnit(small)
		q.sec += v2 * s2
		q.mon += v2 * m2
		last, s, m, unit = s2+m2*1e9, s2, m2, small
		j = k + 1
	}
	return q, j, true
}

// sums reads every sum of money a text states, in hundredths: "0.4 dollar" (from $0.40)
// 40, "40 cent" 40, "a pound 70" 170, "70 pence" 70.
func sums(toks []string) []quantity {
	var out []quantity
	for i := 0; i < len(toks); i++ {
		v, n := amountAt(toks, i)
		if n == 0 || i+n >= len(toks) {
			continue
		}
		u := primary(toks[i+n])
		if cur, ok := CurrencyMajor[u]; ok {
			q := quantity{sec: v * 100, currency: []string{cur}}
			j := i + n + 1
			k := j
			if k < len(toks) && primary(toks[k]) == "and" {
				k++
			}
			if k < len(toks) {
				if c, ok := intToken(toks[k]); ok && c > 0 && c < 100 && v == math.Trunc(v) {
					q.sec += float64(c)
					j = k + 1
					if j < len(toks) {
						if _, minor := CurrencyMinor[primary(toks[j])]; minor {
							j++
						}
					}
				}
			}
			out = append(out, q)
			i = j - 1
			continue
		}
		if curs, ok := CurrencyMinor[u]; ok {
			out = append(out, quantity{sec: v, currency: curs})
			i += n
		}
	}
	return out
}

// goldQuantity is the quantity the gold states, or else the first its variants state.
func goldQuantity(read func([]string) []quantity, gold string, accepted []string) (quantity, bool) {
	for _, f := range append([]string{gold}, accepted...) {
		if qs := read(Normalize(f)); len(qs) > 0 {
			return qs[0], true
		}
	}
	return quantity{}, false
}

// halves are the halves of the day a text names: am, pm (markers, or a 24-hour time).
func halves(toks []string) (am, pm bool) {
	for i, t := range toks {
		p := primary(t)
		switch {
		case amWords[p]:
			am = true
		case pmWords[p]:
			pm = true
		case p == "night" && i > 0 && primary(toks[i-1]) == "at":
			pm = true
		}
		if h, _, ok := clock(p); ok {
			if h >= 13 && h <= 23 {
				pm = true
			} else if h == 0 {
				am = true
			}
		}
	}
	return am, pm
}

// measures are the MeasureUnits a text puts after a number.
func measures(toks []string) []string {
	var out []string
	for i := 1; i < len(toks); i++ {
		if u, ok := MeasureUnits[primary(toks[i])]; ok && isNumber(primary(toks[i-1])) {
			out = append(out, u)
		}
	}
	return out
}

func dimension(u string) string { return u[:strings.IndexByte(u, ':')] }
