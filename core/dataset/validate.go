package dataset

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/termsafe"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Rule names a constraint. Every violation carries one, so reports can be grepped and
// tests can assert which rule fired.
type Rule string

// The rules (protocol.md section 2, the pair rules, and the synthesised-clip rules).
const (
	RuleParse          Rule = "parse"           // the line is not a scenario object
	RuleScenarioID     Rule = "scenario-id"     // empty or duplicate scenario id
	RulePairID         Rule = "pair-id"         // empty pair id
	RuleCondition      Rule = "condition"       // not explicit or implicit
	RuleAttributes     Rule = "attributes"      // one of the five attributes is empty
	RuleSpeakers       Rule = "speakers"        // not 3 or 4 distinct speakers, or a speaker who never talks
	RuleTurnSpeaker    Rule = "turn-speaker"    // a turn's speaker is not in speakers
	RuleTurnText       Rule = "turn-text"       // a turn has empty text
	RuleLabel          Rule = "label"           // unknown label
	RuleTCount         Rule = "t-count"         // not exactly one T
	RuleTFirst         Rule = "t-first"         // T is the first turn
	RuleTLast          Rule = "t-last"          // no turn follows T
	RuleTPosition      Rule = "t-position"      // unknown bucket, or T not in its bucket
	RuleN4Question     Rule = "n4-question"     // N4_Q not immediately followed by N4_R
	RuleN4Resolution   Rule = "n4-resolution"   // N4_R not immediately after N4_Q
	RuleAddressee      Rule = "addressee"       // N2 without human/device, or an addressee on another label
	RuleGoldAnswer     Rule = "gold-answer"     // empty gold answer
	RuleExplicitName   Rule = "explicit-name"   // explicit T does not name Aria
	RuleImplicitName   Rule = "implicit-name"   // implicit T names Aria
	RulePairMissing    Rule = "pair-missing"    // a pair lacks a version, or has one twice
	RulePairTurnCount  Rule = "pair-turn-count" // versions differ in turn count outside N4 events
	RulePairLabels     Rule = "pair-labels"     // versions differ in label sequence outside N4 events
	RulePairGold       Rule = "pair-gold"       // versions differ in gold answer
	RulePairRewrite    Rule = "pair-rewrite"    // versions differ outside T, the turn before it and N4 events
	RulePairN4Edit     Rule = "pair-n4-edit"    // the versions' N4 events differ (a warning)
	RulePairSameT      Rule = "pair-same-t"     // both versions have the same T text
	RulePairTSpeaker   Rule = "pair-t-speaker"  // the versions' T turns have different speakers
	RulePairTPosition  Rule = "pair-t-position" // the versions' T sit in different position buckets (a warning)
	RuleClipMissing    Rule = "clip-missing"    // some turns are synthesised, this one is not
	RuleClipUnreadable Rule = "clip-unreadable" // the clip file is missing or not a readable WAV
	RuleClipDuration   Rule = "clip-duration"   // duration_s missing or not the clip's length
	RuleClipFormat     Rule = "clip-format"     // not the 16-bit mono WAV at the dataset's rate the build writes
	RuleClipHash       Rule = "clip-hash"       // the clip's bytes differ from the SHA-256 the build recorded
	RuleClipTooLong    Rule = "clip-too-long"   // a clip longer than MaxClipSeconds
	RulePreamble       Rule = "preamble"        // the dataset's preamble clip is missing or unreadable
	RuleManifestHash   Rule = "manifest-hash"   // dataset.json's content hash does not match scenarios.jsonl
	RuleManifestCounts Rule = "manifest-counts" // dataset.json's counts do not match
	RuleControlChar    Rule = "control-char"    // a control character in a scenario's text, ids or answers
	RuleLength         Rule = "length"          // an id, label or answer longer than its bound
	RuleAnswerType     Rule = "answer-type"     // answer_type is not one of sdk.AnswerTypes
	RuleScenarioSize   Rule = "scenario-size"   // more turns or audio than a conversation's bounds (protocol.MaxTurns, MaxScenarioSeconds)
)

// Bounds of a scenario's short strings (turn text has MaxTurnText).
const (
	MaxIDLength     = 128  // characters of scenario_id, pair_id, a speaker, a label, an attribute, a name
	MaxAnswerLength = 1000 // characters of gold_answer, each gold_accepted answer and the cue
)

