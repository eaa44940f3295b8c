package lexical

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// RulesVersion changes whenever a rule in this package changes; it is hashed into the
// identity together with the word lists.
const RulesVersion = "lexical-rules-3"

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
	for _, part := range []any{RulesVersion, Backchannels, FunctionWords, UnitWords, ones, teens, tens, scales, ordinals, currencyUnits} {
		b, _ := json.Marshal(part) // maps marshal with sorted keys: stable
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Required is the content a response must contain to answer with gold: its normalised
// tokens without function words, and without unit words when gold holds a number.
// When that leaves nothing (a gold answer of only function words), every token is required.
func Required(gold string) []string {
	toks := Normalize(gold)
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
// (as a multiset, in any order), and which are missing.
func MatchAnswer(gold, response string) (ok bool, missing []string) {
	req := Required(gold)
	if len(req) == 0 {
		return false, nil
	}
	have := map[string]int{}
	for _, t := range readings(normalize(response)) {
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
		Version:      "1.0.0",
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
	Content  string `json:"first_content_word,omitempty"`
}

func verdict(label, rationale string, raw rawVerdict) sdk.Verdict {
	raw.Label = label
	b, _ := json.Marshal(raw)
	return sdk.Verdict{Label: label, Parsed: true, Raw: string(b), Rationale: rationale}
}

// JudgeAnswer: correct when the response contains every required content token of the
// gold answer or of one of its accepted variants (q.GoldAccepted; see Required). The
// request and context are not used. An incorrect verdict names what the response lacks
// of the gold answer itself.
func (Judge) JudgeAnswer(_ context.Context, q sdk.AnswerQuery) (sdk.Verdict, error) {
	if strings.TrimSpace(q.GoldAnswer) == "" {
		return verdict(sdk.LabelIncorrect, "no gold answer to compare with", rawVerdict{}), nil
	}
	ok, missing := MatchAnswer(q.GoldAnswer, q.Response)
	if ok {
		return verdict(sdk.LabelCorrect, fmt.Sprintf("the response contains the gold content %q", strings.Join(Required(q.GoldAnswer), " ")), rawVerdict{}), nil
	}
	for _, alt := range q.GoldAccepted {
		if strings.TrimSpace(alt) == "" {
			continue
		}
		if ok, _ := MatchAnswer(alt, q.Response); ok {
			return verdict(sdk.LabelCorrect, fmt.Sprintf("the response contains the content %q of the accepted answer %q", strings.Join(Required(alt), " "), alt), rawVerdict{Accepted: alt}), nil
		}
	}
	why := fmt.Sprintf("the response lacks %q of the gold answer", strings.Join(missing, " "))
	if len(q.GoldAccepted) > 0 {
		why += fmt.Sprintf(" and matches none of its %d accepted variants", len(q.GoldAccepted))
	}
	return verdict(sdk.LabelIncorrect, why, rawVerdict{Missing: missing}), nil
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
