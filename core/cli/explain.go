package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

func init() { register(newExplainCmd) }

const explainLong = `Score a hand-written timeline without any audio, to see how the protocol's rules
(shared/spec/protocol.md sections 4 and 5) decide each verdict.

The input is JSON:

  {
    "turns":  [{"label": "T", "start": 0, "end": 5}, {"label": "N1", "start": 12, "end": 15}, ...],
    "speech": [[5.6, 8.5], [15.2, 16.0]],
    "protocol": {"n4_gap": 3, "merge_pause": 0.8, "min_speech": 0.12}
  }

turns are the human turns as played (label T, N1, N2, N3, N4_Q or N4_R; start and end in
seconds; optional speaker, text, addressee). speech are raw model speech regions in
seconds; they are merged (pauses shorter than merge_pause) and filtered (episodes shorter
than min_speech dropped) as the VAD post-processing does. protocol optionally overrides
any section 8 constant (preamble_gap, turn_gap, t_onset_window, t_end_silence,
t_wait_cap, n4_gap, yield_deadline, yield_observe, min_eligible, tail) and merge_pause /
min_speech.

Output: one entry per turn with its verdicts: fresh_onset and presence for T; silence
(pass/fail) for N1-N3, where any speech fails because there is no audio to judge;
window_response and yield for N4_Q (pass, fail-still-voicing, fail-resumed,
excluded-spoke-during-question, excluded-no-onset-in-gap,
excluded-not-speaking-at-resolution). See examples/timelines/ for worked examples.`