// hygiene checks every string of s for control characters (tab and newline are allowed
// in text: turns, answers, the cue) and the short ones for their length. Ids and answers
// reach terminals, logs, file names and the report: an ESC sequence there clears a
// screen or sets a title, and a 200 KB id is no id.
func hygiene(s *Scenario, add func(turn int, rule Rule, hint, format string, args ...any)) {
	check := func(turn int, field, v string, text bool, max int) {
		if !text {
			// Ids and labels: no invisible character either (a zero-width space made two
			// pair ids that print alike); they are NFC already (parseScenario).
			if r, i, bad := termsafe.Invisible(v); bad {
				what := "invisible"
				if unicode.IsControl(r) {
					what = "control"
				}
				add(turn, RuleControlChar, "remove it; ids and labels are one line of visible text",
					"%s has the %s character %U at byte %d", field, what, r, i)
			}
		} else {
			for i, r := range v {
				if r == '\t' || r == '\n' {
					continue
				}
				if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') {
					add(turn, RuleControlChar, "remove it; text may hold tabs and newlines, no other control character",
						"%s has the control character %U at byte %d", field, r, i)
					break
				}
			}
		}
		if n := utf8.RuneCountInString(v); n > max {
			add(turn, RuleLength, "shorten it", "%s has %d characters; at most %d", field, n, max)
		}
	}
	check(-1, "scenario_id", s.ScenarioID, false, MaxIDLength)
	check(-1, "pair_id", s.PairID, false, MaxIDLength)
	check(-1, "condition", s.Condition, false, MaxIDLength)
	check(-1, "t_position", s.TPosition, false, MaxIDLength)
	a := s.Attributes
	for _, f := range []struct{ name, v string }{
		{"setting", a.Setting}, {"activity", a.Activity}, {"relationship", a.Relationship},
		{"devices", a.Devices}, {"register", a.Register},
	} {
		check(-1, "attribute "+f.name, f.v, false, MaxAnswerLength)
	}
	for _, sp := range s.Speakers {
		check(-1, "a speaker", sp, false, MaxIDLength)
	}
	check(-1, "gold_answer", s.GoldAnswer, true, MaxAnswerLength)
	for i, g := range s.GoldAccepted {
		check(-1, fmt.Sprintf("gold_accepted[%d]", i), g, true, MaxAnswerLength)
	}
	check(-1, "cue", s.Cue, true, MaxAnswerLength)
	for k, v := range s.Names {
		check(-1, "a names key", k, false, MaxIDLength)
		check(-1, "names["+strconv.Quote(k)+"]", v, false, MaxIDLength)
	}
	for i, t := range s.Turns {
		check(i, "speaker", t.Speaker, false, MaxIDLength)
		check(i, "text", t.Text, true, 1<<62) // its bound is RuleTurnText's
		check(i, "label", t.Label, false, MaxIDLength)
		check(i, "addressee", t.Addressee, false, MaxIDLength)
		check(i, "clip", t.Clip, false, 4096)
	}
	hygieneV2(s, check)
}

// Violation is one broken rule. Turn is the 0-based turn index, or -1 when the rule is
// about the whole scenario, pair or dataset. A Warning is a difference the protocol
// allows but that is worth knowing (docs/protocol.md section 2.3): Validate never returns
// one, Warnings does, and `dataset validate --strict` treats them as errors.
type Violation struct {
	File       string `json:"file,omitempty"`
	Line       int    `json:"line,omitempty"`
	ScenarioID string `json:"scenario_id,omitempty"`
	Turn       int    `json:"turn"`
	Rule       Rule   `json:"rule"`
	Message    string `json:"message"`
	Hint       string `json:"hint,omitempty"`
	Warning    bool   `json:"warning,omitempty"`
}

