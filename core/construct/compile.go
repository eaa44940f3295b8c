package construct

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// A pair source states one scenario pair once: the shared turns, both versions of T
// side by side, and the implicit version's rewrite of the turn before T. It is the
// authoring format of hand-written sets (datasets/open-v1/authoring); Compile turns it
// into the standard scenarios.jsonl, two lines a pair.
type PairSource struct {
	PairID     string             `json:"pair_id"`
	Attributes dataset.Attributes `json:"attributes"`
	Names      map[string]string  `json:"names"`
	Turns      []SourceTurn       `json:"turns"`
	// ImplicitPrevious is the implicit version's text of the turn before T (cue
	// "setup"); nil when that turn is the same in both versions.
	ImplicitPrevious *string `json:"implicit_previous"`
	// ImplicitPreviousLabel is the label of that rewritten turn when it differs from
	// the explicit version's (a turn to a person that now refers to Aria is N1: protocol.md
	// section 2.1.1, rule 4); "" keeps the label.
	ImplicitPreviousLabel string `json:"implicit_previous_label,omitempty"`
	Cue                   string `json:"cue"`
	// CueEvidence says what a listener hears that points the implicit T at Aria.
	CueEvidence    string   `json:"cue_evidence"`
	GoldAnswer     string   `json:"gold_answer"`
	GoldAccepted   []string `json:"gold_accepted"`
	GoldDerivation string   `json:"gold_derivation"`
	ContextTurns   []int    `json:"context_turns"`

	// AnswerType is the gold answer's kind (dataset.Scenario.AnswerType); optional.
	AnswerType string `json:"answer_type,omitempty"`

	// v2 fields (issue 28; optional, docs/dataset.md): the request kind, the implicit
	// version's cue words and the explicit version's addressing form.
	Task       string `json:"task,omitempty"`
	CueText    string `json:"cue_text,omitempty"`
	Addressing string `json:"addressing,omitempty"`
}

// SourceTurn is one turn of a pair source: Text for every turn but T, which has Explicit
// and Implicit instead.
type SourceTurn struct {
	Speaker   string `json:"speaker"`
	Label     string `json:"label"`
	Text      string `json:"text,omitempty"`
	Addressee string `json:"addressee,omitempty"`
	Explicit  string `json:"explicit,omitempty"`
	Implicit  string `json:"implicit,omitempty"`
	// Tags are the turn's hard-negative tags (v2, dataset.TurnTags).
	Tags []string `json:"tags,omitempty"`
}

// Cue types of an implicit T (docs/protocol.md section 2.3).
var CueTypes = []string{"role", "capability", "setup", "assistant-term"}

// CompileSpec configures Compile.
type CompileSpec struct {
	// GapSeed draws the natural gaps (NaturalGap); the same seed gives the same gaps.
	GapSeed int64
	// LapseShare is the share of ordinary turns followed by a lapse (NaturalLapse); 0,
	// as in open v1, draws no lapse and leaves every gap as NaturalGap draws it.
	LapseShare float64
}

// SourceError is a problem with one pair source line.
type SourceError struct {
	File   string
	Line   int
	PairID string
	Msg    string
}

func (e *SourceError) Error() string {
	id := ""
	if e.PairID != "" {
		id = " pair " + e.PairID + ":"
	}
	return fmt.Sprintf("%s:%d:%s %s", e.File, e.Line, id, e.Msg)
}

// SourceErrors are every problem found in the pair sources; the same sources fail again.
type SourceErrors []*SourceError

func (es SourceErrors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Deterministic: the file must change before it compiles (core/fault).
func (es SourceErrors) Deterministic() bool { return true }

// ReadPairSources parses pair-source JSON lines (unknown keys are errors). Each source
// comes with its line number.
func ReadPairSources(r io.Reader, name string) ([]PairSource, []int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var (
		out   []PairSource
		lines []int
		errs  SourceErrors
		n     int
	)
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var p PairSource
		if err := dec.Decode(&p); err != nil {
			errs = append(errs, &SourceError{File: name, Line: n, Msg: err.Error()})
			continue
		}
		out = append(out, p)
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, &SourceError{File: name, Line: n + 1, Msg: err.Error()})
	}
	if len(errs) > 0 {
		return out, lines, errs
	}
	return out, lines, nil
}

