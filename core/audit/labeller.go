package audit

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// The text labeller: the strongest labeller the project writes without a model. It reads
// only words, punctuation and position (each turn, the turn before it, the turn after
// it), never the labels, and labels every turn of a scenario. Its rules are the shortcuts
// issue 28 found in open v1, written generally (any vocative "assistant", any "you're
// keeping the X", any "the one that's been listening", "..." for muttering), plus cue
// phrases it mines from the dev split (Tune): word 3-grams that mark implicit requests
// there. Tune also picks how much evidence a turn needs to be called an implicit request,
// the least that keeps false alarms within TextMaxFalseAlarm on dev.

var (
	// A wake word of another device: the turn is N2 to a device.
	wakeWord = regexp.MustCompile(`(?i)^\W*(hey|ok|okay|hi)?\s*,?\s*(siri|alexa|google|cortana|bixby|computer|echo)\b`)
	// Muttering, trailing off, self-correction: N3.
	mutter = regexp.MustCompile(`\.\.\.|…`)
	// A resolution of a question put to Aria: the next turn answers it or withdraws it.
	resolution = regexp.MustCompile(`(?i)\b(never ?mind|forget it|don't worry|no need|scratch that|found it|got it|it says|says so|it's on the|on the (box|label|packet|bag|wrapper|sign|portal|email|statement|ticket|receipt|menu|card|screen|app))\b`)
	// Aria named as the one spoken to: a vocative ("Aria, ...", "..., Aria?", "Hey Aria").
	vocative = regexp.MustCompile(`(?i)(^|[,.!?:;]\s*|\bhey\s+|\bok(ay)?\s+)aria\s*[,?.!:;]|,\s*aria\W*$`)
	// Talk about the assistant without the name (rule 4's hand-overs): N1.
	aboutAssistant = regexp.MustCompile(`(?i)\b(the assistant|assistant's|been listening|always listening|never sleeps|ask the one|ask whatever|ask the thing|ask the machine)\b`)
	// A question or request form.
	question = regexp.MustCompile(`(?i)\?|^\W*(what|how|when|which|who|where|can|could|tell|work out|figure|give|read|spell|remind)\b`)
	// Implicit addressing cues in the turn itself (issue 28's findings, written generally).
	tCues = []*regexp.Regexp{
		regexp.MustCompile(`(?i)^\W*(ok(ay)?|right|so|fine|well)?\W*assistant\b`),
		regexp.MustCompile(`(?i)\byou('re| are|'ve been| have been) (keeping|running|tracking|logging|minding|holding|on|in charge of|the one|doing|counting|noting|timing|scoring|handling)\b`),
		regexp.MustCompile(`(?i)\b(whatever|whoever|the one|the thing|the machine|the speaker|the box|the device|the assistant|something)('s| is| that's| that has| has)? (been )?(listening|keeping|taking|tracking|logging|following|hearing|catching)\b`),
		regexp.MustCompile(`(?i)\b(question|quick one|one|a question|query) for (whatever|whoever|the one|the thing|the machine|the assistant|the speaker|the box|you)\b`),
		regexp.MustCompile(`(?i)\b(since|as) you('re| are|'ve)\b`),
		regexp.MustCompile(`(?i)\byou (heard|caught|logged|noted|took down|have it|got all that|were listening)\b`),
	}
	// Setup cues in the turn before: it hands the question over without the name.
	setupCues = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\bask (the|whatever|whoever|it|that)\b`),
		regexp.MustCompile(`(?i)\b(let's|lets|we'll|i'll|just) ask\b`),
		regexp.MustCompile(`(?i)\b(listening|never sleeps|always on|the assistant|the machine|the speaker)\b`),
	}
)

// Labeller is a tuned text labeller.
type Labeller struct {
	// Phrases are the cue 3-grams mined from dev.
	Phrases []string `json:"phrases"`
	// MinEvidence is the evidence a turn needs to be called an implicit request.
	MinEvidence int `json:"min_evidence"`
}