func (v Violation) String() string {
	var b strings.Builder
	if v.File != "" {
		b.WriteString(v.File)
		if v.Line > 0 {
			fmt.Fprintf(&b, ":%d", v.Line)
		}
		b.WriteString(": ")
	}
	if v.ScenarioID != "" {
		fmt.Fprintf(&b, "scenario %s: ", termsafe.Short(v.ScenarioID, MaxIDLength))
	}
	if v.Turn >= 0 {
		fmt.Fprintf(&b, "turn %d: ", v.Turn)
	}
	if v.Warning {
		b.WriteString("warning: ")
	}
	fmt.Fprintf(&b, "[%s] %s", v.Rule, v.Message)
	if v.Hint != "" {
		fmt.Fprintf(&b, " (%s)", v.Hint)
	}
	// Ids and messages carry the scenario's own text: a terminal must show it, not obey it.
	return termsafe.String(b.String())
}

var ariaName = regexp.MustCompile(`(?i)\baria\b`)

// NamesAria reports whether text addresses or mentions Aria by name.
func NamesAria(text string) bool { return ariaName.MatchString(text) }

// TBucket is the position bucket of a T at index i in a scenario of n turns. T can sit
// at indices 1..n-2 (never first, never last); that range is cut into thirds:
// early-middle, middle, late-middle. ok is false when i is outside that range.
func TBucket(i, n int) (bucket string, ok bool) {
	if n < 3 || i < 1 || i > n-2 {
		return "", false
	}
	slots := n - 2
	r := float64(i-1) / float64(slots) // in [0, 1)
	switch {
	case r < 1.0/3:
		return protocol.TPositions[0], true
	case r < 2.0/3:
		return protocol.TPositions[1], true
	default:
		return protocol.TPositions[2], true
	}
}

