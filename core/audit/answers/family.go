// Package answers is the answers check of the dataset audit (issue 28, item 1): from each
// scenario's gold answer, its accepted variants, the request T and the conversation before
// T it derives a family of wrong answers (Family), and CheckAnswers puts every one of them
// to a judge, counting the pairs where the judge accepts any. A release passes when no
// pair does, and when at most a few of its gold answers are yes or no, balanced.
//
// The family is written here, apart from any judge's lexicon, so it audits a judge
// instead of agreeing with it.
package answers

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Kinds of wrong answer.
const (
	KindPlusOne      = "plus-one"  // a number of the gold plus one
	KindMinusOne     = "minus-one" // ... minus one
	KindTimesTen     = "times-ten" // ... times ten
	KindDividedByTen = "divided-by-ten"
	KindUnitSwapped  = "unit-swapped"   // a unit of the gold replaced by another of its kind
	KindPartAlone    = "part-alone"     // one part of a compound duration or sum alone
	KindYesNoSwapped = "yes-no-swapped" // yes for no, no for yes
	KindNegated      = "negated"        // the gold (or a variant) negated
	KindRequest      = "request"        // T read back
	KindConversation = "conversation"   // the conversation before T read back
	KindReordered    = "reordered"      // a code's characters in another order
)

// Wrong is one wrong answer of a scenario's family.
type Wrong struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
	// From is the gold form it was derived from ("" for the read-backs).
	From string `json:"from,omitempty"`
}

// IsYesNo reports whether a scenario's gold is a yes or a no: its answer_type says so,
// or, without one, the gold opens with yes or no.
func IsYesNo(s *dataset.Scenario) bool {
	if s.AnswerType != "" {
		return s.AnswerType == sdk.AnswerYesNo
	}
	_, ok := goldPolarity(s.GoldAnswer)
	return ok
}

// goldPolarity: +1 for a gold that opens with yes, -1 with no.
func goldPolarity(gold string) (int, bool) {
	w := words(gold)
	if len(w) == 0 {
		return 0, false
	}
	switch w[0] {
	case "yes", "yeah", "yep":
		return 1, true
	case "no", "nope":
		return -1, true
	}
	return 0, false
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '\'')
	})
}

// Family derives the wrong answers of s: from the gold and every accepted variant, each
// number plus and minus one, times and divided by ten; each unit swapped for the others of
// its kind (durations, currencies and their minor units, lengths, masses, volumes, am and
// pm); each part of a compound duration or sum alone; yes for no and no for yes, and the
// gold and its variants negated; T read back; the conversation before T read back. A
// derived answer that is the gold or one of its variants (ignoring case) is left out.
func Family(s *dataset.Scenario) []Wrong {
	forms := append([]string{s.GoldAnswer}, s.GoldAccepted...)
	right := map[string]bool{}
	var values []amountOf
	for _, f := range forms {
		right[norm(f)] = true
		if v, ok := valueOf(f); ok {
			values = append(values, v)
		}
	}
	var out []Wrong
	seen := map[string]bool{}
	add := func(kind, text, from string) {
		text = strings.TrimSpace(text)
		k := norm(text)
		if k == "" || right[k] || seen[kind+"\x00"+k] {
			return
		}
		if v, ok := valueOf(text); ok && kind != KindNegated && slices.Contains(values, v) {
			return // the same amount as an accepted form ("2200 millimetres" for "about 2.2 metres")
		}
		seen[kind+"\x00"+k] = true
		out = append(out, Wrong{Kind: kind, Text: text, From: from})
	}
	yesNo := IsYesNo(s)
	// The slips of a number, a unit or a part are wrong answers when the gold is an
	// amount; a name, a code or a text gold that a variant words with a number ("Pebble
	// Cove, twelve kilometres") is still named right with another number beside it.
	quantities := !slices.Contains([]string{sdk.AnswerName, sdk.AnswerCode, sdk.AnswerText}, s.AnswerType)
	// am and pm, morning and evening swap for a time of day (or an untyped gold), not in
	// "the morning Post" of a number's variant.
	halves := s.AnswerType == "" || s.AnswerType == sdk.AnswerClock
	for _, f := range forms {
		if strings.TrimSpace(f) == "" {
			continue
		}
		if yesNo {
			for _, w := range flipPolarity(f) {
				add(KindYesNoSwapped, w, f)
			}
			continue
		}
		if quantities {
			for _, w := range numberSlips(f) {
				add(w.Kind, w.Text, f)
			}
			for _, w := range unitSwaps(f, halves) {
				add(KindUnitSwapped, w, f)
			}
			for _, w := range partsAlone(f) {
				add(KindPartAlone, w, f)
			}
		}
		add(KindNegated, "not "+f, f)
		add(KindNegated, "it isn't "+f, f)
	}
	if s.AnswerType == sdk.AnswerCode {
		for _, w := range reorderings(s.GoldAnswer) {
			add(KindReordered, w, s.GoldAnswer)
		}
	}
	if yesNo {
		if p, _ := goldPolarity(s.GoldAnswer); p > 0 {
			add(KindYesNoSwapped, "no", s.GoldAnswer)
		} else {
			add(KindYesNoSwapped, "yes", s.GoldAnswer)
		}
	}
	if ti := s.TIndex(); ti >= 0 {
		add(KindRequest, s.Turns[ti].Text, "")
		var conv []string
		for _, t := range s.Turns[:ti] {
			conv = append(conv, t.Text)
		}
		// One turn read back is a quotation, which can be the answer (the judge's rule too);
		// the conversation read back is two turns or more.
		if len(conv) >= 2 {
			add(KindConversation, strings.Join(conv, " "), "")
		}
	}
	return out
}