// evidence is how strongly turn i of s reads as an implicit request: one point per cue
// rule of the turn, per setup cue of the turn before, per mined phrase; 0 for a turn
// that is no question, names Aria, calls another device or mutters.
func (l *Labeller) evidence(s *dataset.Scenario, i int) int {
	text := norm(s.Turns[i].Text)
	if !question.MatchString(text) || dataset.NamesAria(text) || wakeWord.MatchString(text) || mutter.MatchString(text) {
		return 0
	}
	n := 0
	for _, re := range tCues {
		if re.MatchString(text) {
			n++
		}
	}
	if i > 0 {
		prev := norm(s.Turns[i-1].Text)
		for _, re := range setupCues {
			if re.MatchString(prev) {
				n++
			}
		}
	}
	grams := trigrams(text)
	for _, p := range l.Phrases {
		if grams[p] {
			n++
		}
	}
	return n
}

// Label labels every turn of s from its text alone.
func (l *Labeller) Label(s *dataset.Scenario) []string {
	out := make([]string, len(s.Turns))
	for i := range s.Turns {
		text := norm(s.Turns[i].Text)
		switch {
		case i > 0 && out[i-1] == protocol.LabelN4Q:
			out[i] = protocol.LabelN4R
		case wakeWord.MatchString(text):
			out[i] = protocol.LabelN2
		case vocative.MatchString(text) && question.MatchString(text):
			if resolved(s, i) {
				out[i] = protocol.LabelN4Q
			} else {
				out[i] = protocol.LabelT
			}
		case dataset.NamesAria(text):
			out[i] = protocol.LabelN1
		case mutter.MatchString(text):
			out[i] = protocol.LabelN3
		case l.MinEvidence > 0 && l.evidence(s, i) >= l.MinEvidence:
			if resolved(s, i) {
				out[i] = protocol.LabelN4Q
			} else {
				out[i] = protocol.LabelT
			}
		case aboutAssistant.MatchString(text):
			out[i] = protocol.LabelN1
		default:
			out[i] = protocol.LabelN2
		}
	}
	oneRequest(s, out)
	return out
}

// resolved reads whether the turn after a question to Aria withdraws or answers it in
// words ("never mind", "it says"), or the asker speaks again at once: an N4 event.
func resolved(s *dataset.Scenario, i int) bool {
	if i+1 >= len(s.Turns) {
		return false
	}
	next := s.Turns[i+1]
	return next.Speaker == s.Turns[i].Speaker || resolution.MatchString(norm(next.Text))
}

