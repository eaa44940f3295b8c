package main

import (
	"strings"
)

// words splits an ASR transcript into lowercase words without punctuation.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '\'')
	})
}

// nameAt returns the number of words of the name that starts at ws[i] (0: none). A
// name may be several words, as the recogniser hears it ("are you" for a flite voice
// saying "Aria"); a one-word name also matches its possessive ("aria's").
func nameAt(ws []string, i int, names []string) int {
	for _, n := range names {
		nw := strings.Fields(n)
		if i+len(nw) > len(ws) {
			continue
		}
		match := true
		for k, w := range nw {
			got := ws[i+k]
			if k == len(nw)-1 {
				got = strings.TrimSuffix(got, "'s")
			}
			if got != w {
				match = false
				break
			}
		}
		if match {
			return len(nw)
		}
	}
	return 0
}

// isNameWord reports whether w is a word of one of the names.
func isNameWord(w string, names []string) bool {
	w = strings.TrimSuffix(w, "'s")
	for _, n := range names {
		for _, nw := range strings.Fields(n) {
			if w == nw {
				return true
			}
		}
	}
	return false
}

var questionWords = set("what", "what's", "whats", "when", "where", "which", "who", "whose", "how", "why")
var requestVerbs = set("tell", "remind", "set", "give", "find", "check", "add", "please", "spell")
var auxiliaries = set("can", "could", "would", "will", "do", "does", "did", "is", "are", "should", "have", "has")
var auxSubjects = set("you", "we", "it", "i", "there", "they", "he", "she", "the", "that", "this", "our", "my")

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// requestCueAt reports whether a request starts at ws[i]: a question word, a request
// verb, or an auxiliary followed by a subject ("is it", "can you").
func requestCueAt(ws []string, i int) bool {
	w := ws[i]
	if questionWords[w] || requestVerbs[w] {
		return true
	}
	return auxiliaries[w] && i+1 < len(ws) && auxSubjects[ws[i+1]]
}

// questionAt reports a question anywhere in an utterance: a question word followed by
// an auxiliary or a quantity word ("when does", "how much"), or an auxiliary followed by
// "you" ("can you"). "when i forgot" and "do it" are not.
func questionAt(ws []string, i int) bool {
	if i+1 >= len(ws) {
		return false
	}
	if questionWords[ws[i]] {
		return auxiliaries[ws[i+1]] || quantityWords[ws[i+1]] || ws[i+1] == "was" || ws[i+1] == "time"
	}
	return auxiliaries[ws[i]] && ws[i+1] == "you"
}

var quantityWords = set("much", "many", "long", "far", "old", "big", "often", "soon")

// vocativeReach: a name among the first words of an utterance is a vocative ("Quick,
// Aria, ..."), addressing the whole utterance.
const vocativeReach = 2

// cueReach is how many words after the name a request cue may start ("Aria, so when
// does..." has it two words on).
const cueReach = 3

// addressedByName is the name policy: the utterance names the assistant and makes a
// request of it. A request is a cue (requestCueAt) within cueReach words after a name,
// or, when the name closes the utterance ("what time is it aria"), within its first
// cueReach words, or, when the name opens it (within vocativeReach words), a question
// anywhere in it (questionAt: "aria if we start the fire at sunset ... when does it go
// out"). A mere mention ("aria saved us last week when i forgot the rice")
// has no cue next to the name and is not a request.
func addressedByName(text string, names []string) bool {
	ws := words(text)
	for i := range ws {
		n := nameAt(ws, i, names)
		if n == 0 {
			continue
		}
		after := i + n
		for j := after; j < len(ws) && j < after+cueReach; j++ {
			if requestCueAt(ws, j) {
				return true
			}
		}
		if after == len(ws) {
			for j := 0; j < i && j < cueReach; j++ {
				if requestCueAt(ws, j) {
					return true
				}
			}
		}
		if i < vocativeReach {
			for j := after; j < len(ws); j++ {
				if questionAt(ws, j) {
					return true
				}
			}
		}
	}
	return false
}

var numberWords = set("zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
	"nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
	"hundred", "thousand", "half", "quarter", "first", "second", "third", "fourth", "fifth",
	"sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth", "noon", "midnight")

// joins reports whether ws[j] joins the number before it to the one after it: "and"
// after hundred or thousand ("a hundred and twenty"), "point", "a" before half or
// quarter ("an hour and a half" stays two phrases, "one and a half" one).
func joins(ws []string, j int) bool {
	if j == 0 || j+1 >= len(ws) {
		return false
	}
	next := numberWords[ws[j+1]] || isDigits(ws[j+1])
	switch ws[j] {
	case "and":
		if ws[j+1] == "a" && j+2 < len(ws) && (ws[j+2] == "half" || ws[j+2] == "quarter") {
			return true // "and a" is skipped, "half" continues the phrase
		}
		return next && (ws[j-1] == "hundred" || ws[j-1] == "thousand")
	case "point":
		return next
	}
	return false
}