// reorderings: a code's letters and digits with its first two different neighbours
// swapped, and reversed ("B7K2" -> "7BK2", "2K7B").
func reorderings(code string) []string {
	var cs []rune
	for _, r := range strings.ToUpper(code) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			cs = append(cs, r)
		}
	}
	var out []string
	for i := 0; i+1 < len(cs); i++ {
		if cs[i] != cs[i+1] {
			sw := slices.Clone(cs)
			sw[i], sw[i+1] = sw[i+1], sw[i]
			out = append(out, string(sw))
			break
		}
	}
	rev := slices.Clone(cs)
	slices.Reverse(rev)
	if string(rev) != string(cs) {
		out = append(out, string(rev))
	}
	return out
}

// norm is a form for comparing answers: its words and currency signs.
func norm(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '\'' || r == '$' || r == '£' || r == '€')
	}), " ")
}

// A number as written: digits with an optional decimal part, or a clock time H:MM.
var (
	numberRe = regexp.MustCompile(`\d+(?:[.,]\d+)*(?::\d\d)?`)
	clockRe  = regexp.MustCompile(`^(\d{1,2}):(\d\d)$`)
)

// numberSlips: each number of f plus and minus one, times and divided by ten (a clock
// time: its hour and its minutes plus and minus one).
func numberSlips(f string) []Wrong {
	var out []Wrong
	for _, loc := range numberRe.FindAllStringIndex(f, -1) {
		raw := f[loc[0]:loc[1]]
		put := func(kind, v string) {
			out = append(out, Wrong{Kind: kind, Text: f[:loc[0]] + v + f[loc[1]:]})
		}
		if m := clockRe.FindStringSubmatch(raw); m != nil {
			h, _ := strconv.Atoi(m[1])
			mi, _ := strconv.Atoi(m[2])
			put(KindPlusOne, fmt.Sprintf("%d:%02d", h%12+1, mi))
			put(KindMinusOne, fmt.Sprintf("%d:%02d", (h+10)%12+1, mi))
			put(KindPlusOne, fmt.Sprintf("%d:%02d", h, (mi+1)%60))
			put(KindMinusOne, fmt.Sprintf("%d:%02d", h, (mi+59)%60))
			continue
		}
		clean := strings.ReplaceAll(raw, ",", "")
		v, err := strconv.ParseFloat(clean, 64)
		if err != nil {
			continue
		}
		decimals := 0
		if i := strings.IndexByte(clean, '.'); i >= 0 {
			decimals = len(clean) - i - 1
		}
		format := func(x float64) string {
			if decimals == 0 && x == math.Trunc(x) {
				return strconv.FormatFloat(x, 'f', 0, 64)
			}
			return strconv.FormatFloat(x, 'f', max(decimals, decimalsOf(x)), 64)
		}
		put(KindPlusOne, format(v+1))
		if v-1 >= 0 {
			put(KindMinusOne, format(v-1))
		}
		if v != 0 {
			put(KindTimesTen, format(v*10))
			put(KindDividedByTen, format(v/10))
		}
	}
	return out
}

// decimalsOf is how many decimals x needs (at most 4).
func decimalsOf(x float64) int {
	for d := 0; d < 4; d++ {
		p := math.Pow(10, float64(d))
		if math.Abs(x*p-math.Round(x*p)) < 1e-9 {
			return d
		}
	}
	return 4
}

// unitGroups are the units a swap replaces each other with, as written after a number
// (singular; a plural "s" is kept). A group's members are different units: no synonyms.
var unitGroups = [][]string{
	{"second", "minute", "hour", "day", "week", "month", "year"},
	{"dollar", "cent", "pound", "penny", "euro"},
	{"kilometre", "mile", "metre"},
	{"kilometer", "mile", "meter"},
	{"kilogram", "gram"},
	{"kilo", "gram"},
	{"litre", "millilitre", "gallon"},
}