func newExplainCmd(st *State) *cobra.Command {
	var file string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "explain --timeline FILE.json",
		Short: "Score a hand-written timeline (no audio) and show every verdict",
		Long:  explainLong,
		Args:  exactArgs(0, "no arguments (the timeline goes in --timeline)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return UsageErrorf("explain needs --timeline FILE.json (or --timeline - for standard input)")
			}
			data, name, err := readExplainInput(st, file)
			if err != nil {
				return err
			}
			in, err := ParseExplainInput(data)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			res := Explain(in)
			if asJSON {
				enc := json.NewEncoder(st.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			writeExplainText(st.Stdout, res)
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "timeline", "", "the timeline JSON file (- reads standard input)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func readExplainInput(st *State, file string) ([]byte, string, error) {
	if file == "-" {
		data, err := io.ReadAll(st.Stdin)
		if err != nil {
			return nil, "", fmt.Errorf("reading the timeline from standard input: %w", err)
		}
		return data, "<stdin>", nil
	}
	path := file
	if !filepath.IsAbs(path) {
		cwd, err := st.Getwd()
		if err != nil {
			return nil, "", fmt.Errorf("cannot find the working directory: %w", err)
		}
		path = filepath.Join(cwd, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("cannot read the timeline: %w (check the path given to --timeline)", err)
	}
	return data, file, nil
}

// ExplainInput is a parsed, checked explain timeline.
type ExplainInput struct {
	Timeline   timeline.Timeline
	Speech     []timeline.Episode // raw regions as written
	Params     protocol.Params
	MergePause float64
	MinSpeech  float64
}

// explainOverrides is the optional "protocol" object: section 8 constants plus the two
// VAD post-processing settings that apply to hand-written regions.
type explainOverrides struct {
	protocol.Params
	MergePause float64 `json:"merge_pause"`
	MinSpeech  float64 `json:"min_speech"`
}

type explainTurn struct {
	Label     string   `json:"label"`
	Start     *float64 `json:"start"`
	End       *float64 `json:"end"`
	Speaker   string   `json:"speaker"`
	Text      string   `json:"text"`
	Addressee string   `json:"addressee"`
}

// inputError names where in the JSON a problem is, and what to do about it.
type inputError struct {
	line  int
	field string
	msg   string
}

func (e *inputError) Error() string {
	if e.field == "" {
		return fmt.Sprintf("line %d: %s", e.line, e.msg)
	}
	return fmt.Sprintf("line %d: %s: %s", e.line, e.field, e.msg)
}

// lineAt is the 1-based line of byte offset off, skipping the whitespace and commas that
// precede the next value (a decoder's offset points just after the previous token).
func lineAt(data []byte, off int64) int {
	i := int(min(max(off, 0), int64(len(data))))
	for i < len(data) && strings.ContainsRune(" \t\r\n,:", rune(data[i])) {
		i++
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}

// jsonError turns a decoding error into one that names the line and the field.
func jsonError(data []byte, dec *json.Decoder, field string, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return &inputError{lineAt(data, syn.Offset-1), "", "invalid JSON: " + syn.Error()}
	case errors.As(err, &typ):
		f := field
		if typ.Field != "" {
			f += "." + typ.Field
		}
		return &inputError{lineAt(data, typ.Offset-1), f, fmt.Sprintf("expected a %s, found a JSON %s", typ.Type, typ.Value)}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &inputError{lineAt(data, int64(len(data))), field, "the file ends early: a bracket or brace is not closed"}
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "json: unknown field") {
		msg = strings.TrimPrefix(msg, "json: ") + " (check the spelling; run 'duplexmpe explain --help' for the fields)"
	}
	return &inputError{lineAt(data, dec.InputOffset()), field, msg}
}

// ParseExplainInput reads and checks an explain timeline. Every error names the line and
// the field (turns[2].end, speech[0], protocol.n4_gap) and says what to change.
func ParseExplainInput(data []byte) (ExplainInput, error) {
	ov := explainOverrides{Params: protocol.Defaults()}
	vad := protocol.DefaultVAD()
	ov.MergePause, ov.MinSpeech = vad.MergePause, vad.MinSpeech
	var turns []explainTurn
	var turnLines, speechLines []int
	var speech []timeline.Episode
	seen := map[string]bool{}

	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if tok, err := dec.Token(); err != nil {
		return ExplainInput{}, jsonError(data, dec, "", err)
	} else if d, ok := tok.(json.Delim); !ok || d != '{' {
		return ExplainInput{}, &inputError{1, "", `the timeline must be a JSON object: {"turns": [...], "speech": [...]}`}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ExplainInput{}, jsonError(data, dec, "", err)
		}
		key, _ := tok.(string)
		keyLine := lineAt(data, dec.InputOffset()-int64(len(key))-2)
		if seen[key] {
			return ExplainInput{}, &inputError{keyLine, key, "appears twice; keep one"}
		}
		seen[key] = true
		switch key {
		case "turns", "speech":
			if err := expectDelim(data, dec, key, '['); err != nil {
				return ExplainInput{}, err
			}
			for i := 0; dec.More(); i++ {
				field := fmt.Sprintf("%s[%d]", key, i)
				line := lineAt(data, dec.InputOffset())
				if key == "turns" {
					var t explainTurn
					if err := dec.Decode(&t); err != nil {
						return ExplainInput{}, jsonError(data, dec, field, err)
					}
					turns, turnLines = append(turns, t), append(turnLines, line)
					continue
				}
				var r []float64
				if err := dec.Decode(&r); err != nil {
					return ExplainInput{}, jsonError(data, dec, field, fmt.Errorf("%w (write a region as [start, end] in seconds)", err))
				}
				if len(r) != 2 {
					return ExplainInput{}, &inputError{line, field, fmt.Sprintf("has %d numbers; write a region as [start, end] in seconds", len(r))}
				}
				speech, speechLines = append(speech, timeline.Episode{Start: r[0], End: r[1]}), append(speechLines, line)
			}
			if _, err := dec.Token(); err != nil { // ]
				return ExplainInput{}, jsonError(data, dec, key, err)
			}
		case "protocol":
			if err := dec.Decode(&ov); err != nil {
				return ExplainInput{}, jsonError(data, dec, "protocol", err)
			}
		default:
			return ExplainInput{}, &inputError{keyLine, key, `unknown key; the timeline has "turns", "speech" and optionally "protocol"`}
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return ExplainInput{}, jsonError(data, dec, "", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return ExplainInput{}, &inputError{lineAt(data, dec.InputOffset()), "", "unexpected content after the closing brace of the timeline object"}
	}

	in := ExplainInput{Speech: speech, Params: ov.Params, MergePause: ov.MergePause, MinSpeech: ov.MinSpeech}
	protoLine := 1
	if i := bytes.Index(data, []byte(`"protocol"`)); i >= 0 {
		protoLine = lineAt(data, int64(i))
	}
	if err := in.Params.Validate(); err != nil {
		return ExplainInput{}, &inputError{protoLine, "protocol", err.Error()}
	}
	for name, v := range map[string]float64{"merge_pause": in.MergePause, "min_speech": in.MinSpeech} {
		if v < 0 || math.IsNaN(v) {
			return ExplainInput{}, &inputError{protoLine, "protocol." + name, fmt.Sprintf("= %g must not be negative", v)}
		}
	}
	if !seen["turns"] || len(turns) == 0 {
		return ExplainInput{}, &inputError{1, "turns", `missing or empty; add "turns": [{"label": "T", "start": 0, "end": 5}, ...]`}
	}
	for i, t := range turns {
		tt, err := checkTurn(t, i, turnLines[i], turns, in.Params)
		if err != nil {
			return ExplainInput{}, err
		}
		in.Timeline.Turns = append(in.Timeline.Turns, tt)
	}
	for i, r := range speech {
		if r.End <= r.Start {
			return ExplainInput{}, &inputError{speechLines[i], fmt.Sprintf("speech[%d]", i),
				fmt.Sprintf("[%g, %g] ends before it starts; write [start, end] with end > start", r.Start, r.End)}
		}
	}
	last := in.Timeline.Turns[len(in.Timeline.Turns)-1]
	in.Timeline.Duration = last.End + in.Params.TurnGap
	for _, r := range speech {
		in.Timeline.Duration = math.Max(in.Timeline.Duration, r.End)
	}
	return in, nil
}

func expectDelim(data []byte, dec *json.Decoder, field string, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return jsonError(data, dec, field, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return &inputError{lineAt(data, dec.InputOffset()-1), field, "must be a JSON list [...]"}
	}
	return nil
}

// n4Tolerance is how far a hand-written N4_R start may be from qE + n4_gap (1 ms).
const n4Tolerance = 0.001

func checkTurn(t explainTurn, i, line int, turns []explainTurn, p protocol.Params) (timeline.Turn, error) {
	field := fmt.Sprintf("turns[%d]", i)
	bad := func(sub, format string, args ...any) error {
		f := field
		if sub != "" {
			f += "." + sub
		}
		return &inputError{line, f, fmt.Sprintf(format, args...)}
	}
	known := false
	for _, l := range protocol.Labels {
		known = known || t.Label == l
	}
	if !known {
		return timeline.Turn{}, bad("label", "%q is not a turn label; use one of %s", t.Label, strings.Join(protocol.Labels, ", "))
	}
	if t.Start == nil || t.End == nil {
		return timeline.Turn{}, bad("", `needs "start" and "end" in seconds`)
	}
	s, e := *t.Start, *t.End
	if e <= s {
		return timeline.Turn{}, bad("end", "%g is not after start %g; a turn needs end > start", e, s)
	}
	if i > 0 {
		prev := turns[i-1]
		if s < *prev.End {
			return timeline.Turn{}, bad("start", "%g is before the previous turn ends (%g); turns are played one after another, in order", s, *prev.End)
		}
	}
	if t.Addressee != "" && t.Addressee != protocol.AddresseeHuman && t.Addressee != protocol.AddresseeDevice {
		return timeline.Turn{}, bad("addressee", "%q must be %q or %q", t.Addressee, protocol.AddresseeHuman, protocol.AddresseeDevice)
	}
	next := ""
	if i+1 < len(turns) {
		next = turns[i+1].Label
	}
	switch {
	case t.Label == protocol.LabelN4Q && next != protocol.LabelN4R:
		return timeline.Turn{}, bad("label", "an N4_Q must be followed immediately by its N4_R (protocol section 2); add the N4_R turn")
	case t.Label == protocol.LabelN4R && (i == 0 || turns[i-1].Label != protocol.LabelN4Q):
		return timeline.Turn{}, bad("label", "an N4_R must follow its N4_Q immediately (protocol section 2)")
	case t.Label == protocol.LabelN4R:
		// Section 3 step 4: N4_R is played exactly n4_gap after N4_Q ends, and section 5
		// defines r = qE + n4_gap; a timeline that disagrees would score two different r.
		want := *turns[i-1].End + p.N4Gap
		if math.Abs(s-want) > n4Tolerance {
			return timeline.Turn{}, bad("start", "%s, but the scheduler plays N4_R n4_gap = %s s after N4_Q ends (%s + %s = %s); set start to %s or override \"protocol\": {\"n4_gap\": %s}",
				sec(s), sec(p.N4Gap), sec(*turns[i-1].End), sec(p.N4Gap), sec(want), sec(want), sec(s-*turns[i-1].End))
		}
	}
	return timeline.Turn{Index: i, Label: t.Label, Speaker: t.Speaker, Text: t.Text, Addressee: t.Addressee, Start: s, End: e}, nil
}

// ExplainResult is what explain prints.
type ExplainResult struct {
	Protocol   protocol.Params    `json:"protocol"`
	MergePause float64            `json:"merge_pause"`
	MinSpeech  float64            `json:"min_speech"`
	Episodes   []timeline.Episode `json:"episodes"`
	Turns      []ExplainedTurn    `json:"turns"`
}

// ExplainedTurn is one turn with its verdicts; only the fields of its label are set.
type ExplainedTurn struct {
	Index int     `json:"index"`
	Label string  `json:"label"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// T
	FreshOnset *bool  `json:"fresh_onset,omitempty"`
	Presence   *bool  `json:"presence,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
	// N1, N2, N3
	Silence string `json:"silence,omitempty"`
	// N4_Q
	WindowResponse *bool  `json:"window_response,omitempty"`
	Yield          string `json:"yield,omitempty"`
	// Event is the full verdict with the times it was decided on; nil for N4_R, which is
	// scored with its N4_Q.
	Event *score.Event `json:"event,omitempty"`
}

// Explain scores a parsed timeline: raw regions are merged into episodes (section 4),
// then every section 5 verdict is computed. With no audio, any speech in a silence window
// fails.
func Explain(in ExplainInput) ExplainResult {
	eps := score.MergeRegions(in.Speech, in.MergePause, in.MinSpeech)
	if eps == nil {
		eps = []timeline.Episode{}
	}
	res := ExplainResult{Protocol: in.Params, MergePause: in.MergePause, MinSpeech: in.MinSpeech, Episodes: eps}
	byTurn := map[int]score.Event{}
	for _, ev := range score.Events(in.Timeline, eps, in.Params) {
		byTurn[ev.Turn] = ev
	}
	for i, t := range in.Timeline.Turns {
		et := ExplainedTurn{Index: i, Label: t.Label, Start: t.Start, End: t.End}
		if ev, ok := byTurn[i]; ok {
			et.Event = &ev
			switch {
			case ev.T != nil:
				et.FreshOnset, et.Presence, et.Outcome = &ev.T.FreshOnset, &ev.T.Presence, ev.T.Outcome
			case ev.Silence != nil:
				et.Silence = "fail"
				if ev.Silence.Silent() {
					et.Silence = "pass"
				}
			case ev.N4 != nil:
				et.WindowResponse, et.Yield = &ev.N4.WindowResponse, ev.N4.Verdict()
			}
		}
		res.Turns = append(res.Turns, et)
	}
	return res
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// sec prints seconds without floating-point noise (10.6 + 5 prints as 15.6, not
// 15.600000000000001): rounded to the microsecond.
func sec(x float64) string {
	return strconv.FormatFloat(math.Round(x*1e6)/1e6, 'g', -1, 64)
}

func writeExplainText(w io.Writer, r ExplainResult) {
	var eps []string
	for _, e := range r.Episodes {
		eps = append(eps, fmt.Sprintf("[%s, %s)", sec(e.Start), sec(e.End)))
	}
	if len(eps) == 0 {
		eps = []string{"none"}
	}
	fmt.Fprintf(w, "model speech episodes (merge_pause %s s, min_speech %s s): %s\n", sec(r.MergePause), sec(r.MinSpeech), strings.Join(eps, " "))
	for _, t := range r.Turns {
		fmt.Fprintf(w, "turn %d  %-4s [%s, %s)  ", t.Index, t.Label, sec(t.Start), sec(t.End))
		ev := t.Event
		switch {
		case ev == nil:
			fmt.Fprintf(w, "resolution of turn %d (scored there)\n", t.Index-1)
		case ev.T != nil:
			v := ev.T
			onset := "none"
			if v.Onset != nil {
				onset = sec(*v.Onset)
			}
			fmt.Fprintf(w, "fresh_onset=%s presence=%s outcome=%s\n", yesNo(v.FreshOnset), yesNo(v.Presence), v.Outcome)
			fmt.Fprintf(w, "        active at tE=%s: %s; first onset in (%s, %s]: %s; answer audio [%s, %s)\n",
				sec(t.End), yesNo(v.ActiveAtEnd), sec(t.End), sec(t.End+r.Protocol.TOnsetWindow), onset, sec(v.AnswerSpan.Start), sec(v.AnswerSpan.End))
		case ev.Silence != nil:
			v := ev.Silence
			fmt.Fprintf(w, "silence=%s\n", t.Silence)
			if v.Silent() {
				fmt.Fprintf(w, "        window [%s, %s): no model speech\n", sec(v.Window.Start), sec(v.Window.End))
			} else {
				var sp []string
				for _, s := range v.Speech {
					sp = append(sp, fmt.Sprintf("[%s, %s)", sec(s.Start), sec(s.End)))
				}
				fmt.Fprintf(w, "        window [%s, %s): speech %s = %.0f ms (no audio to judge: speech fails)\n",
					sec(v.Window.Start), sec(v.Window.End), strings.Join(sp, " "), v.SpeechMS)
			}
		case ev.N4 != nil:
			v := ev.N4
			fmt.Fprintf(w, "window_response=%s yield=%s\n", yesNo(v.WindowResponse), t.Yield)
			fmt.Fprintf(w, "        spoke during question [%s, %s): %s; onset in (%s, %s]: %s; active at r=%s: %s\n",
				sec(v.Question.Start), sec(v.Question.End), yesNo(v.SpokeDuringQuestion), sec(v.Question.End), sec(v.Resolution),
				yesNo(v.OnsetInGap), sec(v.Resolution), yesNo(v.ActiveAtResolution))
			again := ""
			if v.Yield == score.YieldFailResumed {
				for _, e := range r.Episodes {
					if e.Start > v.Deadline && e.Start < v.ObserveEnd {
						again = fmt.Sprintf(" (speaking again at %s)", sec(e.Start))
						break
					}
				}
			}
			fmt.Fprintf(w, "        active at deadline %s: %s; observed until %s: %s%s\n",
				sec(v.Deadline), yesNo(v.Yield == score.YieldFailStillVoicing), sec(v.ObserveEnd), v.Yield, again)
		}
	}
}
