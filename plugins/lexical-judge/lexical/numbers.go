package lexical

import (
	"strconv"
	"strings"
)

// Numbers as people say them and as ASR writes them. Normalize makes the forms that mean
// one thing one token on both sides of a match ("3:30", "half past three" -> "3:30";
// "two and a half" -> "2.5"). What a written form may also mean, because a speech
// recogniser writes "three thirty" as "3.30", "330" or "$330", are further readings of
// the response only (readings): a gold answer is read as written, a response is given
// every reading its words allow, and it answers when one of them is the gold's. So
// "3:30" is answered by "330", but "330 people" is not answered by "3:30".

// altSep separates a token's primary form from its other readings inside normalize.
const altSep = "~"

// primary is the token as written, without its other readings.
func primary(t string) string {
	if i := strings.Index(t, altSep); i >= 0 {
		return t[:i]
	}
	return t
}

// clockToken is the canonical clock time "H:MM" (the hour without leading zeros).
func clockToken(hour string, minute int) string {
	h, err := strconv.Atoi(hour)
	if err != nil {
		h = 0
	}
	return strconv.Itoa(h) + ":" + twoDigits(minute)
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// decimalTime is the clock reading of a decimal written with exactly two decimals whose
// integer part can be an hour and whose decimals minutes: "3.30" -> "3:30", "12.45" ->
// "12:45"; "" otherwise ("3.3", "4.75", "25.10").
func decimalTime(raw string) string {
	i := strings.IndexByte(raw, '.')
	if i <= 0 || len(raw)-i-1 != 2 {
		return ""
	}
	h, err1 := strconv.Atoi(raw[:i])
	m, err2 := strconv.Atoi(raw[i+1:])
	if err1 != nil || err2 != nil || h > 23 || m > 59 || len(raw[:i]) > 2 {
		return ""
	}
	return strconv.Itoa(h) + ":" + twoDigits(m)
}

// intToken is the value of a whole-number token (its primary form), ok false otherwise.
func intToken(t string) (int, bool) {
	t = primary(t)
	if !isInteger(t) || len(t) > 9 {
		return 0, false
	}
	n, err := strconv.Atoi(t)
	return n, err == nil
}

// spokenForms rewrites, on both sides, the spoken forms of times and fractions that have
// one meaning (numbers are already digits):
//
//	half past 3 -> 3:30      (a) quarter past 7 -> 7:15    quarter to 8 -> 7:45
//	7 oclock -> 7:00         2 and a half -> 2.5           (a / half a / 2) dozen -> 12 / 6 / 24
func spokenForms(toks []string) []string {
	var out []string
	hourAt := func(k int) (int, bool) {
		if k >= len(toks) {
			return 0, false
		}
		h, ok := intToken(toks[k])
		return h, ok && h >= 1 && h <= 12
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		next := func(k int) string {
			if i+k < len(toks) {
				return toks[i+k]
			}
			return ""
		}
		switch {
		case (t == "half" || t == "quarter") && next(1) == "past":
			if h, ok := hourAt(i + 2); ok {
				m := 30
				if t == "quarter" {
					m = 15
				}
				out = append(out, strconv.Itoa(h)+":"+twoDigits(m))
				i += 2
				continue
			}
		case t == "quarter" && (next(1) == "to" || next(1) == "till" || next(1) == "til" || next(1) == "of"):
			if h, ok := hourAt(i + 2); ok {
				h--
				if h == 0 {
					h = 12
				}
				out = append(out, strconv.Itoa(h)+":45")
				i += 2
				continue
			}
		case next(1) == "oclock" || (next(1) == "o" && next(2) == "clock"):
			if h, ok := hourAt(i); ok {
				out = append(out, strconv.Itoa(h)+":00")
				if next(1) == "oclock" {
					i++
				} else {
					i += 2
				}
				continue
			}
		case next(1) == "and" && next(2) == "a" && next(3) == "quarter":
			if n, ok := intToken(t); ok {
				out = append(out, strconv.Itoa(n)+".25")
				i += 3
				continue
			}
		case next(1) == "and" && (next(2) == "a" || next(2) == "1" || next(2) == "2") && (next(3) == "third" || next(3) == "thirds"):
			if n, ok := intToken(t); ok {
				k := 1.0
				if next(2) == "2" {
					k = 2
				}
				out = append(out, strconv.FormatFloat(float64(n)+k/3, 'f', -1, 64))
				i += 3
				continue
			}
		case isMinutes(t) && (next(1) == "past" || (next(1) == "to" || next(1) == "till") && roundMinutes[primary(t)]) ||
			isMinutes(t) && (next(1) == "minute" || next(1) == "minutes") && (next(2) == "past" || next(2) == "to" || next(2) == "till"):
			// "eighteen minutes past five" -> 5:18, "twenty-four minutes to ten" -> 9:36,
			// "twenty to ten" -> 9:40 (but "30 to 1" stays a ratio)
			k := 1
			if next(1) == "minute" || next(1) == "minutes" {
				k = 2
			}
			if h, ok := hourAt(i + k + 1); ok {
				m, _ := intToken(t)
				if next(k) == "past" {
					out = append(out, strconv.Itoa(h)+":"+twoDigits(m))
				} else {
					h--
					if h == 0 {
						h = 12
					}
					out = append(out, strconv.Itoa(h)+":"+twoDigits(60-m))
				}
				i += k + 1
				continue
			}
		case next(1) == "and" && next(2) == "3" && (next(3) == "quarter" || next(3) == "quarters"):
			if n, ok := intToken(t); ok {
				out = append(out, strconv.Itoa(n)+".75")
				i += 3
				continue
			}
		case next(1) == "and" && next(2) == "a" && next(3) == "half":
			if n, ok := intToken(t); ok {
				out = append(out, strconv.Itoa(n)+".5")
				i += 3
				continue
			}
		case t == "half" && next(1) == "a" && next(2) == "dozen":
			out = append(out, "6")
			i += 2
			continue
		case t == "a" && next(1) == "dozen":
			out = append(out, "12")
			i++
			continue
		case next(1) == "dozen":
			if n, ok := intToken(t); ok {
				out = append(out, strconv.Itoa(12*n))
				i++
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

// roundMinutes are the minutes said "to" an hour without the word "minutes".
var roundMinutes = map[string]bool{"5": true, "10": true, "20": true, "25": true}

// isMinutes: a whole number of minutes a clock time can be past or to an hour (1-59).
func isMinutes(t string) bool {
	n, ok := intToken(t)
	return ok && n >= 1 && n <= 59 && !strings.Contains(t, altSep)
}

// readings are the tokens a response offers a gold answer: every token as written, its
// other readings, and what its number words may also mean as ASR writes them:
//
//   - a clock time in the other half of the day: "3:30" is also "15:30", and back;
//   - a whole hour from 1 to 12 is also that hour: "seven" -> "7:00", "19:00";
//   - a number of three or four digits that splits into an hour and minutes: "330" ->
//     "3:30" (whatever currency sign ASR put before it: "$330");
//   - two numbers in a row, as a time is said: "3 30" -> "3:30" (minutes 10-59); as a
//     price is said: "4 20" -> "4.2" (cents 10-99); as a year is said: "19 84" -> "1984";
//     "7 oh 5" -> "7:05";
//   - "second" -> "2th" (the ordinal; Normalize keeps "second" as the unit of time),
//     "noon" -> "12:00", "midnight" -> "0:00" and "12:00".
//
// Readings only add: a response keeps every token it had, so a reading can make an
// answer correct but never wrong.
func readings(toks []string) []string { return readingsOf(toks, true) }

// readingsOf is readings; without halves a clock time is not also the time in the other
// half of the day (a duration "13:40" is not answered by "one forty").
func readingsOf(toks []string, halves bool) []string {
	var out []string
	otherHalf := func(h, m int) {
		switch {
		case !halves:
		case h >= 1 && h <= 11:
			out = append(out, strconv.Itoa(h+12)+":"+twoDigits(m))
		case h >= 13 && h <= 23:
			out = append(out, strconv.Itoa(h-12)+":"+twoDigits(m))
		}
	}
	addClock := func(h, m int) {
		out = append(out, strconv.Itoa(h)+":"+twoDigits(m))
		otherHalf(h, m)
	}
	for i, t := range toks {
		p := primary(t)
		out = append(out, p)
		if alts := strings.Split(t, altSep)[1:]; len(alts) > 0 {
			for _, a := range alts {
				if h, m, ok := clock(a); ok {
					addClock(h, m)
				} else {
					out = append(out, a)
				}
			}
		}
		if h, m, ok := clock(p); ok {
			otherHalf(h, m)
			continue
		}
		switch p {
		case "second":
			out = append(out, "2th")
		case "noon":
			out = append(out, "12:00")
		case "midnight":
			out = append(out, "0:00", "12:00")
		}
		a, ok := intToken(t)
		if !ok {
			continue
		}
		if a >= 1 && a <= 12 && !minutesAfter(toks, i) {
			addClock(a, 0) // "seven" is 7:00, but "one thirty" is not 1:00
		}
		if len(p) == 3 || len(p) == 4 {
			if h, m := a/100, a%100; h <= 23 && m <= 59 {
				addClock(h, m)
			}
		}
		if i+1 >= len(toks) {
			continue
		}
		if b, ok := intToken(toks[i+1]); ok {
			if a <= 23 && b >= 10 && b <= 59 {
				addClock(a, b)
			}
			if b >= 10 && b <= 99 {
				out = append(out, canonicalNumber(strconv.Itoa(a)+"."+twoDigits(b)))
			}
			if a >= 10 && a <= 99 && b >= 10 && b <= 99 {
				out = append(out, strconv.Itoa(a*100+b))
			}
		} else if (primary(toks[i+1]) == "oh" || primary(toks[i+1]) == "o") && i+2 < len(toks) {
			if b, ok := intToken(toks[i+2]); ok && a <= 23 && b <= 9 {
				addClock(a, b)
			}
		}
	}
	return out
}

// minutesAfter: the token after toks[i] says minutes ("1 30", "7 oh 5").
func minutesAfter(toks []string, i int) bool {
	if i+1 >= len(toks) {
		return false
	}
	if b, ok := intToken(toks[i+1]); ok && b <= 59 {
		return true
	}
	n := primary(toks[i+1])
	return n == "oh" || n == "o"
}

// clock reads a canonical clock token "H:MM".
func clock(t string) (h, m int, ok bool) {
	i := strings.IndexByte(t, ':')
	if i <= 0 || len(t)-i-1 != 2 {
		return 0, 0, false
	}
	h, err1 := strconv.Atoi(t[:i])
	m, err2 := strconv.Atoi(t[i+1:])
	if err1 != nil || err2 != nil || !isInteger(t[:i]) || !isInteger(t[i+1:]) {
		return 0, 0, false
	}
	return h, m, true
}