// CompilePair turns one pair source into its explicit and implicit scenario versions.
// It checks what the format itself requires (T has both texts, the other turns text,
// the cue type, the context turns); the scenario and pair rules are dataset.Validate's.
func CompilePair(p *PairSource, spec CompileSpec) (e, im dataset.Scenario, err error) {
	fail := func(format string, args ...any) error { return fmt.Errorf(format, args...) }
	ti := -1
	speakers := map[string]bool{}
	for i, t := range p.Turns {
		speakers[t.Speaker] = true
		if t.Label == protocol.LabelT {
			if ti >= 0 {
				return e, im, fail("turn %d: a second T (the first is turn %d)", i, ti)
			}
			ti = i
			if strings.TrimSpace(t.Explicit) == "" || strings.TrimSpace(t.Implicit) == "" || t.Text != "" {
				return e, im, fail("turn %d: T has explicit and implicit texts and no text", i)
			}
			continue
		}
		if t.Explicit != "" || t.Implicit != "" {
			return e, im, fail("turn %d: only T has explicit and implicit texts", i)
		}
	}
	if ti < 0 {
		return e, im, fail("no T turn")
	}
	if !slices.Contains(CueTypes, p.Cue) {
		return e, im, fail("cue %q is not one of %s", p.Cue, strings.Join(CueTypes, ", "))
	}
	if (p.Cue == "setup") != (p.ImplicitPrevious != nil) {
		return e, im, fail("implicit_previous is given exactly when the cue is setup")
	}
	if p.ImplicitPrevious != nil && ti == 0 {
		return e, im, fail("implicit_previous with T first")
	}
	switch p.ImplicitPreviousLabel {
	case "":
	case protocol.LabelN1, protocol.LabelN3:
		if p.ImplicitPrevious == nil {
			return e, im, fail("implicit_previous_label without implicit_previous")
		}
	default:
		return e, im, fail("implicit_previous_label %q: the rewritten turn before T becomes N1 or N3, or keeps its label", p.ImplicitPreviousLabel)
	}
	for _, c := range p.ContextTurns {
		if c < 0 || c >= ti {
			return e, im, fail("context turn %d is not before T (turn %d)", c, ti)
		}
		if p.Turns[c].Speaker == p.Turns[ti].Speaker {
			return e, im, fail("context turn %d is by the asker %s; context comes from someone else", c, p.Turns[ti].Speaker)
		}
	}
	var spk []string
	for s := range speakers {
		spk = append(spk, s)
	}
	sort.Strings(spk)
	for _, s := range spk {
		if strings.TrimSpace(p.Names[s]) == "" {
			return e, im, fail("speaker %s has no name in names", s)
		}
	}
	if len(p.Names) != len(spk) {
		return e, im, fail("names lists %d speakers, the turns have %d", len(p.Names), len(spk))
	}
	bucket, _ := dataset.TBucket(ti, len(p.Turns))
	turns := func(implicit bool) []dataset.Turn {
		out := make([]dataset.Turn, len(p.Turns))
		for i, t := range p.Turns {
			text := t.Text
			if t.Label == protocol.LabelT {
				text = t.Explicit
				if implicit {
					text = t.Implicit
				}
			}
			out[i] = dataset.Turn{Speaker: t.Speaker, Text: text, Label: t.Label, Addressee: t.Addressee, Tags: t.Tags}
			if implicit && i == ti-1 && p.ImplicitPrevious != nil {
				out[i].Text = *p.ImplicitPrevious
				if p.ImplicitPreviousLabel != "" {
					out[i].Label, out[i].Addressee = p.ImplicitPreviousLabel, ""
				}
			}
			if ordinaryTurn(p.Turns, i) {
				out[i].GapAfterS = spec.Gap(p.PairID, i)
			}
		}
		return out
	}
	base := dataset.Scenario{
		PairID: p.PairID, Attributes: p.Attributes, Speakers: spk,
		GoldAnswer: p.GoldAnswer, TPosition: bucket, GoldAccepted: p.GoldAccepted,
		Names: p.Names, ContextTurns: p.ContextTurns, Task: p.Task,
	}
	base.AnswerType = p.AnswerType
	e, im = base, base
	e.Condition, e.ScenarioID, e.Turns = protocol.Explicit, p.PairID+"-explicit", turns(false)
	im.Condition, im.ScenarioID, im.Turns, im.Cue = protocol.Implicit, p.PairID+"-implicit", turns(true), p.Cue
	e.Addressing, im.CueText = p.Addressing, p.CueText
	return e, im, nil
}

