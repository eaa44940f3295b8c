// Package explain scores a hand-written timeline (turns as played, model speech as raw
// regions) without any audio, for `duplexmpe explain`: Parse checks the JSON and names
// the line and field of every mistake, Score computes every verdict of protocol section 5
// with the rules the scorer uses on recordings (core/score's Events), the speech merged
// into episodes as the VAD merges it (core/vad's MergeRegions). The command prints the
// result.
package explain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/core/vad"
)

// MaxSeconds bounds the times of speech regions: one conversation, in seconds from its
// start.
const MaxSeconds = 3600

// Input is a parsed, checked explain timeline.
type Input struct {
	Timeline   timeline.Timeline
	Speech     []timeline.Episode // raw regions as written
	Params     protocol.Params
	MergePause float64
	MinSpeech  float64
}

// overrides is the optional "protocol" object: section 8 constants plus the two
// VAD post-processing settings that apply to hand-written regions.
type overrides struct {
	protocol.Params
	MergePause float64 `json:"merge_pause"`
	MinSpeech  float64 `json:"min_speech"`
}

type inputTurn struct {
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

// Parse reads and checks an explain timeline. Every error names the line and
// the field (turns[2].end, speech[0], protocol.n4_gap) and says what to change.
func Parse(data []byte) (Input, error) {
	ov := overrides{Params: protocol.Defaults()}
	vad := protocol.DefaultVAD()
	ov.MergePause, ov.MinSpeech = vad.MergePause, vad.MinSpeech
	var turns []inputTurn
	var turnLines, speechLines []int
	var speech []timeline.Episode
	seen := map[string]bool{}

	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if tok, err := dec.Token(); err != nil {
		return Input{}, jsonError(data, dec, "", err)
	} else if d, ok := tok.(json.Delim); !ok || d != '{' {
		return Input{}, &inputError{1, "", `the timeline must be a JSON object: {"turns": [...], "speech": [...]}`}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Input{}, jsonError(data, dec, "", err)
		}
		key, _ := tok.(string)
		keyLine := lineAt(data, dec.InputOffset()-int64(len(key))-2)
		if seen[key] {
			return Input{}, &inputError{keyLine, key, "appears twice; keep one"}
		}
		seen[key] = true
		switch key {
		case "turns", "speech":
			if err := expectDelim(data, dec, key, '['); err != nil {
				return Input{}, err
			}
			for i := 0; dec.More(); i++ {
				field := fmt.Sprintf("%s[%d]", key, i)
				line := lineAt(data, dec.InputOffset())
				if key == "turns" {
					var t inputTurn
					if err := dec.Decode(&t); err != nil {
						return Input{}, jsonError(data, dec, field, err)
					}
					turns, turnLines = append(turns, t), append(turnLines, line)
					continue
				}
				var r []float64
				if err := dec.Decode(&r); err != nil {
					return Input{}, jsonError(data, dec, field, fmt.Errorf("%w (write a region as [start, end] in seconds)", err))
				}
				if len(r) != 2 {
					return Input{}, &inputError{line, field, fmt.Sprintf("has %d numbers; write a region as [start, end] in seconds", len(r))}
				}
				speech, speechLines = append(speech, timeline.Episode{Start: r[0], End: r[1]}), append(speechLines, line)
			}
			if _, err := dec.Token(); err != nil { // ]
				return Input{}, jsonError(data, dec, key, err)
			}
		case "protocol":
			if err := dec.Decode(&ov); err != nil {
				return Input{}, jsonError(data, dec, "protocol", err)
			}
		default:
			return Input{}, &inputError{keyLine, key, `unknown key; the timeline has "turns", "speech" and optionally "protocol"`}
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return Input{}, jsonError(data, dec, "", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Input{}, &inputError{lineAt(data, dec.InputOffset()), "", "unexpected content after the closing brace of the timeline object"}
	}

	in := Input{Speech: speech, Params: ov.Params, MergePause: ov.MergePause, MinSpeech: ov.MinSpeech}
	protoLine := 1
	if i := bytes.Index(data, []byte(`"protocol"`)); i >= 0 {
		protoLine = lineAt(data, int64(i))
	}
	if err := in.Params.Validate(); err != nil {
		return Input{}, &inputError{protoLine, "protocol", err.Error()}
	}
	for name, v := range map[string]float64{"merge_pause": in.MergePause, "min_speech": in.MinSpeech} {
		if v < 0 || math.IsNaN(v) {
			return Input{}, &inputError{protoLine, "protocol." + name, fmt.Sprintf("= %g must not be negative", v)}
		}
	}
	if !seen["turns"] || len(turns) == 0 {
		return Input{}, &inputError{1, "turns", `missing or empty; add "turns": [{"label": "T", "start": 0, "end": 5}, ...]`}
	}
	for i, t := range turns {
		tt, err := checkTurn(t, i, turnLines[i], turns, in.Params)
		if err != nil {
			return Input{}, err
		}
		in.Timeline.Turns = append(in.Timeline.Turns, tt)
	}
	for i, r := range speech {
		if r.End <= r.Start {
			return Input{}, &inputError{speechLines[i], fmt.Sprintf("speech[%d]", i),
				fmt.Sprintf("[%g, %g] ends before it starts; write [start, end] with end > start", r.Start, r.End)}
		}
		// The VAD's rules run sample by sample over the regions (vad.MergeRegions).
		if r.Start < 0 || r.End > MaxSeconds {
			return Input{}, &inputError{speechLines[i], fmt.Sprintf("speech[%d]", i),
				fmt.Sprintf("[%g, %g] is not within [0, %g]: times are seconds from the start of one conversation", r.Start, r.End, float64(MaxSeconds))}
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

func checkTurn(t inputTurn, i, line int, turns []inputTurn, p protocol.Params) (timeline.Turn, error) {
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
				Seconds(s), Seconds(p.N4Gap), Seconds(*turns[i-1].End), Seconds(p.N4Gap), Seconds(want), Seconds(want), Seconds(s-*turns[i-1].End))
		}
	}
	return timeline.Turn{Index: i, Label: t.Label, Speaker: t.Speaker, Text: t.Text, Addressee: t.Addressee, Start: s, End: e}, nil
}

// Result is what explain prints.
type Result struct {
	Protocol   protocol.Params    `json:"protocol"`
	MergePause float64            `json:"merge_pause"`
	MinSpeech  float64            `json:"min_speech"`
	Episodes   []timeline.Episode `json:"episodes"`
	Turns      []Turn             `json:"turns"`
}

// Turn is one turn with its verdicts; only the fields of its label are set.
type Turn struct {
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

// Score scores a parsed timeline: raw regions are merged into episodes by the VAD's own
// rules (vad.MergeRegions: a pause shorter than the VAD's merge edge, 832 ms at the
// default merge_pause, merges; an episode of at least min_speech is kept), then every section 5 verdict is computed. With no audio, any
// speech in a silence window fails.
func Score(in Input) Result {
	v := protocol.DefaultVAD()
	v.MergePause, v.MinSpeech, v.SpeechPad = in.MergePause, in.MinSpeech, 0
	eps := vad.MergeRegions(in.Speech, v)
	if eps == nil {
		eps = []timeline.Episode{}
	}
	res := Result{Protocol: in.Params, MergePause: in.MergePause, MinSpeech: in.MinSpeech, Episodes: eps}
	byTurn := map[int]score.Event{}
	for _, ev := range score.Events(in.Timeline, eps, in.Params) {
		byTurn[ev.Turn] = ev
	}
	for i, t := range in.Timeline.Turns {
		et := Turn{Index: i, Label: t.Label, Start: t.Start, End: t.End}
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

// Seconds prints seconds without floating-point noise (10.6 + 5 prints as 15.6, not
// 15.600000000000001): rounded to the microsecond.
func Seconds(x float64) string {
	return strconv.FormatFloat(math.Round(x*1e6)/1e6, 'g', -1, 64)
}