// ValidateScenario checks the rules of one scenario version (not the pair rules and
// not the clips).
func ValidateScenario(s *Scenario) []Violation {
	var vs []Violation
	add := func(turn int, rule Rule, hint, format string, args ...any) {
		vs = append(vs, Violation{ScenarioID: s.ScenarioID, Turn: turn, Rule: rule, Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	hygiene(s, add)
	if strings.TrimSpace(s.ScenarioID) == "" {
		add(-1, RuleScenarioID, "give every scenario version a unique scenario_id", "scenario_id is empty")
	}
	if strings.TrimSpace(s.PairID) == "" {
		add(-1, RulePairID, "both versions of a pair share one pair_id", "pair_id is empty")
	}
	if s.Condition != protocol.Explicit && s.Condition != protocol.Implicit {
		add(-1, RuleCondition, "use \"explicit\" or \"implicit\"", "condition %q is not explicit or implicit", s.Condition)
	}
	a := s.Attributes
	for _, f := range []struct{ name, v string }{
		{"setting", a.Setting}, {"activity", a.Activity}, {"relationship", a.Relationship},
		{"devices", a.Devices}, {"register", a.Register},
	} {
		if strings.TrimSpace(f.v) == "" {
			add(-1, RuleAttributes, "fill in all five attributes", "attribute %s is empty", f.name)
		}
	}
	if strings.TrimSpace(s.GoldAnswer) == "" {
		add(-1, RuleGoldAnswer, "state the correct answer to the T request", "gold_answer is empty")
	}
	if s.AnswerType != "" && !slices.Contains(sdk.AnswerTypes, s.AnswerType) {
		add(-1, RuleAnswerType, "use one of "+strings.Join(sdk.AnswerTypes, ", ")+", or leave it out to let the judge infer it", "answer_type %q is unknown", s.AnswerType)
	}

	// Speakers: 3 or 4 distinct listed, each turn by a listed speaker, each listed
	// speaker talks.
	listed := map[string]bool{}
	for _, sp := range s.Speakers {
		if strings.TrimSpace(sp) == "" {
			add(-1, RuleSpeakers, "speakers are non-empty labels such as A, B, C, D", "an empty speaker label is listed")
			continue
		}
		if listed[sp] {
			add(-1, RuleSpeakers, "list each speaker once", "speaker %q is listed twice", sp)
		}
		listed[sp] = true
	}
	if len(listed) < 3 || len(listed) > 4 {
		add(-1, RuleSpeakers, "a scenario has 3 or 4 human speakers", "%d distinct speakers listed, want 3 or 4", len(listed))
	}
	spoke := map[string]bool{}
	for i, t := range s.Turns {
		if !listed[t.Speaker] {
			add(i, RuleTurnSpeaker, "add the speaker to speakers or fix the turn", "speaker %q is not in speakers %v", t.Speaker, s.Speakers)
		}
		spoke[t.Speaker] = true
	}
	for _, sp := range s.Speakers {
		if listed[sp] && !spoke[sp] && len(s.Turns) > 0 {
			add(-1, RuleSpeakers, "give the speaker a turn or drop them from speakers", "speaker %q never talks", sp)
		}
	}

	// The bounds of a conversation (docs/protocol.md section 2.2).
	if n := len(s.Turns); n > protocol.MaxTurns {
		add(-1, RuleScenarioSize, "split it into several scenarios", "%d turns; a scenario has at most %d", n, protocol.MaxTurns)
	}
	audioS := 0.0
	for _, t := range s.Turns {
		audioS += t.DurationS + t.GapAfterS
	}
	if audioS > protocol.MaxScenarioSeconds {
		add(-1, RuleScenarioSize, "split it into several scenarios, or shorten its turns",
			"%.1f s of audio (its clips and natural gaps); a scenario has at most %g s", audioS, protocol.MaxScenarioSeconds)
	}

	// Turns: text, labels, addressees, N4 adjacency.
	tCount := 0
	for i, t := range s.Turns {
		if strings.TrimSpace(t.Text) == "" {
			add(i, RuleTurnText, "every turn is spoken: give it text", "text is empty")
		} else if n := utf8.RuneCountInString(t.Text); n > MaxTurnText {
			add(i, RuleTurnText, "split it into several turns, or shorten it", "text has %d characters; a turn has at most %d (about a minute spoken)", n, MaxTurnText)
		}
		switch t.Label {
		case protocol.LabelT:
			tCount++
		case protocol.LabelN1, protocol.LabelN2, protocol.LabelN3, protocol.LabelN4Q, protocol.LabelN4R:
		default:
			add(i, RuleLabel, "use one of T, N1, N2, N3, N4_Q, N4_R", "label %q is unknown", t.Label)
		}
		if t.Label == protocol.LabelN2 {
			if t.Addressee != protocol.AddresseeHuman && t.Addressee != protocol.AddresseeDevice {
				add(i, RuleAddressee, "an N2 turn says whom it addresses: \"human\" or \"device\"", "N2 addressee %q is not human or device", t.Addressee)
			}
		} else if t.Addressee != "" && t.Addressee != "none" {
			add(i, RuleAddressee, "only N2 turns carry an addressee; drop it or relabel the turn", "%s turn has addressee %q", t.Label, t.Addressee)
		}
		if t.Label == protocol.LabelN4Q && (i+1 >= len(s.Turns) || s.Turns[i+1].Label != protocol.LabelN4R) {
			add(i, RuleN4Question, "follow every N4_Q immediately with the N4_R that resolves it", "N4_Q is not immediately followed by N4_R")
		}
		if t.Label == protocol.LabelN4R && (i == 0 || s.Turns[i-1].Label != protocol.LabelN4Q) {
			add(i, RuleN4Resolution, "an N4_R resolves the N4_Q right before it", "N4_R does not immediately follow an N4_Q")
		}
	}
	if len(s.Turns) == 0 {
		add(-1, RuleTCount, "a scenario has turns, exactly one of them T", "scenario has no turns")
	} else if tCount != 1 {
		add(-1, RuleTCount, "a scenario has exactly one T turn", "%d T turns, want exactly 1", tCount)
	}

	// T placement and naming.
	valid := map[string]bool{}
	for _, p := range protocol.TPositions {
		valid[p] = true
	}
	if !valid[s.TPosition] {
		add(-1, RuleTPosition, "use early-middle, middle or late-middle", "t_position %q is unknown", s.TPosition)
	}
	if ti := s.TIndex(); ti >= 0 {
		n := len(s.Turns)
		if ti == 0 {
			add(ti, RuleTFirst, "put context before the request", "T is the first turn")
		}
		if ti == n-1 {
			add(ti, RuleTLast, "at least one turn follows T", "T is the last turn")
		}
		if b, ok := TBucket(ti, n); ok && valid[s.TPosition] && b != s.TPosition {
			add(ti, RuleTPosition, "set t_position to where T actually is, or move T (see docs/dataset.md for the buckets)", "T at turn %d of %d is in bucket %s, but t_position says %s", ti, n, b, s.TPosition)
		}
		t := s.Turns[ti]
		switch s.Condition {
		case protocol.Explicit:
			if !NamesAria(t.Text) {
				add(ti, RuleExplicitName, "the explicit version's T names Aria", "explicit T does not name Aria")
			}
		case protocol.Implicit:
			if NamesAria(t.Text) {
				add(ti, RuleImplicitName, "the implicit version's T carries a contextual cue instead of the name", "implicit T names Aria")
			}
		}
	}
	validateV2(s, add)
	return vs
}

// ValidatePairs checks the pair rules over a whole set (docs/protocol.md section 2.3):
// both versions present once (one explicit, one implicit, the same pair id), the same
// gold answer, the same T speaker, different T text. It returns errors only; PairWarnings
// gives the differences the protocol allows.
func ValidatePairs(scs []Scenario) []Violation {
	errs, _ := pairViolations(scs)
	return errs
}

// PairWarnings reports what the paper allows to differ between the final versions of a
// pair but a rewrite alone would not change: turn count, label sequence, turns other than
// T and the one before it, T's position bucket (later N4 edits change wording and event
// counts). Under `dataset validate --strict` they are errors.
func PairWarnings(scs []Scenario) []Violation {
	_, warns := pairViolations(scs)
	return warns
}

func pairViolations(scs []Scenario) (errs, warns []Violation) {
	type versions struct{ explicit, implicit []int }
	pairs := map[string]*versions{}
	var order []string
	for i, s := range scs {
		if s.PairID == "" {
			continue
		}
		p := pairs[s.PairID]
		if p == nil {
			p = &versions{}
			pairs[s.PairID] = p
			order = append(order, s.PairID)
		}
		switch s.Condition {
		case protocol.Explicit:
			p.explicit = append(p.explicit, i)
		case protocol.Implicit:
			p.implicit = append(p.implicit, i)
		}
	}
	for _, id := range order {
		p := pairs[id]
		if len(p.explicit) != 1 || len(p.implicit) != 1 {
			sid := ""
			if len(p.explicit) > 0 {
				sid = scs[p.explicit[0]].ScenarioID
			} else if len(p.implicit) > 0 {
				sid = scs[p.implicit[0]].ScenarioID
			}
			errs = append(errs, Violation{ScenarioID: sid, Turn: -1, Rule: RulePairMissing,
				Message: fmt.Sprintf("pair %s has %d explicit and %d implicit versions, want 1 and 1", id, len(p.explicit), len(p.implicit)),
				Hint:    "every pair has exactly one explicit and one implicit version"})
			continue
		}
		for _, v := range comparePair(&scs[p.explicit[0]], &scs[p.implicit[0]]) {
			if v.Warning {
				warns = append(warns, v)
			} else {
				errs = append(errs, v)
			}
		}
	}
	return errs, warns
}

func comparePair(e, im *Scenario) []Violation {
	var vs []Violation
	add := func(turn int, rule Rule, hint, format string, args ...any) {
		vs = append(vs, Violation{ScenarioID: im.ScenarioID, Turn: turn, Rule: rule, Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	warn := func(turn int, rule Rule, hint, format string, args ...any) {
		add(turn, rule, hint, format, args...)
		vs[len(vs)-1].Warning = true
	}
	comparePairV2(e, im, add)
	if e.GoldAnswer != im.GoldAnswer {
		add(-1, RulePairGold, "both versions ask the same thing", "gold answer %q differs from the explicit version's %q", im.GoldAnswer, e.GoldAnswer)
	}
	if e.AnswerType != im.AnswerType {
		add(-1, RulePairGold, "both versions ask the same thing", "answer_type %q differs from the explicit version's %q", im.AnswerType, e.AnswerType)
	}
	ti, tj := e.TIndex(), im.TIndex()
	if ti >= 0 && tj >= 0 {
		if e.Turns[ti].Speaker != im.Turns[tj].Speaker {
			add(tj, RulePairTSpeaker, "both versions are the same request from the same person", "T is spoken by %s, in the explicit version by %s", im.Turns[tj].Speaker, e.Turns[ti].Speaker)
		}
		if strings.TrimSpace(e.Turns[ti].Text) == strings.TrimSpace(im.Turns[tj].Text) {
			add(tj, RulePairSameT, "the implicit T replaces the name with a contextual cue", "T text is identical in both versions")
		}
		if e.TPosition != im.TPosition {
			warn(-1, RulePairTPosition, "the paired comparison by T position reads best with both versions in one bucket", "t_position %s, the explicit version's is %s", im.TPosition, e.TPosition)
		}
	}
	// The versions may differ in T, the turn before T and their N4 events, nothing else
	// (section 2.3): outside N4 turns, the same turns in the same order.
	eo, io := withoutN4(e), withoutN4(im)
	if len(eo) != len(io) {
		add(-1, RulePairTurnCount, "the versions differ only in T, the turn before T and N4 events", "%d turns outside N4 events, the explicit version %s has %d", len(io), e.ScenarioID, len(eo))
		return vs
	}
	for k := range eo {
		a, b := e.Turns[eo[k]], im.Turns[io[k]]
		if eo[k] == ti-1 && ti >= 0 {
			// The turn before T may be rewritten, and with it its label and addressee
			// (a rewrite that hands the question to the assistant refers to Aria: N1).
			if a.Speaker != b.Speaker {
				add(io[k], RulePairRewrite, "the rewritten turn before T keeps its speaker", "speaker %s, the explicit version's %s", b.Speaker, a.Speaker)
			}
			continue
		}
		if a.Label != b.Label {
			add(io[k], RulePairLabels, "the versions differ only in T, the turn before T and N4 events", "label %s, the explicit version has %s", b.Label, a.Label)
			continue
		}
		if a.Speaker != b.Speaker || a.Addressee != b.Addressee {
			add(io[k], RulePairRewrite, "the versions differ only in T, the turn before T and N4 events", "speaker or addressee differs from the explicit version %s", e.ScenarioID)
			continue
		}
		if eo[k] == ti {
			continue
		}
		if a.Text != b.Text {
			add(io[k], RulePairRewrite, "the versions differ only in T, the turn before T and N4 events", "turn differs from the explicit version %s", e.ScenarioID)
		}
	}
	if !sameN4(e, im) {
		warn(-1, RulePairN4Edit, "allowed: N4 events may be edited between versions; the N4 tables then compare different events", "N4 events differ from the explicit version %s", e.ScenarioID)
	}
	return vs
}

// withoutN4 is the indices of the turns that are not part of an N4 event.
func withoutN4(s *Scenario) []int {
	var out []int
	for i, t := range s.Turns {
		if t.Label != protocol.LabelN4Q && t.Label != protocol.LabelN4R {
			out = append(out, i)
		}
	}
	return out
}

// sameN4 reports whether both versions hold the same N4 turns, in order.
func sameN4(a, b *Scenario) bool {
	var x, y []Turn
	for _, t := range a.Turns {
		if t.Label == protocol.LabelN4Q || t.Label == protocol.LabelN4R {
			x = append(x, Turn{Speaker: t.Speaker, Text: t.Text, Label: t.Label})
		}
	}
	for _, t := range b.Turns {
		if t.Label == protocol.LabelN4Q || t.Label == protocol.LabelN4R {
			y = append(y, Turn{Speaker: t.Speaker, Text: t.Text, Label: t.Label})
		}
	}
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].Speaker != y[i].Speaker || x[i].Text != y[i].Text || x[i].Label != y[i].Label {
			return false
		}
	}
	return true
}

// Validate checks every rule over a loaded dataset: each scenario, unique ids, the
// pair rules, clips (when any turn is synthesised) and the manifest. Violations come
// back sorted by file line, then turn.
func Validate(d *Dataset) []Violation {
	var vs []Violation
	seen := map[string]int{}
	synthesised := false
	for _, s := range d.Scenarios {
		for _, t := range s.Turns {
			if t.Clip != "" {
				synthesised = true
			}
		}
	}
	lineOf := map[string]int{}
	clips := newClipChecker(d)
	for i := range d.Scenarios {
		s := &d.Scenarios[i]
		line := 0
		if i < len(d.Lines) {
			line = d.Lines[i]
		}
		lineOf[s.ScenarioID] = line
		sv := ValidateScenario(s)
		if s.ScenarioID != "" {
			if first, dup := seen[s.ScenarioID]; dup {
				sv = append(sv, Violation{ScenarioID: s.ScenarioID, Turn: -1, Rule: RuleScenarioID,
					Message: fmt.Sprintf("scenario_id is also used on line %d", first), Hint: "scenario ids are unique"})
			} else {
				seen[s.ScenarioID] = line
			}
		}
		if synthesised {
			sv = append(sv, clips.scenario(s)...)
		}
		for j := range sv {
			sv[j].File, sv[j].Line = d.File, line
		}
		vs = append(vs, sv...)
	}
	for _, v := range ValidatePairs(d.Scenarios) {
		v.File, v.Line = d.File, lineOf[v.ScenarioID]
		vs = append(vs, v)
	}
	vs = append(vs, validateManifest(d, clips)...)
	sortViolations(vs)
	return vs
}

// Warnings are the pair differences the protocol allows (PairWarnings) over a loaded
// dataset, with file and line, sorted like Validate's errors.
func Warnings(d *Dataset) []Violation {
	lineOf := map[string]int{}
	for i, s := range d.Scenarios {
		if i < len(d.Lines) {
			lineOf[s.ScenarioID] = d.Lines[i]
		}
	}
	vs := PairWarnings(d.Scenarios)
	for i := range vs {
		vs[i].File, vs[i].Line = d.File, lineOf[vs[i].ScenarioID]
	}
	sortViolations(vs)
	return vs
}

func sortViolations(vs []Violation) {
	sort.SliceStable(vs, func(i, j int) bool {
		if vs[i].Line != vs[j].Line {
			return vs[i].Line < vs[j].Line
		}
		return vs[i].Turn < vs[j].Turn
	})
}

// durationTolerance allows for rounding of duration_s in the file (one millisecond).
const durationTolerance = 0.0015

// MaxClipSeconds bounds one turn's clip; MaxPreambleSeconds the preamble's.
const (
	MaxClipSeconds     = 120.0
	MaxPreambleSeconds = 600.0
)

// clipChecker checks each clip file once (turns identical in both versions of a pair
// share one): complete, finite, the format the build writes, and the bytes the build
// recorded in clips.sha256.
type clipChecker struct {
	d       *Dataset
	rate    int               // the format a build writes; 0 for a set of other provenance
	sums    map[string]string // from clips.sha256
	sumsErr error
	seen    map[string]clipResult
}

type clipResult struct {
	info WAVInfo
	rule Rule
	err  error
}

func newClipChecker(d *Dataset) *clipChecker {
	c := &clipChecker{d: d, seen: map[string]clipResult{}}
	if d.Manifest != nil && d.Manifest.TTS != nil {
		c.rate = d.Manifest.SampleRate
	}
	if d.Dir != "" {
		c.sums, c.sumsErr = ClipSums(d.Dir)
	}
	return c
}

func (c *clipChecker) check(rel string) clipResult {
	if r, ok := c.seen[rel]; ok {
		return r
	}
	var r clipResult
	cc, err := CheckClip(c.d.Dir, c.d.ClipPath(rel), c.rate, c.sums[rel])
	r.info = cc.Info
	var ce *ClipError
	switch {
	case errors.As(err, &ce):
		r.rule, r.err = ce.Rule, fmt.Errorf("clip %s %s", rel, ce.Msg)
	case err != nil:
		r.rule, r.err = RuleClipUnreadable, fmt.Errorf("clip %s: %v", rel, err)
	}
	c.seen[rel] = r
	return r
}

func (c *clipChecker) scenario(s *Scenario) []Violation {
	var vs []Violation
	const rebuild = "rebuild the dataset with 'duplexmpe build': it re-synthesises a damaged clip"
	for i, t := range s.Turns {
		if t.Clip == "" {
			vs = append(vs, Violation{ScenarioID: s.ScenarioID, Turn: i, Rule: RuleClipMissing,
				Message: "turn has no clip while others in the dataset do", Hint: "rebuild the dataset with 'duplexmpe build' to synthesise it"})
			continue
		}
		r := c.check(t.Clip)
		if r.err != nil {
			vs = append(vs, Violation{ScenarioID: s.ScenarioID, Turn: i, Rule: r.rule, Message: r.err.Error(), Hint: rebuild})
			if r.rule == RuleClipUnreadable {
				continue
			}
		}
		if d := r.info.Duration(); d > MaxClipSeconds {
			vs = append(vs, Violation{ScenarioID: s.ScenarioID, Turn: i, Rule: RuleClipTooLong,
				Message: fmt.Sprintf("clip %s lasts %.1f s; a turn's clip lasts at most %g s", t.Clip, d, MaxClipSeconds), Hint: "shorten the turn, or check the TTS"})
		}
		if t.DurationS <= 0 || math.Abs(r.info.Duration()-t.DurationS) > durationTolerance {
			vs = append(vs, Violation{ScenarioID: s.ScenarioID, Turn: i, Rule: RuleClipDuration,
				Message: fmt.Sprintf("duration_s %.3f but clip %s lasts %.3f s", t.DurationS, t.Clip, r.info.Duration()), Hint: rebuild})
		}
	}
	return vs
}

func validateManifest(d *Dataset, clips *clipChecker) []Violation {
	m := d.Manifest
	if m == nil {
		return nil
	}
	mfile := d.Dir + string(os.PathSeparator) + ManifestFile
	var vs []Violation
	if clips.sumsErr != nil {
		vs = append(vs, Violation{File: filepath.Join(d.Dir, ClipSumsFile), Turn: -1, Rule: RuleClipHash,
			Message: clips.sumsErr.Error(), Hint: "rebuild the dataset with 'duplexmpe build'"})
	}
	if m.Preamble != nil && m.Preamble.Clip != "" {
		if r := clips.check(m.Preamble.Clip); r.err != nil {
			vs = append(vs, Violation{File: mfile, Turn: -1, Rule: RulePreamble,
				Message: "preamble " + r.err.Error(), Hint: "rebuild the dataset with 'duplexmpe build'"})
		} else if r.info.Duration() > MaxPreambleSeconds {
			vs = append(vs, Violation{File: mfile, Turn: -1, Rule: RulePreamble,
				Message: fmt.Sprintf("preamble clip %s lasts %.1f s; at most %g s", m.Preamble.Clip, r.info.Duration(), MaxPreambleSeconds), Hint: "shorten the preamble"})
		}
	}
	if raw, err := os.ReadFile(d.File); err == nil && m.ContentHash != "" && ContentHash(raw) != m.ContentHash {
		vs = append(vs, Violation{File: mfile, Turn: -1, Rule: RuleManifestHash,
			Message: fmt.Sprintf("content_hash %s does not match %s (%s)", m.ContentHash, ScenariosFile, ContentHash(raw)),
			Hint:    "scenarios.jsonl was edited after the build; rebuild with 'duplexmpe build'"})
	}
	c := CountOf(d.Scenarios)
	if c.Scenarios != m.Counts.Scenarios || c.Pairs != m.Counts.Pairs || c.Explicit != m.Counts.Explicit || c.Implicit != m.Counts.Implicit || c.Turns != m.Counts.Turns {
		vs = append(vs, Violation{File: mfile, Turn: -1, Rule: RuleManifestCounts,
			Message: fmt.Sprintf("counts %+v do not match the scenarios (%+v)", m.Counts, c), Hint: "rebuild with 'duplexmpe build'"})
	}
	return vs
}

// ValidatePath loads a dataset directory or scenarios file and validates it. Lines that
// cannot be parsed become RuleParse violations; the rest of the file is still checked.
// The error is only for a path that cannot be read at all.
func ValidatePath(path string) (*Dataset, []Violation, error) {
	d, err := Load(path)
	var pes ParseErrors
	if err != nil && !errors.As(err, &pes) {
		return nil, nil, err
	}
	var vs []Violation
	for _, pe := range pes {
		vs = append(vs, Violation{File: pe.File, Line: pe.Line, Turn: -1, Rule: RuleParse, Message: pe.Err.Error(), Hint: pe.hint()})
	}
	vs = append(vs, Validate(d)...)
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Line < vs[j].Line })
	return d, vs, nil
}