// ordinaryTurn: neither T, N4_Q nor the last turn, whose silences the protocol fixes
// (section 3.3); only these get a natural gap.
func ordinaryTurn(ts []SourceTurn, i int) bool {
	return i < len(ts)-1 && ts[i].Label != protocol.LabelT && ts[i].Label != protocol.LabelN4Q
}

// Compile turns pair sources into scenarios (explicit then implicit for each pair, in
// source order). Every problem of every source is reported, with file and line.
func Compile(srcs []PairSource, files []string, lines []int, spec CompileSpec) ([]dataset.Scenario, error) {
	var (
		out  []dataset.Scenario
		errs SourceErrors
		seen = map[string]int{}
	)
	for i := range srcs {
		p := &srcs[i]
		if j, dup := seen[p.PairID]; dup {
			errs = append(errs, &SourceError{File: files[i], Line: lines[i], PairID: p.PairID, Msg: fmt.Sprintf("pair id used again (first at %s:%d)", files[j], lines[j])})
			continue
		}
		seen[p.PairID] = i
		e, im, err := CompilePair(p, spec)
		if err != nil {
			errs = append(errs, &SourceError{File: files[i], Line: lines[i], PairID: p.PairID, Msg: err.Error()})
			continue
		}
		out = append(out, e, im)
	}
	if len(errs) > 0 {
		return out, errs
	}
	return out, nil
}

// Natural gaps (docs/protocol.md section 3.3, gap profile "natural"): the silence after
// an ordinary turn is drawn from a mixture. With probability 1-NaturalLongShare it is a
// turn-taking gap, log-normal with median NaturalGapMedian and log-sd NaturalGapSigma,
// clipped to [NaturalGapMin, NaturalLongMin]; otherwise a long pause, uniform in
// [NaturalLongMin, NaturalLongMax] (someone busy with the activity, thinking). The
// parameters are the project's, chosen to match the shape reported for conversation
// (Stivers et al. 2009; Heldner & Edlund 2010): most gaps a few hundred milliseconds,
// a tail of pauses over a second.
const (
	NaturalGapMedian = 0.35
	NaturalGapSigma  = 0.5
	NaturalGapMin    = 0.1
	NaturalLongShare = 0.2
	NaturalLongMin   = 1.2
	NaturalLongMax   = 2.5
)

// NaturalGap is the natural silence after turn i of a pair, in seconds (rounded to the
// millisecond): a pure function of the seed, the pair id and the turn index, so both
// versions of a pair get the same gaps and a set compiles to the same bytes.
func NaturalGap(seed int64, pair string, i int) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "natural-gap\x00%s\x00%d", pair, i)
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	var g float64
	if rng.Float64() < NaturalLongShare {
		g = NaturalLongMin + rng.Float64()*(NaturalLongMax-NaturalLongMin)
	} else {
		g = NaturalGapMedian * math.Exp(NaturalGapSigma*rng.NormFloat64())
		g = math.Min(math.Max(g, NaturalGapMin), NaturalLongMin)
	}
	return math.Round(g*1000) / 1000
}

// Lapses (docs/protocol.md section 3.3): a lapse is a silence of NaturalLapseMin to
// NaturalLapseMax seconds after an ordinary turn, when nobody takes the floor because
// the people are busy with the activity (Hoey 2015). A release declares the share of
// ordinary turns followed by one (lapse_share); its length is uniform in the range.
const (
	NaturalLapseMin = 3.0
	NaturalLapseMax = 8.0
)

// Gap is the natural silence after ordinary turn i of a pair under spec: with
// probability LapseShare a lapse (NaturalLapse), otherwise NaturalGap. The lapse is
// drawn from a stream of its own, so a spec without lapses gives NaturalGap's gaps byte
// for byte (open v1's stored gaps do not change).
func (spec CompileSpec) Gap(pair string, i int) float64 {
	if g, ok := NaturalLapse(spec.GapSeed, pair, i, spec.LapseShare); ok {
		return g
	}
	return NaturalGap(spec.GapSeed, pair, i)
}

// NaturalLapse draws whether turn i of a pair is followed by a lapse (with probability
// share) and its length in seconds, rounded to the millisecond: a pure function of the
// seed, the pair id, the turn index and the share.
func NaturalLapse(seed int64, pair string, i int, share float64) (float64, bool) {
	if share <= 0 {
		return 0, false
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "natural-lapse\x00%s\x00%d", pair, i)
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	if rng.Float64() >= share {
		return 0, false
	}
	g := NaturalLapseMin + rng.Float64()*(NaturalLapseMax-NaturalLapseMin)
	return math.Round(g*1000) / 1000, true
}
