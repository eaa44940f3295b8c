package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/score/explain"
)

func runExplain(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	wd, _ := os.Getwd()
	code := Run(&State{
		Args:   append([]string{"explain"}, args...),
		Stdin:  strings.NewReader(stdin),
		Stdout: &out, Stderr: &errb,
		Getwd: func() (string, error) { return wd, nil },
	})
	return code, out.String(), errb.String()
}

func explainJSON(t *testing.T, input string) explain.Result {
	t.Helper()
	code, out, errs := runExplain(t, input, "--timeline", "-", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res explain.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return res
}

// verdicts flattens each turn's verdicts into one comparable string.
func verdicts(res explain.Result) []string {
	var out []string
	for _, t := range res.Turns {
		s := t.Label
		if t.FreshOnset != nil {
			s += " fresh_onset=" + yesNo(*t.FreshOnset) + " presence=" + yesNo(*t.Presence) + " " + t.Outcome
		}
		if t.Silence != "" {
			s += " silence=" + t.Silence
		}
		if t.WindowResponse != nil {
			s += " window_response=" + yesNo(*t.WindowResponse) + " yield=" + t.Yield
		}
		out = append(out, s)
	}
	return out
}

// Every verdict kind explain can print, each worked by hand with the section 8
// defaults (turn_gap 0.5, t_onset_window 5, n4_gap 3, yield_deadline 2, yield_observe
// 0.5, merge_pause 0.8, min_speech 0.12).
func TestExplainEveryVerdictKind(t *testing.T) {
	cases := []struct {
		name  string
		input string
		want  []string
	}{
		{
			// T [0, 5): tE = 5. Regions [5.6, 6.0] and [6.5, 8.5] are 0.5 s apart (< 0.8):
			// one episode [5.6, 8.5). Not active at 5; onset 5.6 in (5, 10]: fresh onset.
			// N1 [9, 10) is last: window [9, 10.5); the episode ended at 8.5: pass.
			"fresh onset, silence pass",
			`{"turns":[{"label":"T","start":0,"end":5},{"label":"N1","start":9,"end":10}],"speech":[[5.6,6.0],[6.5,8.5]]}`,
			[]string{"T fresh_onset=yes presence=yes fresh-onset", "N1 silence=pass"},
		},
		{
			// [4, 7) covers tE = 5: presence without a fresh onset. N2 window [9, 10.5);
			// [10.2, 10.4) is 0.2 s >= 0.12: kept, overlaps: fail (no audio to judge).
			"already speaking, silence fail",
			`{"turns":[{"label":"T","start":0,"end":5},{"label":"N2","start":9,"end":10}],"speech":[[4,7],[10.2,10.4]]}`,
			[]string{"T fresh_onset=no presence=yes already-speaking", "N2 silence=fail"},
		},
		{
			// The only onset, 10.5, is after tE + 5 = 10: silent. N3 window [11, 12.5):
			// [10.5, 10.9) ended before it: pass. [12.45, 12.5] is 50 ms < 120 ms: dropped.
			"silent T",
			`{"turns":[{"label":"T","start":0,"end":5},{"label":"N3","start":11,"end":12}],"speech":[[10.5,10.9],[12.45,12.5]]}`,
			[]string{"T fresh_onset=no presence=no silent", "N3 silence=pass"},
		},
		{
			// Q [0, 2), r = 2 + 3 = 5, deadline 7, observation end max(7, 6 + 0.5) = 7.
			// [2.5, 6): onset in (2, 5], active(5), silent at 7: pass.
			"yield pass",
			`{"turns":[{"label":"N4_Q","start":0,"end":2},{"label":"N4_R","start":5,"end":6}],"speech":[[2.5,6]]}`,
			[]string{"N4_Q window_response=yes yield=pass", "N4_R"},
		},
		{
			// Same event; [2.5, 7.5) is active at the deadline 7.
			"still voicing",
			`{"turns":[{"label":"N4_Q","start":0,"end":2},{"label":"N4_R","start":5,"end":6}],"speech":[[2.5,7.5]]}`,
			[]string{"N4_Q window_response=yes yield=fail-still-voicing", "N4_R"},
		},
		{
			// N4_R [5, 8): observation end max(7, 8.5) = 8.5. [2.5, 6) then [7.2, 8)
			// (gap 1.2 >= 0.8, not merged): silent at 7, speaking at 7.2 < 8.5: resumed.
			"resumed",
			`{"turns":[{"label":"N4_Q","start":0,"end":2},{"label":"N4_R","start":5,"end":8}],"speech":[[2.5,6],[7.2,8]]}`,
			[]string{"N4_Q window_response=yes yield=fail-resumed", "N4_R"},
		},
		{
			// [1.5, 6) overlaps the question [0, 2).
			"spoke during question",
			`{"turns":[{"label":"N4_Q","start":0,"end":2},{"label":"N4_R","start":5,"end":6}],"speech":[[1.5,6]]}`,
			[]string{"N4_Q window_response=yes yield=excluded-spoke-during-question", "N4_R"},
		},
		{
			// The onset 5.5 is after r = 5; nothing overlaps [0, 5): no window response.
			"no onset in gap",
			`{"turns":[{"label":"N4_Q","start":0,"end":2},{"label":"N4_R","start":5,"end":6}],"speech":[[5.5,6.5]]}`,
			[]string{"N4_Q window_response=no yield=excluded-no-onset-in-gap", "N4_R"},
		},
		{
			// Onset 2.5 in (2, 5], but [2.5, 4) has ended by r = 5.
			"not speaking at resolution",
			`{"turns":[{"label":"N4_Q","start":0,"end":2},{"label":"N4_R","start":5,"end":6}],"speech":[[2.5,4]]}`,
			[]string{"N4_Q window_response=yes yield=excluded-not-speaking-at-resolution", "N4_R"},
		},
		{
			// Overrides: n4_gap 1 puts r at 3; merge_pause 0.2 keeps [2.2, 2.5] and
			// [2.8, 3.5] apart (gap 0.3); onset 2.2 in (2, 3], active(3) in [2.8, 3.5).
			// Deadline 3 + 2 = 5, observation end max(5, 4 + 0.5) = 5: pass.
			"protocol overrides",
			`{"turns":[{"label":"N4_Q","start":0,"end":2},{"label":"N4_R","start":3,"end":4}],"speech":[[2.2,2.5],[2.8,3.5]],
			  "protocol":{"n4_gap":1,"merge_pause":0.2}}`,
			[]string{"N4_Q window_response=yes yield=pass", "N4_R"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := verdicts(explainJSON(t, tc.input)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("verdicts\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// The teaching examples: their verdicts are worked out in examples/timelines/README.md.
func TestExplainExamples(t *testing.T) {
	want := map[string][]string{
		"walkthrough.json": {
			"N3 silence=pass", "N1 silence=pass", "T fresh_onset=yes presence=yes fresh-onset",
			"N2 silence=pass", "N4_Q window_response=yes yield=pass", "N4_R", "N3 silence=fail",
		},
		"t-outcomes.json": {
			"N3 silence=pass", "T fresh_onset=yes presence=yes fresh-onset", "N1 silence=pass",
			"T fresh_onset=no presence=yes already-speaking", "N2 silence=pass",
			"T fresh_onset=no presence=no silent", "N3 silence=pass",
		},
		"n4-yield.json": {
			"N4_Q window_response=yes yield=pass", "N4_R",
			"N4_Q window_response=yes yield=fail-still-voicing", "N4_R",
			"N4_Q window_response=yes yield=fail-resumed", "N4_R",
		},
		"n4-excluded.json": {
			"N4_Q window_response=yes yield=excluded-spoke-during-question", "N4_R",
			"N4_Q window_response=no yield=excluded-no-onset-in-gap", "N4_R",
			"N4_Q window_response=yes yield=excluded-not-speaking-at-resolution", "N4_R",
		},
	}
	files, _ := filepath.Glob("../../examples/timelines/*.json")
	if len(files) != len(want) {
		t.Errorf("examples/timelines has %d JSON files, the test knows %d: add the new one here", len(files), len(want))
	}
	for _, f := range files {
		w, ok := want[filepath.Base(f)]
		if !ok {
			continue
		}
		code, out, errs := runExplain(t, "", "--timeline", f, "--json")
		if code != ExitOK {
			t.Errorf("%s: exit %d: %s", f, code, errs)
			continue
		}
		var res explain.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if got := verdicts(res); !reflect.DeepEqual(got, w) {
			t.Errorf("%s verdicts\n got %q\nwant %q", f, got, w)
		}
		// The text form carries the same verdicts.
		code, text, _ := runExplain(t, "", "--timeline", f)
		if code != ExitOK || !strings.Contains(text, "model speech episodes") {
			t.Errorf("%s: text output exit %d:\n%s", f, code, text)
		}
	}
}

func TestExplainTextShowsTheArithmetic(t *testing.T) {
	code, out, _ := runExplain(t, `{"turns":[{"label":"T","start":0,"end":5},{"label":"N1","start":9,"end":10}],"speech":[[5.6,6.0],[6.5,8.5],[10.2,10.4]]}`, "--timeline", "-")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"[5.6, 8.5) [10.2, 10.4)",
		"fresh_onset=yes presence=yes outcome=fresh-onset",
		"first onset in (5, 10]: 5.6",
		"answer audio [5.6, 9)",
		"silence=fail",
		"speech [10.2, 10.4) = 200 ms",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestExplainTextShowsResumption(t *testing.T) {
	// examples/timelines/n4-yield.json, third event: silent at the deadline 27, speaking
	// again at 28.2 < 28.5.
	code, out, _ := runExplain(t, "", "--timeline", "../../examples/timelines/n4-yield.json")
	if code != ExitOK || !strings.Contains(out, "observed until 28.5: fail-resumed (speaking again at 28.2)") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestExplainBadInput(t *testing.T) {
	cases := []struct {
		name  string
		input string
		want  []string // all must appear in the error
	}{
		{"syntax", "{\n\"turns\": [\n{\"label\": \"T\", \"start\": 0 \"end\": 5}]}", []string{"line 3", "invalid JSON"}},
		{"unknown turn field", "{\"turns\": [\n{\"label\": \"T\", \"start\": 0, \"end\": 5},\n{\"lable\": \"N1\", \"start\": 6, \"end\": 7}]}", []string{"line 3", "turns[1]", `unknown field "lable"`}},
		{"wrong type", "{\"turns\": [\n{\"label\": \"T\", \"start\": \"zero\", \"end\": 5}]}", []string{"line 2", "turns[0].start", "expected a float64"}},
		{"end before start", "{\"turns\": [\n{\"label\": \"T\", \"start\": 0, \"end\": 5},\n{\"label\": \"N1\", \"start\": 6, \"end\": 5.5}]}", []string{"line 3", "turns[1].end", "end > start"}},
		{"unknown label", "{\"turns\": [{\"label\": \"N5\", \"start\": 0, \"end\": 5}]}", []string{"line 1", "turns[0].label", `"N5"`, "N4_Q"}},
		{"overlapping turns", "{\"turns\": [{\"label\": \"T\", \"start\": 0, \"end\": 5},\n{\"label\": \"N1\", \"start\": 4, \"end\": 6}]}", []string{"line 2", "turns[1].start", "before the previous turn ends"}},
		{"N4_Q without N4_R", "{\"turns\": [{\"label\": \"N4_Q\", \"start\": 0, \"end\": 2},\n{\"label\": \"N1\", \"start\": 5, \"end\": 6}]}", []string{"turns[0].label", "add the N4_R"}},
		{"N4_R alone", "{\"turns\": [{\"label\": \"N1\", \"start\": 0, \"end\": 2},\n{\"label\": \"N4_R\", \"start\": 5, \"end\": 6}]}", []string{"line 2", "turns[1].label", "must follow its N4_Q"}},
		{"N4_R not at n4_gap", "{\"turns\": [{\"label\": \"N4_Q\", \"start\": 0, \"end\": 2},\n{\"label\": \"N4_R\", \"start\": 6, \"end\": 7}]}", []string{"line 2", "turns[1].start", "2 + 3 = 5", `"n4_gap": 4`}},
		{"missing start", "{\"turns\": [{\"label\": \"T\", \"end\": 2}]}", []string{"turns[0]", `needs "start" and "end"`}},
		{"no turns", `{"speech": []}`, []string{"turns", "missing or empty"}},
		{"region of three", "{\"turns\": [{\"label\": \"T\", \"start\": 0, \"end\": 5}],\n\"speech\": [[1, 2],\n[3, 4, 5]]}", []string{"line 3", "speech[1]", "[start, end]"}},
		{"reversed region", "{\"turns\": [{\"label\": \"T\", \"start\": 0, \"end\": 5}],\n\"speech\": [\n[4, 3]]}", []string{"line 3", "speech[0]", "end > start"}},
		{"unknown key", "{\"turns\": [{\"label\": \"T\", \"start\": 0, \"end\": 5}],\n\"speeches\": []}", []string{"line 2", "speeches", "unknown key"}},
		{"bad override", "{\"turns\": [{\"label\": \"T\", \"start\": 0, \"end\": 5}],\n\"protocol\": {\"turn_gap\": -1}}", []string{"line 2", "protocol", "turn_gap = -1"}},
		{"unknown override", "{\"turns\": [{\"label\": \"T\", \"start\": 0, \"end\": 5}],\n\"protocol\": {\"n4gap\": 1}}", []string{"protocol", `unknown field "n4gap"`}},
		{"not an object", `[1, 2]`, []string{"line 1", "JSON object"}},
		{"truncated", "{\"turns\": [{\"label\": \"T\", \"start\": 0, \"end\": 5}", []string{"ends early"}},
		{"trailing", "{\"turns\": [{\"label\": \"T\", \"start\": 0, \"end\": 5}]}\n{}", []string{"line 2", "after the closing brace"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runExplain(t, tc.input, "--timeline", "-")
			if code != ExitFailed {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, ExitFailed, out, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Errorf("error lacks %q: %s", w, errs)
				}
			}
			if !strings.Contains(errs, "<stdin>") {
				t.Errorf("error does not name the input: %s", errs)
			}
		})
	}
}

func TestExplainCommandLine(t *testing.T) {
	if code, _, errs := runExplain(t, ""); code != ExitUsage || !strings.Contains(errs, "--timeline") {
		t.Errorf("no --timeline: exit %d, %s", code, errs)
	}
	code, _, errs := runExplain(t, "", "--timeline", "no/such/file.json")
	if code != ExitFailed || !strings.Contains(errs, "no/such/file.json") {
		t.Errorf("missing file: exit %d, %s", code, errs)
	}
}
