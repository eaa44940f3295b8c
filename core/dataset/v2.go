package dataset

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// The v2 fields of a scenario (issue 28, open v2): what kind of request T is, the words
// that carry the implicit cue, where the explicit T names Aria, and which turns are hard
// negatives. All are optional in the format, so open v1 (which has none) validates as it
// did; a v2 release requires them through its brief and `dataset audit` (core/audit).

// Tasks are the request kinds (Scenario.Task).
var Tasks = []string{
	"arithmetic",        // arithmetic on figures said in the room
	"recall",            // recalling what someone said: who, what, which
	"time-date",         // times and dates
	"unit-conversion",   // converting a quantity said aloud
	"code",              // repeating or spelling a code said aloud
	"choice",            // choosing among options said aloud by a stated rule
	"general-knowledge", // a fact not from the room, the gold short and checkable
	"counting",          // counting or listing what was said
}

// Addressing forms of an explicit T (Scenario.Addressing), as AddressingOf reads them.
const (
	AddressOpening   = "opening"    // "Aria, what's ...?"
	AddressEnd       = "end"        // "..., Aria?"
	AddressMid       = "mid"        // "So, Aria, what's ...?" / "what's ..., Aria, ...?"
	AddressHey       = "hey"        // "Hey Aria, ..."
	AddressNameAlone = "name-alone" // "Aria? ... What's ...?": the name alone, then the request
)

// Addressings lists the addressing forms.
var Addressings = []string{AddressOpening, AddressEnd, AddressMid, AddressHey, AddressNameAlone}

// Hard-negative tags of a turn (Turn.Tags) and the label each belongs on.
const (
	TagN1AddressesAria   = "n1_addresses_aria"       // N1 said to Aria that asks nothing ("Thanks, Aria")
	TagN1AboutAria       = "n1_about_aria"           // N1 question or remark about Aria ("Did Aria ever send that?")
	TagN2DeviceMentions  = "n2_device_mentions_aria" // N2 to a device that mentions Aria (rule 3)
	TagN2LookalikeRequst = "n2_lookalike_request"    // N2 to a named person that looks like a request to Aria
	TagRoleCueToHuman    = "role_cue_to_human"       // a role cue aimed at a named human ("You're keeping score, Tom, so ...")
)

// TurnTags maps each tag to the label (and, for N2, the addressee) it belongs on.
var TurnTags = map[string]struct{ Label, Addressee string }{
	TagN1AddressesAria:   {protocol.LabelN1, ""},
	TagN1AboutAria:       {protocol.LabelN1, ""},
	TagN2DeviceMentions:  {protocol.LabelN2, protocol.AddresseeDevice},
	TagN2LookalikeRequst: {protocol.LabelN2, protocol.AddresseeHuman},
	TagRoleCueToHuman:    {protocol.LabelN2, protocol.AddresseeHuman},
}

// Rules of the v2 fields.
const (
	RuleTask       Rule = "task"       // unknown task kind
	RuleCueText    Rule = "cue-text"   // cue_text on an explicit version, or not in the implicit turns up to T
	RuleAddressing Rule = "addressing" // unknown addressing form, on an implicit version, or not where T names Aria
	RuleTags       Rule = "tags"       // unknown tag, a tag twice, or on a turn of another label
	RulePairTask   Rule = "pair-task"  // the versions' task kinds differ
)

var (
	heyAria   = regexp.MustCompile(`(?i)\b(hey|hi|okay|ok)\s*,?\s+aria\b`)
	aloneAria = regexp.MustCompile(`(?i)^\W*aria\s*(\?|!|\.|…|—|-)+\s*\S`)
	openAria  = regexp.MustCompile(`(?i)^\W*aria\b`)
	endAria   = regexp.MustCompile(`(?i)\baria\W*$`)
)

// AddressingOf reads where a turn names Aria: "hey" for "Hey Aria" anywhere,
// "name-alone" for the name said alone ("Aria? ...") before the request, "opening" for
// a turn that begins with the name, "end" for one that ends with it, "mid" for a name
// elsewhere, "" when the turn does not name Aria.
func AddressingOf(text string) string {
	switch {
	case !NamesAria(text):
		return ""
	case heyAria.MatchString(text):
		return AddressHey
	case aloneAria.MatchString(text):
		return AddressNameAlone
	case openAria.MatchString(text):
		return AddressOpening
	case endAria.MatchString(text):
		return AddressEnd
	default:
		return AddressMid
	}
}

// hygieneV2 checks the v2 strings for control characters and length (hygiene's check).
func hygieneV2(s *Scenario, check func(turn int, field, v string, text bool, max int)) {
	check(-1, "task", s.Task, false, MaxIDLength)
	check(-1, "cue_text", s.CueText, true, MaxAnswerLength)
	check(-1, "addressing", s.Addressing, false, MaxIDLength)
	for i, t := range s.Turns {
		for _, tag := range t.Tags {
			check(i, "a tag", tag, false, MaxIDLength)
		}
	}
}