// unitAliases are other spellings of a group's units, and the unit they are.
var unitAliases = map[string]string{"night": "day", "nights": "days", "pence": "pennies", "km": "kilometre", "kg": "kilogram", "bucks": "dollars", "buck": "dollar"}

// currencySymbols are written before the number.
var currencySymbols = map[string]string{"$": "dollar", "£": "pound", "€": "euro"}

var unitWordRe = regexp.MustCompile(`(?i)\b([a-z]+)\b`)

// unitSwaps: f with one unit replaced by each other unit of its group; a currency symbol
// by the others and by the group's words; with halves, "am" and "pm", "morning" and
// "afternoon"/"evening" for each other.
func unitSwaps(f string, halves bool) []string {
	var out []string
	for _, loc := range unitWordRe.FindAllStringIndex(f, -1) {
		w := strings.ToLower(f[loc[0]:loc[1]])
		switch {
		case !halves:
		case w == "am":
			out = append(out, f[:loc[0]]+"pm"+f[loc[1]:])
			continue
		case w == "pm":
			out = append(out, f[:loc[0]]+"am"+f[loc[1]:])
			continue
		case w == "morning":
			out = append(out, f[:loc[0]]+"afternoon"+f[loc[1]:], f[:loc[0]]+"evening"+f[loc[1]:])
			continue
		case w == "afternoon" || w == "evening":
			out = append(out, f[:loc[0]]+"morning"+f[loc[1]:])
			continue
		case w == "night" || w == "nights":
			if strings.HasSuffix(strings.ToLower(f[:loc[0]]), "at ") {
				out = append(out, f[:loc[0]-3]+"in the morning"+f[loc[1]:]) // "at night" is a half of the day
				continue
			}
		}
		if a, ok := unitAliases[w]; ok {
			w = a
		}
		plural := false
		base := w
		if _, in := groupOf(base); !in {
			base = singularUnit(w)
			plural = base != w
		}
		g, in := groupOf(base)
		if !in {
			continue
		}
		for _, u := range g {
			if u == base {
				continue
			}
			if plural {
				u = pluralUnit(u)
			}
			before := f[:loc[0]]
			// "an hour" -> "a minute": the article follows the new unit
			if strings.HasSuffix(before, "an ") && !startsWithVowel(u) {
				before = strings.TrimSuffix(before, "an ") + "a "
			} else if strings.HasSuffix(before, "a ") && startsWithVowel(u) && !strings.HasSuffix(before, "a a ") {
				before = strings.TrimSuffix(before, "a ") + "an "
			}
			out = append(out, before+u+f[loc[1]:])
		}
	}
	for sym, unit := range currencySymbols {
		i := strings.Index(f, sym)
		if i < 0 {
			continue
		}
		for other := range currencySymbols {
			if other != sym {
				out = append(out, f[:i]+other+f[i+len(sym):])
			}
		}
		// "$0.40" -> "0.40 cents": the number kept, the unit swapped
		if loc := numberRe.FindStringIndex(f[i+len(sym):]); loc != nil && loc[0] == 0 {
			num := f[i+len(sym) : i+len(sym)+loc[1]]
			rest := f[i+len(sym)+loc[1]:]
			g, _ := groupOf(unit)
			for _, u := range g {
				if u != unit {
					out = append(out, f[:i]+num+" "+pluralUnit(u)+rest)
				}
			}
		}
	}
	return out
}

func groupOf(unit string) ([]string, bool) {
	for _, g := range unitGroups {
		for _, u := range g {
			if u == unit {
				return g, true
			}
		}
	}
	return nil, false
}

func singularUnit(w string) string {
	switch {
	case w == "pennies":
		return "penny"
	case strings.HasSuffix(w, "s"):
		return strings.TrimSuffix(w, "s")
	}
	return w
}

func pluralUnit(u string) string {
	if u == "penny" {
		return "pence"
	}
	return u + "s"
}

func startsWithVowel(w string) bool { return w != "" && strings.ContainsRune("aeiou", rune(w[0])) }

// amount is how a part of a compound says its number: digits, a number word or two,
// "a"/"an".
const amount = `(?:\d+(?:\.\d+)?|an?|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)`

var (
	partRe = regexp.MustCompile(`(?i)\b(` + amount + `)\s+(seconds?|minutes?|hours?|days?|nights?|weeks?|months?|years?|dollars?|cents?|pounds?|pence|euros?)\b(?:\s*(?:and\s+)?(` + amount + `)\b(?:\s+(seconds?|minutes?|hours?|days?|weeks?|months?|cents?|pence))?)?`)
	// smaller is the unit a bare number after a unit is in: "one hour thirty-five"
	smaller = map[string]string{"hour": "minutes", "minute": "seconds", "day": "hours", "week": "days", "year": "months", "dollar": "cents", "pound": "pence", "euro": "cents"}
)

