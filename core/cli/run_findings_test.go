package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/tools/clitest"
)

// A run whose conversations failed scores and reports the rest, then exits 1: it could
// not finish its work, and running it again may (it plays them again). A model that
// answers with tones, which Silero does not call speech, is named under the main table
// with the VAD command to check it. Real plugin processes throughout: the reliability
// tests' faulty model sends a NaN sample (every conversation fails), the host tests'
// beeper answers loud input with a tone. Then `explain RUN_DIR/items/ID` explains a
// stored conversation of the Go example (which speaks) event by event, as its viewer
// page does, and says why a failed one has nothing to explain.
func TestRunSaysWhatFailedAndWhatWasNotSpeech(t *testing.T) {
	dir, runFile := runFixture(t, "3s")
	src, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	hcl := strings.Replace(string(src), "models  = [plugin.silent, plugin.beeper]", "models  = [plugin.silent, plugin.beeper, plugin.tone, plugin.nan]", 1)
	hcl += `
plugin "tone" { source = "` + examplePlugin(t) + `" }
plugin "nan" {
  source = "` + buildPlugin(t, "tests/reliability/faulty") + `"
  config {
    fault = "nan"
  }
}
`
	if err := os.WriteFile(runFile, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, dir, "run", runFile)
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitFailed, out, errs)
	}
	runDir := filepath.Join(dir, "runs", "e")
	clitest.InOrder(t, "stdout", out,
		"model silent: 2 conversations: 0 reused, 2 played, 0 failed",
		"model nan: 2 conversations: 0 reused, 0 played, 2 failed",
		"model nan: 2 failed conversations are not scored",
		"fresh onset",
		"model tone: audio but no speech in 2 of 2 conversations with audio",
		"so every measure above treats it as silence, and it never spoke at all",
		"duplexmpe vad "+filepath.Join(runDir, "items"),
		"report: "+filepath.Join(runDir, "report.html"))
	if strings.Contains(out, "model silent: audio but no speech") || strings.Contains(out, "model nan: audio but no speech") {
		t.Errorf("a model without audio is named as audio without speech:\n%s", out)
	}
	clitest.InOrder(t, "stderr", errs, `Error: evaluation "e": 2 conversations failed (nan: 2); each item's failure.json in `+runDir+` says why`)
	if _, err := os.Stat(filepath.Join(runDir, "report.html")); err != nil {
		t.Errorf("no report despite the failures: %v", err)
	}

	// explain, on the items of the speaking example and of the failed model.
	ids := map[string][]string{} // model -> item ids
	ents, err := os.ReadDir(filepath.Join(runDir, "items"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		var meta struct{ Model, ScenarioID string }
		if raw, err := os.ReadFile(filepath.Join(runDir, "items", e.Name(), "item.json")); err == nil && json.Unmarshal(raw, &meta) == nil {
			ids[meta.Model] = append(ids[meta.Model], e.Name())
		}
	}
	if len(ids["beeper"]) != 2 || len(ids["nan"]) != 2 {
		t.Fatalf("items by model: %v", ids)
	}
	id := ids["beeper"][0]
	code, out, errs = runCLI(t, dir, "explain", filepath.Join("runs", "e", "items", id))
	if code != ExitOK {
		t.Fatalf("explain: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "explain", out, "item "+id+": model beeper, scenario hand-01-", "done",
		"model speech episodes: [", "\nT ", "said: ", "gold answer: 7:05", "heard (ASR): ", "judge: label ", "rule: ",
		"\nN", "rule: ", "to hear it: "+filepath.Join(runDir, "viewer", id+".html"))
	// Issue 30: the same item found by what it plays, a scenario id or a pair id and
	// condition, and the model's name.
	byPath := out
	var meta store.Meta
	if raw, err := os.ReadFile(filepath.Join(runDir, "items", id, "item.json")); err != nil || json.Unmarshal(raw, &meta) != nil {
		t.Fatalf("item.json: %v", err)
	}
	for _, args := range [][]string{
		{"--scenario", meta.ScenarioID, "--model", "beeper"},
		{"--scenario", meta.PairID, "--condition", meta.Condition, "--model", "beeper"},
	} {
		code, out, errs = runCLI(t, dir, append([]string{"explain", filepath.Join("runs", "e")}, args...)...)
		if code != ExitOK || out != byPath {
			t.Errorf("explain %v: exit %d, %s\n%s\nwant what explain of the item's folder prints", args, code, errs, out)
		}
	}
	for args, want := range map[string]string{
		"--scenario " + meta.PairID + " --model beeper":                        "name one with --condition",
		"--scenario " + meta.ScenarioID + " --model nosuch":                    `plays no model "nosuch"; its models: silent, beeper`,
		"--scenario nosuch-01 --model beeper":                                  `no scenario "nosuch-01"`,
		"--scenario " + meta.ScenarioID + " --condition nosuch --model beeper": "no scenario",
	} {
		code, _, errs = runCLI(t, dir, append([]string{"explain", runDir}, strings.Fields(args)...)...)
		if code != ExitDeterministic || !strings.Contains(errs, want) {
			t.Errorf("explain %s: exit %d, %s; want exit 3 saying %q", args, code, errs, want)
		}
	}
	code, out, _ = runCLI(t, dir, "explain", "--json", filepath.Join(runDir, "items", id)+"/")
	var it viewer.Item
	if err := json.Unmarshal([]byte(out), &it); code != ExitOK || err != nil {
		t.Fatalf("explain --json: exit %d, %v\n%s", code, err, out)
	}
	var stored struct {
		Scored score.Scored `json:"scored"`
	}
	raw, err := os.ReadFile(filepath.Join(runDir, "items", id, "verdicts.json"))
	if err != nil || json.Unmarshal(raw, &stored) != nil {
		t.Fatalf("verdicts.json: %v", err)
	}
	if !it.Scored || len(it.Events) != len(stored.Scored.Events) || len(it.Episodes) == 0 {
		t.Fatalf("explain --json: %d events for %d stored verdicts, %d episodes", len(it.Events), len(stored.Scored.Events), len(it.Episodes))
	}
	for i, e := range it.Events {
		if e.Label == "T" && stored.Scored.Events[i].T == nil || len(e.Rules) == 0 || e.Verdict == "" {
			t.Errorf("event %d explained as %+v; stored %+v", i, e, stored.Scored.Events[i])
		}
	}

	// Issue 23: explain prints the model's words, one line per speech episode, and an N4
	// event that is not eligible as in no rate, never as a failure beside its own
	// "Excluded" rule (the silent model's N4 events have no onset in the gap).
	if len(it.Words) != len(it.Episodes) {
		t.Errorf("explain --json: words for %d of %d episodes: %+v", len(it.Words), len(it.Episodes), it.Words)
	}
	code, out, _ = runCLI(t, dir, "explain", filepath.Join(runDir, "items", id))
	if n := strings.Count(out, "  the model said ["); code != ExitOK || n != len(it.Episodes) {
		t.Errorf("explain prints the words of %d of %d episodes:\n%s", n, len(it.Episodes), out)
	}
	code, out, _ = runCLI(t, dir, "explain", filepath.Join(runDir, "items", ids["silent"][0]))
	excluded := 0
	for _, block := range strings.Split(out, "\n\n") {
		if !strings.Contains(block, "rule: Excluded") {
			continue
		}
		excluded++
		if head, _, _ := strings.Cut(block, "\n"); !strings.HasSuffix(head, "(in no rate)") {
			t.Errorf("an excluded N4 event reads %q", head)
		}
	}
	if code != ExitOK || excluded == 0 {
		t.Errorf("explain of the silent model's item: exit %d, %d excluded events:\n%s", code, excluded, out)
	}

	code, out, errs = runCLI(t, dir, "explain", filepath.Join(runDir, "items", ids["nan"][0]))
	if code != ExitFailed || !strings.Contains(out, "failed: model failed at frame 3") || !strings.Contains(errs, "has no verdicts and is in no denominator") {
		t.Errorf("explain of a failed conversation: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs = runCLI(t, dir, "explain", filepath.Join(runDir, "items")); code != ExitFailed || !strings.Contains(errs, "RUN_DIR/items/ID") {
		t.Errorf("explain of a non-item: exit %d\n%s", code, errs)
	}

	// Issue 30: `runs` lists the run under the folder with its models and state.
	code, out, errs = runCLI(t, dir, "runs", "--json")
	var runs []app.RunListing
	if code != ExitOK || json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 1 {
		t.Fatalf("runs --json: exit %d, %s\n%s", code, errs, out)
	}
	r := runs[0]
	if r.Dir != runDir || r.Evaluation != "e" || strings.Join(r.Models, " ") != "silent beeper tone nan" || r.Planned != 8 || r.Done != 6 || r.Failed != 2 || !r.Scored || r.Dataset == "" || r.Date.IsZero() {
		t.Errorf("runs --json: %+v", r)
	}
	code, out, _ = runCLI(t, dir, "runs", filepath.Join(dir, "runs"))
	clitest.InOrder(t, "runs", out, "run", "evaluation", "models", "state", runDir, "e", "silent, beeper, tone, nan", r.Dataset, "6 of 8 done, 2 failed, scored")
	if code, _, errs = runCLI(t, dir, "runs", filepath.Join(dir, "nosuch")); code != ExitDeterministic || !strings.Contains(errs, "nosuch") {
		t.Errorf("runs of a missing folder: exit %d, %s", code, errs)
	}
}
