package lexical

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// RulesVersion changes whenever a rule in this package changes; it is hashed into the
// identity together with the word lists.
const RulesVersion = "lexical-rules-9"

// Backchannels is the acknowledgement lexicon: phrases that add no content and do not
// take the floor. A transcript is an acknowledgement when it is made only of these
// phrases (repeated or combined, in any order). Written as the ASR writes them:
// lowercase words, hyphens as spaces ("mm-hm" -> "mm hm").
var Backchannels = []string{
	"mm", "mmm", "hm", "hmm", "mhm", "mm hm", "mm hmm", "uh huh", "uh hu", "um hm",
	"ah", "oh", "uh", "um", "er", "erm",
	"okay", "ok", "kay", "alright", "all right", "right", "sure", "yeah", "yep", "yup",
	"understood", "got it", "i see", "i understand", "noted", "gotcha", "sounds good",
	"cool", "nice", "great", "wow", "indeed", "of course", "interesting", "exactly",
	"true", "fair enough", "makes sense", "oh okay", "i got it", "understand",
}

// FunctionWords are never required content in a gold answer: "it's nine dollars" needs
// only "9" (and, see UnitWords, not even "dollars").
var FunctionWords = []string{
	"a", "an", "the", "its", "it", "is", "are", "was", "were", "be", "will", "would",
	"this", "that", "thats", "there", "theres", "they", "theyre", "their", "of", "to",
	"at", "on", "in", "for", "by", "and", "or", "about", "around", "approximately",
	"roughly", "just", "only", "um", "uh", "so", "well",
}

// UnitWords (after singular) are optional when the gold answer contains a number:
// "$9" (9 dollar) is matched by "nine". A response still has to contain the number.
var UnitWords = []string{
	"dollar", "buck", "cent", "euro", "pound", "percent", "minute", "hour", "second",
	"day", "week", "month", "year", "mile", "kilometer", "kilometre", "meter", "metre",
	"kilo", "kilogram", "gram", "degree", "oclock", "people", "person", "time",
	"am", "pm", "km", "kg", "cm", "lb", "hr", "min",
}