// partsAlone: each part of a compound duration or sum alone ("1 hour 35 minutes" -> "1
// hour", "35 minutes"; "one pound seventy" -> "one pound", "seventy pence", "seventy";
// "a year and two months" -> "a year", "two months").
func partsAlone(f string) []string {
	var out []string
	for _, m := range partRe.FindAllStringSubmatch(f, -1) {
		if m[3] == "" || strings.EqualFold(m[3], "a") || strings.EqualFold(m[3], "an") {
			continue // not a compound ("an hour and a half" is one duration)
		}
		out = append(out, m[1]+" "+m[2])
		if m[4] != "" {
			out = append(out, m[3]+" "+m[4])
			continue
		}
		out = append(out, m[3])
		if u, ok := smaller[singularUnit(strings.ToLower(m[2]))]; ok {
			out = append(out, m[3]+" "+u)
		}
	}
	return out
}

// flipPolarity: a yes/no form said the other way: yes for no and no for yes at its
// start, and its verb negated (a "yes" form) or its negation dropped (a "no" form).
func flipPolarity(f string) []string {
	var out []string
	lower := strings.ToLower(strings.TrimSpace(f))
	w := words(lower)
	if len(w) == 0 {
		return nil
	}
	negative := false
	for _, x := range w {
		if x == "no" || x == "nope" || x == "not" || strings.HasSuffix(x, "n't") {
			negative = true
		}
	}
	if negative {
		s := lower
		for _, r := range [][2]string{{"won't", "will"}, {"can't", "can"}, {"cannot", "can"}, {"don't", "do"}, {"doesn't", "does"}, {"didn't", "did"}, {"isn't", "is"}, {"aren't", "are"}, {"wasn't", "was"}, {"not ", ""}} {
			s = strings.ReplaceAll(s, r[0], r[1])
		}
		s = replaceFirstWord(s, map[string]string{"no": "yes", "nope": "yes"})
		out = append(out, s, "yes", "yes, "+s)
		return out
	}
	s := replaceFirstWord(lower, map[string]string{"yes": "no", "yeah": "no", "yep": "no"})
	out = append(out, s)
	// the statement without its "yes", negated: "yes, it fits" -> "it doesn't fit"
	base := strings.TrimLeft(replaceFirstWord(lower, map[string]string{"yes": "", "yeah": "", "yep": ""}), " ,")
	if base == "" {
		return out
	}
	lower = " " + base
	neg := lower
	for _, r := range [][2]string{{"'ll ", " won't "}, {" will ", " won't "}, {" can ", " can't "}, {" is ", " isn't "}, {" are ", " aren't "}, {" do ", " don't "}, {" fits", " doesn't fit"}, {" works", " doesn't work"}} {
		if strings.Contains(neg, r[0]) {
			neg = strings.Replace(neg, r[0], r[1], 1)
			break
		}
	}
	if strings.Contains(lower, "'ll ") {
		out = append(out, strings.TrimSpace(strings.Replace(lower, "'ll ", "'ll not ", 1))) // "you'll not make it"
	}
	if neg != lower {
		out = append(out, strings.TrimSpace(neg), "no,"+neg)
	} else {
		out = append(out, "no,"+lower)
	}
	return out
}

func replaceFirstWord(s string, m map[string]string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z') })
	first := s
	if i >= 0 {
		first = s[:i]
	}
	if r, ok := m[first]; ok {
		return r + s[len(first):]
	}
	return s
}

// amountOf is the amount a form states with digits and a unit, in the unit group's first
// unit (metres, grams, litres).
type amountOf struct {
	group int
	value float64
}

var digitUnitRe = regexp.MustCompile(`(?i)(\d+(?:[.,]\d+)*)\s*([a-z]+)`)

// unitScale is each unit of unitGroups in the group's first unit, for valueOf; only the
// measures (lengths, masses, volumes), where a slip can land on an approximate variant.
var unitScale = map[string]float64{
	"kilometre": 1, "kilometer": 1, "metre": 0.001, "meter": 0.001, "millimetre": 1e-6, "millimeter": 1e-6, "mile": 1.609344,
	"kilogram": 1, "kilo": 1, "gram": 0.001, "litre": 1, "millilitre": 0.001,
}

// valueOf reads the first "digits unit" of a measure in f.
func valueOf(f string) (amountOf, bool) {
	m := digitUnitRe.FindStringSubmatch(f)
	if m == nil {
		return amountOf{}, false
	}
	unit := singularUnit(strings.ToLower(m[2]))
	scale, ok := unitScale[unit]
	if !ok {
		return amountOf{}, false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	if err != nil {
		return amountOf{}, false
	}
	g := 0
	switch unit {
	case "kilogram", "kilo", "gram":
		g = 1
	case "litre", "millilitre":
		g = 2
	}
	return amountOf{group: g, value: math.Round(v*scale*1e9) / 1e9}, true
}