// answersAsker reads whether the turn after i answers its asker by name (a weaker sign of
// an N4 event, as the turn after a request may name the asker too).
func answersAsker(s *dataset.Scenario, i int) bool {
	if i+1 >= len(s.Turns) {
		return false
	}
	name := strings.ToLower(s.Names[s.Turns[i].Speaker])
	return name != "" && regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`).MatchString(norm(s.Turns[i+1].Text))
}

// oneRequest keeps one T a scenario (a scenario has exactly one): when several turns read
// as requests, those whose next turn answers the asker by name are N4 questions, unless
// that would leave none.
func oneRequest(s *dataset.Scenario, out []string) {
	var ts, open []int
	for i, l := range out {
		if l == protocol.LabelT {
			ts = append(ts, i)
			if !answersAsker(s, i) {
				open = append(open, i)
			}
		}
	}
	if len(ts) < 2 || len(open) == 0 {
		return
	}
	for _, i := range ts {
		if !slices.Contains(open, i) {
			out[i] = protocol.LabelN4Q
			if i+1 < len(out) {
				out[i+1] = protocol.LabelN4R
			}
		}
	}
}

// Score is how a labeller does on a set.
type Score struct {
	Turns int `json:"turns"`
	Agree int `json:"agree"`
	// Kappa is Cohen's kappa between its labels and the set's.
	Kappa float64 `json:"kappa"`
	// Implicit is the implicit requests (T of implicit versions), Found those it labels T.
	Implicit int `json:"implicit_requests"`
	Found    int `json:"found"`
	// Negatives is the N1-N3 turns, FalseAlarms those it labels T.
	Negatives   int `json:"n1_n3_turns"`
	FalseAlarms int `json:"false_alarms"`
}

// Recall is the share of implicit requests found.
func (s Score) Recall() float64 { return ratio(s.Found, s.Implicit) }

// FalseAlarmRate is the share of N1-N3 turns labelled T.
func (s Score) FalseAlarmRate() float64 { return ratio(s.FalseAlarms, s.Negatives) }

// Agreement is the share of turns labelled as the set labels them.
func (s Score) Agreement() float64 { return ratio(s.Agree, s.Turns) }

// ScoreOn labels every scenario of scs and compares with the set's labels.
func (l *Labeller) ScoreOn(scs []dataset.Scenario) Score {
	var sc Score
	conf := map[[2]string]int{}
	for k := range scs {
		s := &scs[k]
		got := l.Label(s)
		for i, t := range s.Turns {
			sc.Turns++
			conf[[2]string{t.Label, got[i]}]++
			if got[i] == t.Label {
				sc.Agree++
			}
			switch t.Label {
			case protocol.LabelT:
				if s.Condition == protocol.Implicit {
					sc.Implicit++
					if got[i] == protocol.LabelT {
						sc.Found++
					}
				}
			case protocol.LabelN1, protocol.LabelN2, protocol.LabelN3:
				sc.Negatives++
				if got[i] == protocol.LabelT {
					sc.FalseAlarms++
				}
			}
		}
	}
	sc.Kappa = kappa(conf, sc.Turns)
	return sc
}

// Phrase mining: a 3-gram is a cue phrase when it occurs in at least minPhraseHits
// implicit requests of dev and at least minPhrasePrecision of the dev turns holding it
// are implicit requests.
const (
	minPhraseHits      = 2
	minPhrasePrecision = 0.8
	maxEvidence        = 6
)

// Tune builds the labeller from dev: it mines the cue phrases, then takes the least
// evidence that keeps false alarms on dev within TextMaxFalseAlarm.
func Tune(dev []dataset.Scenario) *Labeller {
	inT, all := map[string]int{}, map[string]int{}
	for _, s := range dev {
		ti := s.TIndex()
		for i, t := range s.Turns {
			for g := range trigrams(norm(t.Text)) {
				all[g]++
				if i == ti && s.Condition == protocol.Implicit {
					inT[g]++
				}
			}
		}
	}
	l := &Labeller{}
	for g, n := range inT {
		if n >= minPhraseHits && float64(n) >= minPhrasePrecision*float64(all[g]) {
			l.Phrases = append(l.Phrases, g)
		}
	}
	sort.Strings(l.Phrases)
	for k := 1; k <= maxEvidence; k++ {
		l.MinEvidence = k
		if l.ScoreOn(dev).FalseAlarmRate() <= TextMaxFalseAlarm {
			return l
		}
	}
	l.MinEvidence = 0 // no evidence level is quiet enough: no implicit request is called
	return l
}

func kappa(conf map[[2]string]int, n int) float64 {
	if n == 0 {
		return 0
	}
	rows, cols := map[string]int{}, map[string]int{}
	agree := 0
	for k, c := range conf {
		rows[k[0]] += c
		cols[k[1]] += c
		if k[0] == k[1] {
			agree += c
		}
	}
	po := float64(agree) / float64(n)
	pe := 0.0
	for k, r := range rows {
		pe += float64(r) / float64(n) * float64(cols[k]) / float64(n)
	}
	if pe == 1 {
		return 1
	}
	return (po - pe) / (1 - pe)
}

var wordRE = regexp.MustCompile(`[a-z0-9']+`)

// norm lowercases text and writes curly apostrophes straight.
func norm(s string) string {
	return strings.NewReplacer("\u2019", "'", "\u2018", "'").Replace(strings.ToLower(s))
}

// trigrams is the set of word 3-grams of normalised text.
func trigrams(text string) map[string]bool {
	w := wordRE.FindAllString(text, -1)
	out := map[string]bool{}
	for i := 0; i+3 <= len(w); i++ {
		out[w[i]+" "+w[i+1]+" "+w[i+2]] = true
	}
	return out
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