// numberUnits may follow a number phrase and belong to it.
var numberUnits = set("dollars", "dollar", "cents", "minutes", "minute", "hours", "hour", "days", "day",
	"nights", "night", "miles", "mile", "degrees", "percent", "o'clock", "am", "pm", "bucks",
	"weeks", "week", "pounds", "feet", "inches", "cups", "people", "euros")

// numberPhrases returns the maximal runs of number words in ws, each with a unit that
// directly follows it, in order.
func numberPhrases(ws []string) []string {
	var out []string
	for i := 0; i < len(ws); {
		if !numberWords[ws[i]] && !isDigits(ws[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(ws) {
			if numberWords[ws[j]] || isDigits(ws[j]) {
				j++
			} else if joins(ws, j) {
				j += 2
			} else {
				break
			}
		}
		if j < len(ws) && numberUnits[ws[j]] {
			j++
		}
		out = append(out, strings.Join(ws[i:j], " "))
		i = j
	}
	return out
}

func isDigits(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

var stopWords = set("the", "a", "an", "and", "or", "of", "to", "in", "on", "at", "for", "is", "are", "was",
	"were", "be", "do", "does", "did", "we", "you", "i", "it", "that", "this", "so", "our", "my", "your",
	"have", "has", "had", "with", "from", "up", "out", "again", "there", "here", "then", "okay", "quick",
	"sorry", "oh", "um", "uh", "me", "us", "they", "them", "its", "it's", "what's", "need", "get", "go",
	"going", "can", "could", "would", "will", "should", "just", "now", "about", "if", "all", "too")

// keywords are the content words of a request: not a stop word, a question word, a
// name or a number.
func keywords(request string, names []string) map[string]bool {
	kw := map[string]bool{}
	for _, w := range words(request) {
		if stopWords[w] || questionWords[w] || isNameWord(w, names) || numberWords[w] || len(w) < 3 {
			continue
		}
		kw[stem(w)] = true
	}
	return kw
}

// stem folds plural and possessive forms together, crudely: "potatoes" and "potato",
// "times" and "time" meet.
func stem(w string) string {
	return strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "s"), "e")
}

// fallbackAnswer is said when the transcript holds no fact to answer from.
const fallbackAnswer = "Sorry, I did not hear anything in the conversation that answers that."

// heuristicAnswer is the offline answer: not a language model, a documented heuristic.
// It looks through the earlier utterances that were not requests to the assistant
// (facts, most recent first) for a number phrase ("forty five minutes", "six twenty")
// and answers with the one from the utterance that shares the most content words with
// the request (ties: the most recent), followed by that utterance as heard, as its
// evidence, in one sentence. With no number phrase anywhere it repeats the most recent
// fact sharing a content word, and otherwise says fallbackAnswer. It answers only from
// what was said, so arithmetic ("how many altogether") and world knowledge are out of
// its reach.
func heuristicAnswer(request string, facts []string, names []string) string {
	kw := keywords(request, names)
	overlap := func(line string) int {
		n := 0
		for _, w := range words(line) {
			if kw[stem(w)] {
				n++
			}
		}
		return n
	}
	best, bestLine, bestScore := "", "", -1
	related, relatedScore := "", 0
	for i := len(facts) - 1; i >= 0; i-- {
		score := overlap(facts[i])
		if ps := numberPhrases(words(facts[i])); len(ps) > 0 && score > bestScore {
			best, bestLine, bestScore = ps[len(ps)-1], facts[i], score
		}
		if score > relatedScore {
			related, relatedScore = facts[i], score
		}
	}
	switch {
	case best != "":
		// One sentence without inner punctuation: flite pauses at punctuation, and a
		// pause is a moment of silence the scorer sees.
		return "It's " + best + " as I heard " + quote(bestLine) + "."
	case related != "":
		return "I heard " + quote(related) + "."
	}
	return fallbackAnswer
}

// maxQuoted bounds the evidence an answer reads back. The 31 s preamble names Aria, so
// with spotting it is transcribed and remembered, and quoted whole it made a 30 s answer
// whose synthesis charge pushed it past the N4 gap.
const maxQuoted = 12

// quote is an utterance's first maxQuoted words.
func quote(line string) string {
	ws := strings.Fields(line)
	if len(ws) <= maxQuoted {
		return line
	}
	return strings.Join(ws[:maxQuoted], " ")
}
