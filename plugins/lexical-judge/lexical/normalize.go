// Package lexical is a deterministic judge for Duplex-MPE: answer correctness by
// normalised content match (number words and digits, currency symbols, plurals), and
// acknowledgement vs intrusion by a fixed backchannel lexicon. It has no model and no
// randomness: the same query always gets the same verdict. Its rules and lexicon are
// hashed into Identity so a run records exactly which version judged it.
package lexical

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

var ones = map[string]int{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
}

var teens = map[string]int{
	"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
	"sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}

var tens = map[string]int{
	"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}

var scales = map[string]int{"thousand": 1000, "million": 1000000, "billion": 1000000000}

// ordinals map to their cardinal; "second" is left out on purpose (it is far more often
// the unit of time), except after a tens word ("twenty second").
var ordinals = map[string]int{
	"first": 1, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
	"tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
	"sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
	"thirtieth": 30, "fortieth": 40, "fiftieth": 50, "sixtieth": 60, "seventieth": 70, "eightieth": 80,
	"ninetieth": 90, "hundredth": 100, "thousandth": 1000,
}

// symbols are rewritten as words before tokenising; a currency symbol moves after the
// number it precedes ("$9" -> "9 dollars").
var currency = map[rune]string{'$': "dollars", '€': "euros", '£': "pounds"}

// tokenize lowercases text and splits it into words and numbers. Digits keep their
// decimal point ("9.50" -> "9.5"), thousands separators are dropped ("1,000" -> "1000"),
// "%" becomes "percent", ordinal suffixes become "th" ("21st" -> "21th"), apostrophes
// vanish ("it's" -> "its"), and every other character separates tokens.
func tokenize(text string) []string {
	rs := []rune(strings.ToLower(text))
	var out []string
	var pendingUnit []string // currency words waiting for the end of their number
	flushUnit := func() {
		out = append(out, pendingUnit...)
		pendingUnit = nil
	}
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsDigit(r):
			j := i
			var b strings.Builder
			for j < len(rs) {
				c := rs[j]
				if unicode.IsDigit(c) {
					b.WriteRune(c)
					j++
				} else if (c == ',' || c == '.') && j+1 < len(rs) && unicode.IsDigit(rs[j+1]) {
					if c == '.' {
						b.WriteRune('.')
					}
					j++
				} else {
					break
				}
			}
			raw := b.String()
			num := canonicalNumber(raw)
			// A clock time "3:30" (hour, colon, two digits) is one token, "3:30".
			if !strings.Contains(raw, ".") && j+2 < len(rs) && rs[j] == ':' && isDigit(rs[j+1]) && isDigit(rs[j+2]) && (j+3 == len(rs) || !isDigit(rs[j+3])) {
				num = clockToken(num, int(rs[j+1]-'0')*10+int(rs[j+2]-'0'))
				j += 3
			} else if !strings.Contains(raw, ".") && j+1 < len(rs) && rs[j] == ':' && isDigit(rs[j+1]) {
				// "30:1" is no clock time but a ratio: "30 to 1"
				out = append(out, num, "to")
				i = j + 1
				continue
			} else if alt := decimalTime(raw); alt != "" {
				// "3.30" is the decimal 3.3 and, as ASR writes "three thirty", the time 3:30:
				// the second reading travels with the token (see readings).
				num += altSep + alt
			}
			// ordinal suffix
			k := j
			for k < len(rs) && unicode.IsLetter(rs[k]) {
				k++
			}
			switch suffix := string(rs[j:k]); suffix {
			case "st", "nd", "rd", "th":
				num += "th"
				j = k
			}
			out = append(out, num)
			// a scale word after a currency amount belongs to the number: "$2 million dollars"
			i = j
			if len(pendingUnit) > 0 {
				// look ahead for a scale word
				w, next := nextWord(rs, i)
				if _, ok := scales[w]; ok {
					out = append(out, w)
					i = next
				}
				flushUnit()
			}
		case currency[r] != "":
			pendingUnit = append(pendingUnit, currency[r])
			i++
		case r == '%':
			out = append(out, "percent")
			i++
		case unicode.IsLetter(r):
			j := i
			var b strings.Builder
			for j < len(rs) && (unicode.IsLetter(rs[j]) || rs[j] == '\'' || rs[j] == '’') {
				if unicode.IsLetter(rs[j]) {
					b.WriteRune(rs[j])
				}
				j++
			}
			out = append(out, b.String())
			i = j
		default:
			i++
		}
	}
	flushUnit()
	return out
}