// validateV2 checks the v2 fields of one scenario version where they are given.
func validateV2(s *Scenario, add func(turn int, rule Rule, hint, format string, args ...any)) {
	if s.Task != "" && !slices.Contains(Tasks, s.Task) {
		add(-1, RuleTask, "use one of "+strings.Join(Tasks, ", "), "task %q is unknown", s.Task)
	}
	ti := s.TIndex()
	if s.CueText != "" {
		switch {
		case s.Condition != protocol.Implicit:
			add(-1, RuleCueText, "cue_text belongs on the implicit version", "cue_text on a %s version", s.Condition)
		case ti >= 0 && !cueTextIn(s.CueText, s.Turns[:ti+1]):
			add(ti, RuleCueText, "quote the cue's words as they stand in T or a turn before it", "cue_text %q is not in any turn up to T", s.CueText)
		}
	}
	if s.Addressing != "" {
		switch {
		case !slices.Contains(Addressings, s.Addressing):
			add(-1, RuleAddressing, "use one of "+strings.Join(Addressings, ", "), "addressing %q is unknown", s.Addressing)
		case s.Condition != protocol.Explicit:
			add(-1, RuleAddressing, "addressing belongs on the explicit version", "addressing on a %s version", s.Condition)
		case ti >= 0:
			if got := AddressingOf(s.Turns[ti].Text); got != s.Addressing {
				add(ti, RuleAddressing, "set addressing to where T names Aria (docs/dataset.md), or reword T", "addressing says %s, but T reads as %q", s.Addressing, got)
			}
		}
	}
	for i, t := range s.Turns {
		seen := map[string]bool{}
		for _, tag := range t.Tags {
			want, ok := TurnTags[tag]
			switch {
			case !ok:
				add(i, RuleTags, "use one of "+strings.Join(SortedKeys(TurnTags), ", "), "tag %q is unknown", tag)
			case seen[tag]:
				add(i, RuleTags, "give each tag once", "tag %s is given twice", tag)
			case t.Label != want.Label || (want.Addressee != "" && t.Addressee != want.Addressee):
				add(i, RuleTags, "tag the turn the hard negative is on, or relabel it", "tag %s belongs on %s %s turns, this is %s %s", tag, want.Label, want.Addressee, t.Label, t.Addressee)
			case (tag == TagN1AddressesAria || tag == TagN2DeviceMentions) && !NamesAria(t.Text):
				add(i, RuleTags, "the tag says the turn names Aria", "tag %s on a turn that does not name Aria", tag)
			}
			seen[tag] = true
		}
	}
}

// comparePairV2: both versions are the same request, so the same task kind.
func comparePairV2(e, im *Scenario, add func(turn int, rule Rule, hint, format string, args ...any)) {
	if e.Task != im.Task {
		add(-1, RulePairTask, "both versions ask the same thing", "task %q, the explicit version's %q", im.Task, e.Task)
	}
}

// cueTextIn reports whether cue occurs in one of the turns, ignoring case and spacing.
func cueTextIn(cue string, turns []Turn) bool {
	c := squash(cue)
	if c == "" {
		return false
	}
	for _, t := range turns {
		if strings.Contains(squash(t.Text), c) {
			return true
		}
	}
	return false
}

func squash(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// V2Counts are the v2 fields' counts for `dataset stats`.
type V2Counts struct {
	// Tasks counts pairs (their explicit versions) by task kind; "" is none given.
	Tasks map[string]int `json:"tasks,omitempty"`
	// Addressing counts explicit versions by the recorded addressing form.
	Addressing map[string]int `json:"addressing,omitempty"`
	// AnswerTypes counts pairs by the gold's answer type, and NonNumeric those whose gold
	// is no amount (NonNumeric).
	AnswerTypes map[string]int `json:"answer_types,omitempty"`
	NonNumeric  int            `json:"non_numeric,omitempty"`
	// CueText counts implicit versions that record cue_text.
	CueText int `json:"cue_text,omitempty"`
	// Tags counts turns of explicit versions by tag, and TagScenarios the explicit
	// versions holding at least one turn with the tag (the brief's rates are per scenario).
	Tags         map[string]int `json:"tags,omitempty"`
	TagScenarios map[string]int `json:"tag_scenarios,omitempty"`
}

func (c *V2Counts) add(s *Scenario) {
	if s.Condition == protocol.Implicit {
		if s.CueText != "" {
			c.CueText++
		}
		return
	}
	if s.Task != "" {
		inc(&c.Tasks, s.Task)
	}
	if s.Addressing != "" {
		inc(&c.Addressing, s.Addressing)
	}
	if s.AnswerType != "" {
		inc(&c.AnswerTypes, s.AnswerType)
		if NonNumeric(s) {
			c.NonNumeric++
		}
	}
	in := map[string]bool{}
	for _, t := range s.Turns {
		for _, tag := range t.Tags {
			inc(&c.Tags, tag)
			in[tag] = true
		}
	}
	for tag := range in {
		inc(&c.TagScenarios, tag)
	}
}

func inc(m *map[string]int, k string) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[k]++
}

func (c *V2Counts) empty() bool {
	return len(c.Tasks) == 0 && len(c.Addressing) == 0 && len(c.AnswerTypes) == 0 && c.CueText == 0 && len(c.Tags) == 0
}

func (c *V2Counts) print(w interface{ Write([]byte) (int, error) }, pairs, implicit int) {
	if c.empty() {
		return
	}
	pct := func(n, of int) float64 { return 100 * float64(n) / float64(max(of, 1)) }
	table := func(title string, m map[string]int, of int) {
		if len(m) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s\n", title)
		for _, k := range SortedKeys(m) {
			fmt.Fprintf(w, "  %-24s %6d  %5.1f%%\n", k, m[k], pct(m[k], of))
		}
	}
	table("task (pairs)", c.Tasks, pairs)
	table("answer type (pairs)", c.AnswerTypes, pairs)
	if len(c.AnswerTypes) > 0 {
		fmt.Fprintf(w, "  %-24s %6d  %5.1f%%\n", "no amount (name, text, yes/no, code with a letter)", c.NonNumeric, pct(c.NonNumeric, pairs))
	}
	table("addressing (explicit T)", c.Addressing, pairs)
	fmt.Fprintf(w, "\ncue_text recorded: %d of %d implicit versions\n", c.CueText, implicit)
	table("hard-negative tags (scenarios with one, explicit versions)", c.TagScenarios, pairs)
}
