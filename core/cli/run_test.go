package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/tools/clitest"
)

// runFixture writes a run file over the first shipped pair, with real plugin processes:
// flite speaks it, the silent baseline and the Go example (labelled beeper here; it
// answers pauses with a spoken sentence) play it, pocketsphinx and the lexical judge
// score it.
func runFixture(t *testing.T, n4gap string) (dir, runFile string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs real plugins end to end")
	}
	flite := buildFlitePlugin(t)
	bins := map[string]string{}
	for _, pkg := range []string{"plugins/silent", "examples/plugin-go", "plugins/pocketsphinx", "plugins/lexical-judge"} {
		bins[filepath.Base(pkg)] = buildPlugin(t, pkg)
	}
	dir = t.TempDir()
	clitest.FirstPair(t, dir)
	runFile = filepath.Join(dir, "run.hcl")
	hcl := fmt.Sprintf(`
plugin "flite" { source = %q }
plugin "silent" { source = %q }
plugin "beeper" { source = %q }
plugin "pocketsphinx" { source = %q }
plugin "lexical" { source = %q }

dataset "one" {
  scenarios = "scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out       = "build/one"
}

evaluation "e" {
  dataset = dataset.one
  models  = [plugin.silent, plugin.beeper]
  asr     = plugin.pocketsphinx
  judge   = plugin.lexical
  out     = "runs/e"
  protocol { n4_gap = %q }
}
`, flite, bins["silent"], bins["plugin-go"], bins["pocketsphinx"], bins["lexical-judge"], n4gap)
	if err := os.WriteFile(runFile, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, runFile
}

// runCLI runs the command line in dir, as a user would: runCLIContext without a deadline.
func runCLI(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLIContext(context.Background(), dir, args...)
}