func nextWord(rs []rune, i int) (string, int) {
	for i < len(rs) && unicode.IsSpace(rs[i]) {
		i++
	}
	j := i
	for j < len(rs) && unicode.IsLetter(rs[j]) {
		j++
	}
	return string(rs[i:j]), j
}

// canonicalNumber writes a decimal without trailing zeros: "9.50" -> "9.5", "9.00" -> "9".
func canonicalNumber(s string) string {
	if !strings.Contains(s, ".") {
		t := strings.TrimLeft(s, "0")
		if t == "" {
			return "0"
		}
		return t
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// numberWords replaces runs of number words with digits: "nine" -> "9", "twenty one" ->
// "21", "one hundred and five" -> "105", "a thousand" -> "1000", "three point five" ->
// "3.5", "twenty first" -> "21th". A run ends where the next word cannot continue the
// same number, so "five thirty" gives "5 30" (a time) and "one two three" gives "1 2 3".
func numberWords(toks []string) []string {
	var out []string
	i := 0
	for i < len(toks) {
		n, used, ord := parseNumber(toks, i)
		if used == 0 {
			out = append(out, toks[i])
			i++
			continue
		}
		if ord {
			n += "th"
		}
		out = append(out, n)
		i += used
	}
	return out
}

// parseNumber reads one spelled-out number starting at toks[i]. used is how many tokens
// it took (0: none is a number word).
func parseNumber(toks []string, i int) (num string, used int, ordinal bool) {
	total, group := 0, 0
	last := "" // kind of the last word taken: ones, teens, tens, hundred, scale
	j := i
	if j+1 < len(toks) && toks[j] == "a" && (toks[j+1] == "hundred" || scales[toks[j+1]] > 0) {
		group, last = 1, "ones"
		j++
	}
	for j < len(toks) {
		w := toks[j]
		if w == "and" && (last == "hundred" || last == "scale") && j+1 < len(toks) && isSmallNumberWord(toks[j+1]) {
			j++
			continue
		}
		if v, ok := ones[w]; ok && (last == "" || last == "hundred" || last == "scale" || (last == "tens" && group%10 == 0)) {
			if w == "zero" && last != "" {
				break
			}
			group += v
			last = "ones"
		} else if v, ok := teens[w]; ok && (last == "" || last == "hundred" || last == "scale") {
			group += v
			last = "teens"
		} else if v, ok := tens[w]; ok && (last == "" || last == "hundred" || last == "scale") {
			group += v
			last = "tens"
		} else if w == "hundred" && (last == "ones" || last == "teens") && group%100 > 0 && group < 100 {
			group *= 100
			last = "hundred"
		} else if v, ok := scales[w]; ok && last != "" && last != "scale" {
			total += group * v
			group = 0
			last = "scale"
		} else if v, ok := ordinals[w]; ok && (last == "" || last == "hundred" || last == "scale" || (last == "tens" && v < 10)) {
			return strconv.Itoa(total + group + v), j - i + 1, true
		} else if w == "second" && last == "tens" {
			return strconv.Itoa(total + group + 2), j - i + 1, true
		} else if w == "point" && last != "" && j+1 < len(toks) && isDigitWord(toks[j+1]) {
			var b strings.Builder
			k := j + 1
			for k < len(toks) && isDigitWord(toks[k]) {
				b.WriteString(strconv.Itoa(ones[toks[k]])) // "oh" is not in ones: 0
				k++
			}
			return canonicalNumber(strconv.Itoa(total+group) + "." + b.String()), k - i, false
		} else {
			break
		}
		j++
	}
	if last == "" {
		return "", 0, false
	}
	return strconv.Itoa(total + group), j - i, false
}

// isDigitWord: a digit said after "point"; "oh" and "o" are 0 ("four point oh eight").
func isDigitWord(w string) bool { _, ok := ones[w]; return ok || w == "oh" || w == "o" }

func isSmallNumberWord(w string) bool {
	_, a := ones[w]
	_, b := teens[w]
	_, c := tens[w]
	return a || b || c
}

// singular undoes a regular English plural so "dollars" matches "dollar": words of four
// or more letters; "-ies" -> "-y", "-sses", "-ches", "-shes", "-xes" lose "es", other
// "-s" lose "s" except "-ss", "-us", "-is". Numbers are left alone.
func singular(w string) string {
	if len(w) < 4 || !strings.HasSuffix(w, "s") || unicode.IsDigit(rune(w[0])) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return strings.TrimSuffix(w, "ies") + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "xes"):
		return strings.TrimSuffix(w, "es")
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return w
	}
	return strings.TrimSuffix(w, "s")
}