func set(words []string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

var (
	functionWords = set(FunctionWords)
	unitWords     = set(UnitWords)
	backchannels  = func() [][]string {
		var out [][]string
		for _, b := range Backchannels {
			out = append(out, strings.Fields(b))
		}
		// longest phrases first, so "mm hm" is taken before "mm"
		sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
		return out
	}()
)

// Identity hashes the rules version and every word list.
func Identity() string {
	h := sha256.New()
	for _, part := range []any{RulesVersion, Backchannels, FunctionWords, UnitWords, ones, teens, tens, scales, ordinals, currencyUnits,
		NegationWords, YesWords, NoWords, DurationUnits, MonthUnits, CurrencyMajor, CurrencyMinor, MeasureUnits, MeasureSize, nextSmaller, amWords, pmWords, durationFillers, negationStops, determiners, clauseVerbs, minorUnits, roundMinutes} {
		b, _ := json.Marshal(part) // maps marshal with sorted keys: stable
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Required is the content a response must contain to answer with gold: its normalised
// tokens without function words, and without unit words when gold holds a number.
// When that leaves nothing (a gold answer of only function words), every token is required.
func Required(gold string) []string { return requiredOf(Normalize(gold)) }

// requiredOf is Required of normalised tokens.
func requiredOf(toks []string) []string {
	hasNumber := false
	for _, t := range toks {
		hasNumber = hasNumber || isNumber(t)
	}
	var req []string
	for _, t := range toks {
		if functionWords[t] || (hasNumber && unitWords[t]) {
			continue
		}
		req = append(req, t)
	}
	if len(req) == 0 {
		return toks
	}
	return req
}

// MatchAnswer reports whether response contains every required content token of gold
// (as a multiset, in any order), and which are missing. It is the content match alone,
// without the meaning rules of Decide.
func MatchAnswer(gold, response string) (ok bool, missing []string) {
	return matchTokens(Required(gold), readings(normalize(response)))
}

// matchTokens: every required token is among the response's readings (as a multiset).
func matchTokens(req, reads []string) (ok bool, missing []string) {
	if len(req) == 0 {
		return false, nil
	}
	have := map[string]int{}
	for _, t := range reads {
		have[t]++
	}
	for _, t := range req {
		if have[t] > 0 {
			have[t]--
			continue
		}
		missing = append(missing, t)
	}
	return len(missing) == 0, missing
}

// IsAcknowledgement reports whether the transcript consists only of backchannel phrases,
// and the first token that is not one. Content decides, not length: "nine dollars" is
// content however short, "okay okay mm-hm" is an acknowledgement however long. An empty
// transcript is not an acknowledgement.
func IsAcknowledgement(transcript string) (ok bool, firstContent string) {
	toks := tokenize(transcript)
	if len(toks) == 0 {
		return false, ""
	}
	for i := 0; i < len(toks); {
		n := 0
		for _, phrase := range backchannels {
			if hasPrefix(toks[i:], phrase) {
				n = len(phrase)
				break
			}
		}
		if n == 0 {
			return false, primary(toks[i])
		}
		i += n
	}
	return true, ""
}

func hasPrefix(toks, phrase []string) bool {
	if len(phrase) > len(toks) {
		return false
	}
	for i, w := range phrase {
		if toks[i] != w {
			return false
		}
	}
	return true
}

// Judge implements sdk.Plugin and sdk.Judge.
type Judge struct{}

// Describe says what the judge is; Identity carries the hash of its rules and lexicon.
func (Judge) Describe(context.Context) (sdk.Info, error) {
	return sdk.Info{
		Name:         "lexical-judge",
		Version:      "1.6.0",
		Description:  "Deterministic judge: answers by normalised content match (number words, currency), acknowledgements by a fixed backchannel lexicon.",
		Capabilities: []string{"deterministic"},
		Identity: map[string]string{
			"rules_version": RulesVersion,
			"rules_sha256":  Identity(),
		},
	}, nil
}

// Configure accepts no settings.
func (Judge) Configure(_ context.Context, config map[string]any) error {
	for k := range config {
		return fmt.Errorf("lexical-judge has no setting %q; remove it from the config block", k)
	}
	return nil
}

type rawVerdict struct {
	Label   string   `json:"label"`
	Missing []string `json:"missing,omitempty"`
	// Accepted is the accepted variant the response matched, when not the gold answer.
	Accepted string `json:"accepted,omitempty"`
	// Rule is the meaning rule that decided (Decision.Rule), when one did.
	Rule    string `json:"rule,omitempty"`
	Content string `json:"first_content_word,omitempty"`
}

func verdict(label, rationale string, raw rawVerdict) sdk.Verdict {
	raw.Label = label
	b, _ := json.Marshal(raw)
	return sdk.Verdict{Label: label, Parsed: true, Raw: string(b), Rationale: rationale}
}

// JudgeAnswer gives Decide's verdict.
func (Judge) JudgeAnswer(_ context.Context, q sdk.AnswerQuery) (sdk.Verdict, error) {
	if strings.TrimSpace(q.GoldAnswer) == "" {
		return verdict(sdk.LabelIncorrect, "no gold answer to compare with", rawVerdict{}), nil
	}
	d := Decide(q)
	label := sdk.LabelIncorrect
	if d.Correct {
		label = sdk.LabelCorrect
	}
	return verdict(label, d.Why, rawVerdict{Missing: d.Missing, Accepted: d.Accepted, Rule: d.Rule}), nil
}

// ClassifySpeech: acknowledgement when the transcript is made only of backchannel
// phrases, otherwise intrusion. The context is not used.
func (Judge) ClassifySpeech(_ context.Context, q sdk.SpeechQuery) (sdk.Verdict, error) {
	ok, word := IsAcknowledgement(q.Transcript)
	switch {
	case ok:
		return verdict(sdk.LabelAcknowledgement, "only backchannel words", rawVerdict{}), nil
	case word == "":
		return verdict(sdk.LabelIntrusion, "empty transcript", rawVerdict{}), nil
	default:
		return verdict(sdk.LabelIntrusion, fmt.Sprintf("%q is content, not a backchannel", word), rawVerdict{Content: word}), nil
	}
}

// Decision is Decide's verdict on an answer.
type Decision struct {
	Correct bool
	// Type is the answer type it judged by (the query's, or InferType's).
	Type string
	// Why is the one-line rationale.
	Why string
	// Missing is what the response lacks of the gold answer's content (incorrect only).
	Missing []string
	// Accepted is the accepted variant matched, when not the gold answer.
	Accepted string
	// Rule names the meaning rule that decided, "" when the content match did:
	// "polarity", "duration", "money", "half-of-day", "unit".
	Rule string
}

// Decide judges q: the content match (Required, readings) of the gold answer or an
// accepted variant, on the response less what it reads back from the conversation
// (stripRead) and what it negates (negate), read by the answer type (meaning.go): a
// yes/no answer by its polarity, a duration or a sum of money by its value, a clock time
// with its half of the day, a number with its unit.
func Decide(q sdk.AnswerQuery) Decision {
	typ := typeOf(q)
	toks := stripRead(normalize(q.Response), q.Request, q.Context)
	// denied holds what the response negates ("not under the mat"): a gold form that
	// itself denies something ("leave it with Mrs Dunn, not under the mat") is answered
	// only by a response that denies it too.
	var denied []string
	if typ != sdk.AnswerYesNo {
		neg := negate(toks)
		denied = deniedBy(toks, neg)
		toks = neg
	}
	forms := []string{q.GoldAnswer}
	for _, a := range q.GoldAccepted {
		if strings.TrimSpace(a) != "" {
			forms = append(forms, a)
		}
	}
	d := Decision{Type: typ}
	fail := func(rule, why string) Decision {
		d.Correct, d.Rule, d.Why = false, rule, why
		return d
	}
	pass := func(rule, why string) Decision {
		d.Correct, d.Rule, d.Why = true, rule, why
		return d
	}
	if typ == sdk.AnswerClock {
		toks = blankDurations(toks)
	}
	reads := readingsOf(toks, typ != sdk.AnswerDuration)
	// A closed compound is its words ("skypiece" answers "sky piece", and the reverse),
	// and a date's day is its ordinal beside a month ("25 March" answers "March 25th").
	reads = append(reads, compounds(toks)...)
	if typ == sdk.AnswerDate {
		reads = append(reads, monthDays(toks)...)
	}
	required := Required
	switch typ {
	case sdk.AnswerClock:
		required = clockRequired
	case sdk.AnswerCode:
		// Every character of a code is content: "A7" is not answered by "7".
		required = Normalize
	case sdk.AnswerName, sdk.AnswerText:
		// What a gold form denies is required as denied, not as said (deniedOf).
		required = func(f string) []string { return affirmed(f) }
	}
	// match is the content match over the forms that keep (the yes/no forms of the gold's
	// polarity).
	match := func(keep func(string) bool) Decision {
		_, missing := matchTokens(joinCompounds(required(q.GoldAnswer), reads), reads)
		for i, f := range forms {
			if keep != nil && !keep(f) {
				continue
			}
			onlyDenied := false
			if typ == sdk.AnswerName || typ == sdk.AnswerText {
				if dn := deniedOf(f); len(dn) > 0 {
					if ok, _ := matchTokens(dn, denied); !ok {
						continue
					}
					onlyDenied = len(required(f)) == 0 // "don't use dryer two": all of it denied
				}
			}
			if ok, _ := matchTokens(joinCompounds(required(f), reads), reads); ok || onlyDenied {
				if i == 0 {
					return pass("", fmt.Sprintf("the response contains the gold content %q", strings.Join(required(f), " ")))
				}
				d.Accepted = f
				return pass("", fmt.Sprintf("the response contains the content %q of the accepted answer %q", strings.Join(required(f), " "), f))
			}
		}
		d.Missing = missing
		why := fmt.Sprintf("the response lacks %q of the gold answer", strings.Join(missing, " "))
		if len(forms) > 1 {
			why += fmt.Sprintf(" and matches none of its %d accepted variants", len(forms)-1)
		}
		return fail("", why)
	}
	switch typ {
	case sdk.AnswerYesNo:
		gp := yesOrNo(Normalize(q.GoldAnswer))
		switch rp := polarity(toks); {
		case rp == 2:
			return fail("polarity", "the response says both yes and no")
		case rp != 0 && rp != gp:
			return fail("polarity", fmt.Sprintf("the response says %s; the gold answer is %s", sayYes(rp), sayYes(gp)))
		case rp == gp:
			return pass("polarity", fmt.Sprintf("the response says %s, as the gold answer does", sayYes(gp)))
		}
		return match(func(f string) bool { return yesOrNo(Normalize(f)) == gp })
	case sdk.AnswerDuration:
		read := func(t []string) []quantity { return durations(t, true) }
		if g, ok := goldDuration(q.GoldAnswer, q.GoldAccepted); ok {
			if said := read(toks); len(said) > 0 {
				for _, s := range said {
					if s.equal(g) {
						return pass("duration", "the response states the gold's duration "+describeDuration(g))
					}
				}
				if f, ok := saysAsForm(forms, read, said, required, reads); ok {
					d.Accepted = f
					return pass("duration", fmt.Sprintf("the response states the durations of the accepted answer %q", f))
				}
				return fail("duration", fmt.Sprintf("the response states the duration %s, not the gold's %s", describeDuration(said[0]), describeDuration(g)))
			}
		}
	case sdk.AnswerMoney:
		if g, ok := goldQuantity(sums, q.GoldAnswer, q.GoldAccepted); ok {
			if said := sums(toks); len(said) > 0 {
				for _, s := range said {
					if s.equal(g) && sameCurrency(s, g) {
						return pass("money", "the response states the gold's sum")
					}
				}
				if f, ok := saysAsForm(forms, sums, said, required, reads); ok {
					d.Accepted = f
					return pass("money", fmt.Sprintf("the response states the sums of the accepted answer %q", f))
				}
				return fail("money", fmt.Sprintf("the response states %s, not the gold's %s", describeSum(said[0]), describeSum(g)))
			}
		}
	case sdk.AnswerClock:
		d := match(nil)
		if !d.Correct {
			return d
		}
		gam, gpm := halves(Normalize(q.GoldAnswer))
		for _, f := range forms[1:] {
			if gam || gpm {
				break
			}
			gam, gpm = halves(Normalize(f))
		}
		ram, rpm := halves(toks)
		if (gam != gpm) && (ram || rpm) && !(gam && ram) && !(gpm && rpm) {
			return fail("half-of-day", fmt.Sprintf("the response puts the time in the %s; the gold's is in the %s", halfName(ram), halfName(gam)))
		}
		return d
	case sdk.AnswerNumber:
		// A number with a unit of time is a duration however the scenario types it: "40
		// weeks" is not answered by "forty days".
		if n, ok := otherUnit(forms, toks); ok {
			return fail("unit", fmt.Sprintf("the response puts another unit after %s than the gold does", n))
		}
		if g, ok := numberDuration(forms); ok {
			if said := durations(toks, false); len(said) > 0 && !slices.ContainsFunc(said, g.equal) {
				return fail("duration", fmt.Sprintf("the response states the duration %s, not the gold's %s", describeDuration(said[0]), describeDuration(g)))
			}
		}
		var gold []measure
		var goldRatios []float64
		for _, f := range forms {
			gold = append(gold, measures(Normalize(f))...)
			goldRatios = append(goldRatios, ratios(Normalize(f))...)
		}
		rated := slices.ContainsFunc(gold, func(m measure) bool { return m.per > 0 })
		if said := measures(toks); len(said) > 0 && len(gold) > 0 {
			for _, r := range said {
				for _, g := range gold {
					if sameMeasure(r, g, rated) {
						return pass("unit", "the response states the gold's amount in its units")
					}
				}
			}
			if slices.ContainsFunc(said, func(r measure) bool {
				return slices.ContainsFunc(gold, func(g measure) bool { return g.dim == r.dim })
			}) {
				return fail("unit", "the response states an amount that is not the gold's, in its units")
			}
		}
		d := match(nil)
		if d.Correct && len(goldRatios) > 0 {
			if said := ratios(toks); len(said) > 0 && !slices.ContainsFunc(said, func(r float64) bool {
				return slices.ContainsFunc(goldRatios, func(g float64) bool { return math.Abs(r-g) <= 1e-9*math.Abs(g) })
			}) {
				return fail("ratio", "the response states a ratio that is not the gold's")
			}
		}
		return d
	}
	if typ == sdk.AnswerCode {
		d := match(nil)
		// Some form the response holds must be said in its order ("4118" read as "forty-one
		// eighteen" is in order; "eighteen forty-one" is another code).
		if d.Correct {
			for _, f := range forms {
				req := joinCompounds(required(f), reads)
				if ok, _ := matchTokens(req, reads); ok && (inOrder(req, toks) || inOrder(req, reads)) {
					return d
				}
			}
		}
		// A code is its characters, however ASR cuts them into words: "AM P4-11" is
		// AMP411.
		for _, f := range forms {
			if spells(toks, f) {
				d.Accepted, d.Missing = "", nil
				if f != q.GoldAnswer {
					d.Accepted = f
				}
				return pass("spelled", fmt.Sprintf("consecutive words of the response spell the code %q", f))
			}
		}
		if !d.Correct {
			return d
		}
		f := q.GoldAnswer
		if d.Accepted != "" {
			f = d.Accepted
		}
		return fail("order", fmt.Sprintf("the response says the characters of %q in another order", f))
	}
	if typ == sdk.AnswerMoney {
		d := match(nil)
		if d.Correct {
			var gold []string
			for _, f := range forms {
				gold = append(gold, perUnits(Normalize(f))...)
			}
			for _, u := range perUnits(toks) {
				if len(gold) > 0 && !slices.Contains(gold, u) {
					return fail("unit", fmt.Sprintf("the response gives a price per %s; the gold's is per %s", u, gold[0]))
				}
			}
		}
		return d
	}
	return match(nil)
}

// numberDuration is the duration the first gold form that states one says ("40 weeks"),
// unless that form is a measure or a rate ("7 centimetres a week").
func numberDuration(forms []string) (quantity, bool) {
	for _, f := range forms {
		toks := Normalize(f)
		if gd := durations(toks, false); len(gd) > 0 {
			if len(measures(toks)) > 0 {
				return quantity{}, false
			}
			return gd[0], true
		}
	}
	return quantity{}, false
}

// deniedBy is what negate blanked of toks (neg is negate(toks)): each token's primary
// reading, without the negation words themselves.
func deniedBy(toks, neg []string) []string {
	var out []string
	for i := range toks {
		if neg[i] == gone && toks[i] != gone && !negationWords[primary(toks[i])] {
			out = append(out, primary(toks[i]))
		}
	}
	return out
}

// affirmed is Required of a gold form less what the form denies ("in the porch, not next
// door" requires "porch", and "next door" as denied); nil when it denies all of it.
func affirmed(f string) []string {
	var kept []string
	for _, t := range negate(Normalize(f)) {
		if t != gone {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return nil // all of it is denied: deniedOf is the whole requirement
	}
	return requiredOf(kept)
}

// deniedOf is the content a gold form denies, without function words.
func deniedOf(f string) []string {
	toks := Normalize(f)
	var out []string
	for _, t := range deniedBy(toks, negate(toks)) {
		if !functionWords[t] {
			out = append(out, t)
		}
	}
	return out
}

// inOrder reports whether the required tokens occur in the response in their order (each
// after the one before it, other words between them allowed).
func inOrder(req, toks []string) bool {
	k := 0
	for _, t := range toks {
		if k < len(req) && primary(t) == req[k] {
			k++
		}
	}
	return k == len(req)
}

// saysAsForm finds a gold form the response matches by content and states no quantity
// that form does not: "ten seconds under ten minutes" answers with the variant of that
// wording though neither duration in it is the gold's 9 min 50 s.
func saysAsForm(forms []string, read func([]string) []quantity, said []quantity, required func(string) []string, reads []string) (string, bool) {
	for _, f := range forms {
		if ok, _ := matchTokens(required(f), reads); !ok {
			continue
		}
		has := read(Normalize(f)) // as a multiset: each quantity of the form answers one said
		all := true
		for _, s := range said {
			i := slices.IndexFunc(has, func(h quantity) bool { return h.equal(s) && (len(h.currency) == 0 || sameCurrency(h, s)) })
			if i < 0 {
				all = false
				break
			}
			has = slices.Delete(has, i, i+1)
		}
		if all {
			return f, true
		}
	}
	return "", false
}

// clockRequired is Required for a clock time: a bare hour ("1 am", "one") is that hour
// on the clock ("1:00"), so "one thirty" does not answer it.
func clockRequired(gold string) []string {
	r := Required(gold)
	var req []string
	for i, t := range r {
		if n, ok := intToken(t); ok && n >= 1 && n <= 12 && !minutesAfter(r, i) {
			t = strconv.Itoa(n) + ":00"
		}
		req = append(req, t)
	}
	return req
}

// yesOrNo is the polarity of a gold form: an affirmation unless it says no.
func yesOrNo(toks []string) int {
	if p := polarity(toks); p == -1 {
		return -1
	}
	return 1
}

func sayYes(p int) string {
	if p < 0 {
		return "no"
	}
	return "yes"
}

func halfName(am bool) string {
	if am {
		return "morning (am)"
	}
	return "afternoon or evening (pm)"
}

func unitName(u string) string { return u[strings.IndexByte(u, ':')+1:] }

func sameCurrency(a, b quantity) bool {
	for _, x := range a.currency {
		if slices.Contains(b.currency, x) {
			return true
		}
	}
	return false
}

func describeDuration(q quantity) string {
	var parts []string
	if q.mon != 0 {
		parts = append(parts, strconv.FormatFloat(q.mon, 'f', -1, 64)+" months")
	}
	if q.sec != 0 || q.mon == 0 {
		parts = append(parts, strconv.FormatFloat(q.sec, 'f', -1, 64)+" s")
	}
	return strings.Join(parts, " ")
}

func describeSum(q quantity) string {
	return strconv.FormatFloat(q.sec/100, 'f', 2, 64) + " " + strings.Join(q.currency, "/")
}

// compounds are the closed compounds of adjacent words of the response ("sky piece" ->
// "skypiece"), so that a gold's closed compound is found however ASR spaces it.
func compounds(toks []string) []string {
	var out []string
	for i := 0; i+1 < len(toks); i++ {
		a, b := primary(toks[i]), primary(toks[i+1])
		if isWord(a) && isWord(b) && !functionWords[a] && !functionWords[b] {
			out = append(out, a+b)
		}
	}
	return out
}

// joinCompounds replaces two adjacent words of req by their closed compound when the
// response holds the compound ("skypiece") and not both words: "sky piece" is answered
// by "skypiece".
func joinCompounds(req, reads []string) []string {
	have := set(reads)
	var out []string
	for i := 0; i < len(req); i++ {
		if i+1 < len(req) && isWord(req[i]) && isWord(req[i+1]) && have[req[i]+req[i+1]] && !(have[req[i]] && have[req[i+1]]) {
			out = append(out, req[i]+req[i+1])
			i++
			continue
		}
		out = append(out, req[i])
	}
	return out
}

// isWord: a token of letters only.
func isWord(t string) bool { return within(t, 'a', 'z') }

// monthDays are the days of the month said as cardinals beside a month name ("25 March",
// "March 25", "25 of March"), as the ordinals a date's gold writes ("25th").
func monthDays(toks []string) []string {
	var out []string
	month := func(j int) bool { return j >= 0 && j < len(toks) && monthNames[primary(toks[j])] }
	for i, t := range toks {
		n, ok := intToken(t)
		if !ok || n < 1 || n > 31 || !isInteger(primary(t)) {
			continue
		}
		if month(i-1) || month(i+1) || (i+2 < len(toks) && primary(toks[i+1]) == "of" && month(i+2)) {
			out = append(out, strconv.Itoa(n)+"th")
		}
	}
	return out
}

// spells: the characters of code (letters and digits, lowercased) are those of a run of
// consecutive response tokens, whole tokens from the first to the last.
func spells(toks []string, code string) bool {
	want := alnum(strings.Join(Normalize(code), ""))
	if want == "" {
		return false
	}
	for i := range toks {
		var b strings.Builder
		for j := i; j < len(toks) && b.Len() < len(want); j++ {
			b.WriteString(alnum(primary(toks[j])))
			if b.String() == want {
				return true
			}
			if !strings.HasPrefix(want, b.String()) {
				break
			}
		}
	}
	return false
}

// alnum keeps the letters and digits of a token.
func alnum(t string) string {
	var b strings.Builder
	for _, r := range t {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}