// TestRunTwiceReusesEverything is the resume promise of the run command: the second run
// of the same file starts no model session and judges nothing again.
func TestRunTwiceReusesEverything(t *testing.T) {
	dir, runFile := runFixture(t, "3s")

	code, out, errs := runCLI(t, dir, "run", runFile)
	if code != ExitOK {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "first run", out,
		"model silent: 2 conversations: 0 reused, 2 played, 0 failed",
		"model beeper: 2 conversations: 0 reused, 2 played, 0 failed",
		"scored 4 conversations (4 now, 0 reused)",
		"fresh onset", "silent", "explicit", "implicit")
	runDir := filepath.Join(dir, "runs", "e")
	for _, f := range []string{"manifest.json", "run.json", report.SummaryFile, report.MetaFile, report.HTMLFile, report.MarkdownFile, report.CSVFile, report.JSONFile} {
		if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
			t.Errorf("the run left no %s: %v", f, err)
		}
	}
	for _, name := range []string{"silent", "beeper", "pocketsphinx", "lexical"} {
		if fi, err := os.Stat(filepath.Join(runDir, "logs", name+".log")); err != nil || fi.Size() == 0 {
			t.Errorf("plugin %s left no log in the run directory: %v", name, err)
		}
	}
	sum, meta, err := report.Load(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Judge == nil || meta.Judge.Plugin != "lexical-judge" || meta.ASR == nil || meta.ASR.Plugin != "pocketsphinx" {
		t.Errorf("report meta does not name the scorers: judge %+v, asr %+v", meta.Judge, meta.ASR)
	}
	if len(meta.Models) != 2 {
		t.Errorf("report meta lists %d models, want 2", len(meta.Models))
	}
	// The silent baseline: no fresh onset on either T, every silence window kept.
	for _, e := range sum.Entries {
		if e.Model != "silent" {
			continue
		}
		if e.FreshOnset.K != 0 || e.FreshOnset.N != 1 {
			t.Errorf("silent %s fresh onset = %d/%d, want 0/1", e.Condition, e.FreshOnset.K, e.FreshOnset.N)
		}
		if e.Silence.N == 0 || e.Silence.K != e.Silence.N {
			t.Errorf("silent %s silence = %d/%d, want all", e.Condition, e.Silence.K, e.Silence.N)
		}
	}

	code, out, errs = runCLI(t, dir, "run", runFile)
	if code != ExitOK {
		t.Fatalf("second run: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "second run", out,
		"plan silent: 2 conversations: 2 reused",
		"plan beeper: 2 conversations: 2 reused",
		"plugins started: none",
		"model silent: 2 conversations: 2 reused, 0 played, 0 failed",
		"model beeper: 2 conversations: 2 reused, 0 played, 0 failed",
		"no model plugin started",
		"scored 4 conversations (0 now, 4 reused)",
		"scorer calls: 0 transcribed (0 transcripts reused), 0 judged (0 verdicts reused); plugins started: none")

	// score re-scores from the store alone, with the run file it finds in run.json.
	code, out, errs = runCLI(t, dir, "score", "runs/e")
	if code != ExitOK {
		t.Fatalf("score: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "scored 4 conversations (0 now, 4 reused)") {
		t.Errorf("score did not reuse the verdicts:\n%s", out)
	}
	code, _, errs = runCLI(t, dir, "score", "runs/e", "--judge", "nosuch")
	if code != ExitUsage || !strings.Contains(errs, "nosuch") {
		t.Errorf("score --judge nosuch: exit %d, %s", code, errs)
	}
}

// A changed schedule invalidates every item, and the run says so, field by field; the
// old items stay on disk as stale, are never counted, and prune removes them. A run
// directory of another evaluation is refused.
func TestRunReplaysWhatAChangedScheduleInvalidates(t *testing.T) {
	dir, runFile, src := playedFixture(t)
	if err := os.WriteFile(runFile, bytes.Replace(src, []byte(`n4_gap = "3s"`), []byte(`n4_gap = "2s"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "runs", "e")
	// The plan says what the run will do: the items are played again, whatever the
	// store holds of the same models and scenarios.
	code, out, errs := runCLI(t, dir, "plan", runFile)
	if code != ExitOK {
		t.Fatalf("plan after a schedule change: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "plan after a schedule change", out,
		"2 models x 2 conversations x 1 repeat = 4 items: 0 done, 4 to play",
		"4 items of earlier plans are kept in "+runDir+" and not counted")
	code, out, errs = runCLI(t, dir, "run", runFile)
	if code != ExitOK {
		t.Fatalf("run after a schedule change: exit %d\n%s\n%s", code, out, errs)
	}
	// The cost header and the per-model lines under it are of one plan.
	clitest.InOrder(t, "run after a schedule change", out,
		"2 models x 2 conversations x 1 repeat = 4 items: 0 done, 4 to play",
		"plan silent: 2 conversations: 0 reused, 2 to play (2 schedule.n4_gap: 3 -> 2)",
		"plan beeper: 2 conversations: 0 reused, 2 to play (2 schedule.n4_gap: 3 -> 2)",
		"4 items of earlier plans are kept in "+runDir+" and not counted; `duplexmpe prune "+runDir+"` removes them",
		"model silent: 2 conversations: 0 reused, 2 played",
		"scored 4 conversations (4 now, 0 reused)",
		"4 items of earlier plans in the run directory are not counted")
	code, out, errs = runCLI(t, dir, "prune", "runs/e")
	if code != ExitOK || !strings.Contains(out, "removed 4 items of earlier plans from runs/e; 4 items of the current plan kept") {
		t.Fatalf("prune: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs = runCLI(t, dir, "score", "runs/e"); code != ExitOK || strings.Contains(out, "earlier plans") || !strings.Contains(out, "scored 4 conversations (0 now, 4 reused)") {
		t.Errorf("score after prune: exit %d\n%s\n%s", code, out, errs)
	}

	if err := os.WriteFile(runFile, bytes.Replace(src, []byte(`evaluation "e"`), []byte(`evaluation "f"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, dir, "run", runFile)
	if code != ExitDeterministic || !strings.Contains(errs, `holds the run "e", not "f"`) || !strings.Contains(errs, runDir) {
		t.Errorf("another evaluation in the same directory: exit %d\n%s", code, errs)
	}
}

// plan counts every repeat of a run that repeats, with the item ids `run` plays: three
// repeats of a run whose first repeat is played are four items done and eight to play.
func TestPlanCountsTheRepeatsTheRunPlays(t *testing.T) {
	dir, runFile := runFixture(t, "3s")
	if code, out, errs := runCLI(t, dir, "run", "--no-score", runFile); code != ExitOK {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	src, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(runFile, bytes.Replace(src, []byte(`out     = "runs/e"`), []byte("out     = \"runs/e\"\n  repeats = 3"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, dir, "plan", runFile)
	if code != ExitOK {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "plan of three repeats", out, "2 models x 2 conversations x 3 repeats = 12 items: 4 done, 8 to play")
	if strings.Contains(out, "not known until it starts") {
		t.Errorf("plan did not know a model it has a record of:\n%s", out)
	}
	code, out, errs = runCLI(t, dir, "plan", "--shard", "1/2", "--json", runFile)
	var shard []struct {
		Repeats int `json:"repeats"`
		Total   struct {
			Items int `json:"items"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &shard); code != ExitOK || err != nil || len(shard) != 1 {
		t.Fatalf("plan --json: exit %d, %v\n%s\n%s", code, err, out, errs)
	}
	if n := shard[0].Total.Items; shard[0].Repeats != 3 || n == 0 || n == 12 {
		t.Errorf("shard 1/2 of 12 items: %d items, repeats %d; want its own items (by id) of three repeats", n, shard[0].Repeats)
	}
	code, out, errs = runCLI(t, dir, "run", "--no-score", runFile)
	if code != ExitOK {
		t.Fatalf("run of three repeats: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "run of three repeats", out,
		"2 models x 2 conversations x 3 repeats = 12 items: 4 done, 8 to play",
		"plan silent: 6 conversations: 2 reused, 4 to play",
		"model silent: 6 conversations: 2 reused, 4 played")
}

// TestScoreNeedsARunDirectory: score refuses a folder that is no run directory.
func TestScoreNeedsARunDirectory(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCLI(t, dir, "score", "nothing-here")
	if code != ExitDeterministic || !strings.Contains(errs, "not a run directory") { // the input is wrong (issue 24)
		t.Errorf("exit %d, %s", code, errs)
	}
	code, _, _ = runCLI(t, dir, "run")
	if code != ExitUsage {
		t.Errorf("run without a file: exit %d, want %d", code, ExitUsage)
	}
}

// Commands that run plugins refuse one that no longer matches the lock file, before it
// starts: here `build` with a flite binary changed after `lock`.
func TestRunningCommandsRefuseAPluginThatNoLongerMatchesTheLock(t *testing.T) {
	src := buildFlitePlugin(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "flite")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run.hcl")
	os.WriteFile(run, []byte(`
plugin "flite" { source = "flite" }
dataset "gen" {
  generate {
    generator = "procedural"
    pairs     = 1
    seed      = 3
  }
  tts    = plugin.flite
  voices = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out    = "out"
}
`), 0o644)
	if code, out, errs := runCLI(t, dir, "lock", run); code != ExitOK {
		t.Fatalf("lock: exit %d\n%s\n%s", code, out, errs)
	}
	f, err := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("changed after lock"))
	f.Close()
	code, _, errs := runCLI(t, dir, "build", run)
	if code != ExitDeterministic || !strings.Contains(errs, `"flite"`) || !strings.Contains(errs, "lock") {
		t.Errorf("build with a changed plugin: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "dataset.json")); err == nil {
		t.Error("the changed plugin built a dataset")
	}
}

// A plan whose conversations have many distinct reasons to be played names the three
// most frequent and counts the rest, so one line stays a line.
func TestPlanLineNamesAtMostThreeReasons(t *testing.T) {
	var rs []evaluate.Reason
	for i := range 6 {
		rs = append(rs, evaluate.Reason{Why: fmt.Sprintf("reason %d", i), Items: 10 - i})
	}
	if got, want := reasonsText(rs), "10 reason 0; 9 reason 1; 8 reason 2; 18 more, for 3 other reasons"; got != want {
		t.Errorf("reasonsText = %q, want %q", got, want)
	}
	if got, want := reasonsText(rs[:2]), "10 reason 0; 9 reason 1"; got != want {
		t.Errorf("reasonsText = %q, want %q", got, want)
	}
}