// currencyUnits are the major units whose minor part may follow ("nine dollars fifty").
var currencyUnits = map[string]bool{"dollar": true, "dollars": true, "euro": true, "euros": true, "pound": true, "pounds": true, "buck": true, "bucks": true}

// joinMinorUnits rewrites "9 dollars [and] 50 [cents]" as "9.5 dollars", the form "$9.50"
// takes, so spoken and written prices match.
func joinMinorUnits(toks []string) []string {
	var out []string
	for i := 0; i < len(toks); i++ {
		whole := toks[i]
		if whole == "a" || whole == "one" {
			whole = "1" // "a pound seventy"
		}
		if i+2 < len(toks) && isInteger(whole) && currencyUnits[toks[i+1]] {
			j := i + 2
			if toks[j] == "and" && j+1 < len(toks) {
				j++
			}
			if minor, err := strconv.Atoi(toks[j]); err == nil && isInteger(toks[j]) && minor > 0 && minor < 100 && minorFits(toks, j, toks[i+1]) {
				out = append(out, canonicalNumber(fmt.Sprintf("%s.%02d", whole, minor)), toks[i+1])
				i = j
				if i+1 < len(toks) && minorUnits[toks[i+1]] {
					i++
				}
				continue
			}
		}
		out = append(out, toks[i])
	}
	return out
}

// minorUnits are the words of a hundredth of a currency.
var minorUnits = map[string]bool{"cent": true, "cents": true, "pence": true, "penny": true, "p": true}

// minorFits: the number at toks[j] can be the minor part of the major unit: no unit
// follows it, or the minor unit of that currency ("nine dollars fifty cents", not "nine
// dollars fifty pence" nor "nine dollars and fifty dollars").
func minorFits(toks []string, j int, major string) bool {
	if j+1 >= len(toks) {
		return true
	}
	next := toks[j+1]
	if !minorUnits[next] {
		return !currencyUnits[next] && !unitWords[singular(next)]
	}
	pound := strings.HasPrefix(major, "pound")
	return pound == (next == "pence" || next == "penny" || next == "p")
}

func isInteger(t string) bool { return within(t, '0', '9') }

// within: t is not empty and every rune of it is in lo..hi.
func within(t string, lo, hi rune) bool {
	if t == "" {
		return false
	}
	for _, r := range t {
		if r < lo || r > hi {
			return false
		}
	}
	return true
}

// Normalize turns text into the comparable tokens both sides of a match use: tokenised,
// number words as digits, prices joined ("9 dollars 50" -> "9.5 dollars"), times said in
// words as clock tokens ("half past three" -> "3:30"), "p m" after a number joined into
// "pm", plurals made singular. The other readings of a token ("3.30" is also 3:30) are
// not in it: see readings.
func Normalize(text string) []string {
	toks := normalize(text)
	for i, t := range toks {
		toks[i] = primary(t)
	}
	return toks
}

// normalize is Normalize with each token's other readings kept after altSep.
func normalize(text string) []string {
	toks := spokenForms(joinMinorUnits(numberWords(tokenize(text))))
	var out []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if (t == "p" || t == "a") && i+1 < len(toks) && toks[i+1] == "m" && i > 0 && isNumber(toks[i-1]) {
			out = append(out, t+"m")
			i++
			continue
		}
		if (t == "a" || t == "an") && i+1 < len(toks) && countedUnit(singular(toks[i+1])) && (i == 0 || !perWord(toks[i-1])) {
			t = "1" // "an hour" is 1 hour; "a pound" 1 pound; not "7 cm a week"
		}
		out = append(out, singular(t))
	}
	return out
}

// countedUnit: a unit "a"/"an" counts one of (time, money).
func countedUnit(w string) bool {
	_, maj := CurrencyMajor[w]
	return isDurationUnit(w) || maj
}

// perWord: after this token an "a" means "per" ("7 centimetres a week") or is part of a
// quantity ("half an hour").
func perWord(t string) bool {
	t = singular(primary(t))
	_, measure := MeasureUnits[t]
	_, maj := CurrencyMajor[t]
	_, minor := CurrencyMinor[t]
	return t == "half" || isNumber(t) || measure || maj || minor || isDurationUnit(t) || unitWords[t]
}

func isNumber(t string) bool { return t != "" && unicode.IsDigit(rune(t[0])) }

func isDigit(r rune) bool { return r >= '0' && r <= '9' }
