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
	"cm": "length:cm", "millimeter": "length:mm", "millimetre": "length:mm", "mm": "length:mm", "inch": "length:inch", "foot": "length:foot", "feet": "length:foot", "yard": "length:yard",
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
		_, _, ok := durationAt(t, i)
		return ok && isNumber(t[i]) // "95 minutes", "an hour" (1 hour), not "7 centimetres a week"
	}, true)
	if any(func(t []string, i int) bool {
		return t[i] == "am" || t[i] == "pm" || t[i] == "noon" || t[i] == "midnight" || t[i] == "oclock" || t[i] == "past"
	}, true) {
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

// stripRead blanks the response tokens that read back the request, or two or more turns
// of the conversation before it: a turn counts as read back when at least half of its
// tokens (and minEcho or more) lie in runs of at least minEcho tokens the response shares
// with it, and then every token of the response in such a run is blanked. Quoting a few
// words of the request ("the blue one" of "the red one or the blue one?") or reading one
// earlier turn back stays an answer: a question about what someone said is answered in
// their words.
func stripRead(resp []string, request string, context []sdk.DialogueTurn) []string {
	out := slices.Clone(resp)
	prim := make([]string, len(resp))
	for i, t := range resp {
		prim[i] = primary(t)
	}
	readBack := func(turn []string) bool {
		n := len(echoed(turn, prim))
		return n >= minEcho && 2*n >= len(turn)
	}
	blank := func(turn []string) {
		for _, i := range echoed(prim, turn) {
			out[i] = gone
		}
	}
	if req := Normalize(request); readBack(req) {
		blank(req)
	}
	var read [][]string
	for _, c := range context {
		if turn := Normalize(c.Text); readBack(turn) {
			read = append(read, turn)
		}
	}
	if len(read) >= 2 {
		for _, turn := range read {
			blank(turn)
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
		determiner := false // "not the eight pound lamp" denies a thing, not an amount
		for j < len(out) && functionWords[primary(out[j])] {
			determiner = determiner || determiners[primary(out[j])]
			j++
		}
		if j >= len(out) {
			break
		}
		first := primary(out[j])
		quantity := isNumber(first) && !strings.HasSuffix(first, "th") && !determiner
		out[j] = gone
		for j++; j < len(out); j++ {
			p := primary(out[j])
			if quantity && !(isNumber(p) || unitWords[p] || isDurationUnit(p) || measureWord(p) || p == "and" || p == "a" || p == "half" || p == "oh" || p == "o") {
				if functionWords[p] || negationStops[p] {
					break // "not 55 minutes but an hour"
				}
				quantity = false // "not one sky piece": the amount was part of a thing denied
			}
			if !quantity && negationStops[p] && (p != "it" || j+1 < len(out) && clauseVerbs[primary(out[j+1])]) {
				break // "not Tom but Sarah", "it isn't the fifth one, its Kitchen Lights"; "glue it and" goes on
			}
			out[j] = gone
		}
		i = j - 1
	}
	return out
}

// clauseVerbs after "it" start a new clause ("not Tom, it was Sarah"); "it" before anything
// else is an object inside what is denied ("not glue it and frame it").
var clauseVerbs = set([]string{"was", "is", "will", "would", "should", "could", "might", "must", "has", "had", "does", "did", "can", "isnt", "wasnt", "wont"})

// unitClasses are what a unit word after a number can mean: "pound" is a mass and a
// currency, "dollar" only a currency. Two units agree when they share a class.
func unitClasses(u string) []string {
	var cs []string
	if m, ok := MeasureUnits[u]; ok {
		cs = append(cs, m)
	}
	if c, ok := CurrencyMajor[u]; ok {
		cs = append(cs, "currency:"+c)
	}
	if u == "pound" {
		cs = append(cs, "mass:lb")
	}
	if _, ok := CurrencyMinor[u]; ok {
		cs = append(cs, "currency-minor:"+u)
	}
	if isDurationUnit(u) {
		cs = append(cs, "duration:"+u)
	}
	return cs
}

// unitAfter maps each number of toks to the classes of the unit word right after it.
func unitAfter(toks []string) map[string][]string {
	out := map[string][]string{}
	for i := 0; i+1 < len(toks); i++ {
		n, u := primary(toks[i]), primary(toks[i+1])
		if isNumber(n) {
			if cs := unitClasses(u); len(cs) > 0 {
				out[n] = append(out[n], cs...)
			}
		}
	}
	return out
}

// otherUnit finds a number the response puts another unit after than every gold form
// that puts a unit after the same number ("35.3 dollars" for "35.3 pounds" of weight).
func otherUnit(forms []string, toks []string) (string, bool) {
	gold := map[string][]string{}
	for _, f := range forms {
		for n, cs := range unitAfter(Normalize(f)) {
			gold[n] = append(gold[n], cs...)
		}
	}
	for n, said := range unitAfter(toks) {
		want, ok := gold[n]
		if ok && !slices.ContainsFunc(said, func(c string) bool { return slices.Contains(want, c) }) {
			return n, true
		}
	}
	return "", false
}

// determiners before a number make what a negation denies a noun phrase ("not the eight
// pound lamp"), read up to the next clause, not an amount ("not 55 minutes").
var determiners = set([]string{"the", "this", "that", "its", "their"})

// negationStops end what a negation denies of a phrase that is not a number: the next
// clause ("not Tom but Sarah", "it isn't the fifth one, it's Kitchen Lights").
var negationStops = set([]string{"but", "its", "it", "thats", "instead", "rather", "actually", "so", "because", "which", "who", "theyre", "hes", "shes", "were", "im"})

// polarity of a yes/no reply: +1 (yes), -1 (no), 0 (says neither), or 2 (says both "yes"
// and "no" outright: no answer).
func polarity(toks []string) int {
	hasYes, hasNo := false, false
	first := 0
	for i, t := range toks {
		p := primary(t)
		if i > 0 && p == "no" && i+1 < len(toks) && !functionWords[primary(toks[i+1])] && !negationStops[primary(toks[i+1])] {
			continue // "the blue one has no nuts": a determiner, not an answer
		}
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

// durationFillers may stand between a number and its unit of time.
var durationFillers = set([]string{"working", "business", "calendar", "school", "full", "whole", "more", "extra", "clear"})

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
			if a, b, ok := clock(primary(toks[i])); ok {
				// "13:40" is 13 min 40 s, or 13 h 40 min: both readings
				out = append(out, quantity{sec: float64(a*60 + b)}, quantity{sec: float64(a*3600 + b*60)})
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
	if durationFillers[primary(toks[i+n])] && i+n+1 < len(toks) {
		n++ // "eight working days"
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

// sums reads every sum of money a text states, in hundredths: "0.4 dollar" (from $0.40,
// or "forty cents" joined by normalize) 40, "40 cent" 40, "1.7 pound" (from "a pound
// seventy") 170, "70 pence" 70.
func sums(toks []string) []quantity {
	var out []quantity
	for i := 0; i < len(toks); i++ {
		v, n := amountAt(toks, i)
		if n == 0 || i+n >= len(toks) {
			continue
		}
		u := primary(toks[i+n])
		if cur, ok := CurrencyMajor[u]; ok {
			out = append(out, quantity{sec: v * 100, currency: []string{cur}})
			i += n
		} else if curs, ok := CurrencyMinor[u]; ok {
			out = append(out, quantity{sec: v, currency: curs})
			i += n
		}
	}
	return out
}

// goldQuantity is the quantity the gold states, or else the first its variants state.
// goldDuration is the duration the gold states with units ("1 hour 35 minutes"), or the
// first its variants state so; else the gold's clock token read as minutes and seconds
// ("13:40" is 820 s).
func goldDuration(gold string, accepted []string) (quantity, bool) {
	if q, ok := goldQuantity(func(t []string) []quantity { return durations(t, false) }, gold, accepted); ok {
		return q, true
	}
	return goldQuantity(func(t []string) []quantity { return durations(t, true) }, gold, accepted)
}

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

// MeasureSize is the size of each MeasureUnits unit in its dimension's base unit (metre,
// gram, litre, degree, percent).
var MeasureSize = map[string]float64{
	"length:mile": 1609.344, "length:km": 1000, "length:m": 1, "length:cm": 0.01, "length:mm": 0.001,
	"length:inch": 0.0254, "length:foot": 0.3048, "length:yard": 0.9144,
	"mass:kg": 1000, "mass:g": 1, "mass:lb": 453.59237, "mass:oz": 28.349523125, "mass:stone": 6350.29318,
	"mass:ton": 1e6, "mass:tonne": 1e6,
	"volume:l": 1, "volume:ml": 0.001, "volume:gallon": 3.785411784, "volume:pint": 0.473176473, "volume:cup": 0.2365882365,
	"temperature:c": 1, "temperature:f": 1, "ratio:percent": 1,
}

// measure is a stated amount of a MeasureUnits unit: its dimension ("length", "area" for
// a square length, ...), its size in base units, and per, the seconds of the unit of time
// it is a rate of ("7 centimetres a week"), 0 when it is no rate.
type measure struct {
	dim        string
	value, per float64
	perDim     string // what per is of: "time", or a measure's dimension ("miles per gallon")
}

// measures reads every measure a text states: a number, optionally "square" or "cubic",
// a MeasureUnits unit, and optionally "a"/"per"/"each"/"every" and a unit of time.
func measures(toks []string) []measure {
	var out []measure
	for i := 0; i+1 < len(toks); i++ {
		v, n := amountAt(toks, i)
		if n == 0 || !isNumber(primary(toks[i])) {
			continue
		}
		j := i + n
		power := 1.0
		switch primary(toks[j]) {
		case "square":
			power, j = 2, j+1
		case "cubic":
			power, j = 3, j+1
		}
		if j >= len(toks) {
			continue
		}
		u, ok := MeasureUnits[primary(toks[j])]
		if !ok {
			continue
		}
		m := measure{dim: dimension(u), value: v * math.Pow(MeasureSize[u], power)}
		switch {
		case u == "temperature:f":
			m.dim = u // Fahrenheit is no scaled Celsius
		case power == 2:
			m.dim = "area:" + m.dim
		case power == 3:
			m.dim = "cubic:" + m.dim
		}
		if j+2 < len(toks) {
			switch primary(toks[j+1]) {
			case "a", "an", "per", "each", "every":
				if s, mo, ok := durationUnit(primary(toks[j+2])); ok {
					m.per, m.perDim = s+mo*30.436875*86400, "time"
				} else if pu, ok := MeasureUnits[primary(toks[j+2])]; ok {
					m.per, m.perDim = MeasureSize[pu], dimension(pu)
				}
			}
		}
		out = append(out, m)
		i = j
	}
	return out
}

// sameMeasure: r answers g when both are rates of the same size, or r is no rate and has
// g's size; a rate does not answer a plain amount when some form of the gold is a rate
// (rated): "1.5 cm per second" is not "1.5 cm" when the gold also says "1.5 cm per day".
func sameMeasure(r, g measure, rated bool) bool {
	if r.dim != g.dim {
		return false
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) }
	switch {
	case r.per > 0 && g.per > 0:
		return r.perDim == g.perDim && near(r.value/r.per, g.value/g.per)
	case r.per > 0 && rated:
		return false
	}
	return near(r.value, g.value)
}

// blankDurations blanks every number with a unit of time after it, and the unit: in an
// answer that is a time of day, "eighteen seconds past five" says no 5:18.
func blankDurations(toks []string) []string {
	out := slices.Clone(toks)
	for i := 0; i+1 < len(out); i++ {
		if isNumber(primary(out[i])) && isDurationUnit(primary(out[i+1])) {
			out[i], out[i+1] = gone, gone
			i++
		}
	}
	return out
}

// ratios reads every ratio a text states ("2.74 to 1", "3 out of 4") as one number.
func ratios(toks []string) []float64 {
	var out []float64
	for i := 0; i+2 < len(toks); i++ {
		a, ok1 := number(toks[i])
		j := i + 1
		switch {
		case primary(toks[j]) == "to":
			j++
		case primary(toks[j]) == "out" && j+2 < len(toks) && primary(toks[j+1]) == "of":
			j += 2
		default:
			continue
		}
		if b, ok2 := number(toks[j]); ok1 && ok2 {
			out = append(out, a/b) // "30 to 0" is +Inf: a ratio still, not the gold's
			i = j
		}
	}
	return out
}

func number(t string) (float64, bool) {
	p := primary(t)
	if !isNumber(p) || strings.HasSuffix(p, "th") || strings.Contains(p, ":") {
		return 0, false
	}
	f, err := strconv.ParseFloat(p, 64)
	return f, err == nil
}

// perUnits are the units a text makes a rate of ("£1.70 a litre" has litre): a measure
// or time unit after "a"/"per"/"each"/"every" that follows a number or a unit.
func perUnits(toks []string) []string {
	var out []string
	for i := 2; i < len(toks); i++ {
		switch primary(toks[i-1]) {
		case "a", "an", "per", "each", "every":
		default:
			continue
		}
		u := primary(toks[i])
		_, measure := MeasureUnits[u]
		if (measure || isDurationUnit(u)) && perWord(toks[i-2]) && primary(toks[i-2]) != "half" {
			out = append(out, u)
		}
	}
	return out
}

func measureWord(w string) bool { _, ok := MeasureUnits[w]; return ok }

func dimension(u string) string { return u[:strings.IndexByte(u, ':')] }
