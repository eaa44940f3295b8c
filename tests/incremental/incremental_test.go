// Package incremental tests, through the command line with real plugin processes, that
// a run directory is incremental and that pins and identities mean behaviour (issue 12):
// a third party's lab locks its run file, rebuilds, edits its plugin, adds a model,
// changes one, swaps the judge into a new view and compares.
package incremental

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/cli"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
	"github.com/duplexmpe/duplexmpe/tools/clitest"
	"github.com/duplexmpe/duplexmpe/tools/clitest/clirun"
)

// Exit codes of the CLI.
const (
	ExitOK     = cli.ExitOK
	ExitFailed = cli.ExitFailed
	// ExitDeterministic: the run file or a plugin's files must change (a refused pin,
	// a config the plugin's schema rejects).
	ExitDeterministic = cli.ExitDeterministic
)

func TestMain(m *testing.M) {
	code := m.Run()
	pluginhost.KillAll()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

// buildPlugin builds a shipped plugin once for the test process, reproducibly.
func buildPlugin(t *testing.T, pkg string) string {
	t.Helper()
	if filepath.Base(pkg) == "flite" {
		if _, err := exec.LookPath("flite"); err != nil {
			t.Skip("flite is not installed (scripts/install-apt.sh)")
		}
	}
	return plugintest.BuildGo(t, filepath.Join("../..", pkg))
}

// lab is a third party's checkout: a git repository holding its own Go model plugin
// (a copy of examples/plugin-go, the speaker), built the way `make build` builds plugins,
// and a run file that uses it beside the shipped plugins.
type lab struct {
	t   *testing.T
	dir string
}

func newLab(t *testing.T) *lab {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	l := &lab{t: t, dir: t.TempDir()}
	src, err := os.ReadFile(filepath.Join(root, "examples", "plugin-go", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	clitest.WriteFile(t, filepath.Join(l.dir, "speaker", "main.go"), string(src))
	clitest.WriteFile(t, filepath.Join(l.dir, "go.sum"), string(sum))
	clitest.WriteFile(t, filepath.Join(l.dir, "go.mod"), "module example.com/lab\n\ngo 1.26.8\n\nrequire github.com/duplexmpe/duplexmpe v0.0.0\n\nreplace github.com/duplexmpe/duplexmpe => "+root+"\n")
	clitest.WriteFile(t, filepath.Join(l.dir, ".gitignore"), "/bin/\n/runs/\n/build/\n")
	l.git("init", "-q")
	l.build() // resolves the module's requirements into go.mod before the first commit
	l.git("add", ".")
	l.git("commit", "-q", "-m", "lab")
	return l
}

func (l *lab) git(args ...string) {
	l.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = l.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		l.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// build is `make build` for the lab's plugin: the Makefile's reproducible flags.
func (l *lab) build() {
	l.t.Helper()
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-o", "bin/speaker", "./speaker")
	cmd.Dir = l.dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		l.t.Fatalf("building the lab's plugin: %v\n%s", err, out)
	}
}

// runFile writes the lab's run file over the first shipped pair with the given models:
// the lab's speaker (one sentence, by flite, when the room goes quiet), always-talk (speech everywhere: the
// ASR and the judge have work), silent; flite speaks the turns, pocketsphinx and the
// lexical judge score, and a second judge block, "second", is the lexical judge again
// under another name (plugins/openai's tests swap in a hosted judge).
func (l *lab) runFile(models string) string {
	l.t.Helper()
	bins := map[string]string{}
	for _, pkg := range []string{"plugins/flite", "plugins/always-talk", "plugins/silent", "plugins/pocketsphinx", "plugins/lexical-judge"} {
		bins[filepath.Base(pkg)] = buildPlugin(l.t, pkg)
	}
	if _, err := os.Stat(filepath.Join(l.dir, "scenarios", "scenarios.jsonl")); err != nil {
		clitest.FirstPair(l.t, l.dir)
	}
	path := filepath.Join(l.dir, "run.hcl")
	clitest.WriteFile(l.t, path, fmt.Sprintf(`plugin "flite" { source = %q }
plugin "speaker" { source = "bin/speaker" }
plugin "talker" { source = %q }
plugin "silent" { source = %q }
plugin "pocketsphinx" {
  source = %q
  config {
    fast = true
  }
}
plugin "lexical" { source = %q }
plugin "second" { source = %q }

dataset "one" {
  scenarios = "scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out       = "build/one"
}

evaluation "e" {
  dataset = dataset.one
  models  = [%s]
  asr     = plugin.pocketsphinx
  judge   = plugin.lexical
  out     = "runs/e"
  # always-talk never stops, so the wait after T lasts t_wait_cap: keep it short.
  protocol {
    t_onset_window = "2s"
    t_wait_cap     = "3s"
  }
}
`, bins["flite"], bins["always-talk"], bins["silent"], bins["pocketsphinx"], bins["lexical-judge"], bins["lexical-judge"], models))
	return path
}

// logSizes are the sizes of the run's plugin logs: a plugin that starts writes to its log.
func logSizes(t *testing.T, runDir string) map[string]int64 {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(runDir, "logs"))
	sizes := map[string]int64{}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			sizes[e.Name()] = fi.Size()
		}
	}
	return sizes
}

// Issue 12's promise, through the CLI with real plugin processes: lock, touch an
// untracked file, rebuild, run: accepted, nothing replayed and no plugin started; edit
// the plugin's source: refused with the line to change; add a model to the finished run:
// only its conversations play; score --judge on the scored run: nothing is transcribed.
func TestIncrementalRunPinsRebuildsAndNewModels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin and runs real plugins end to end")
	}
	l := newLab(t)
	runFile := l.runFile("plugin.speaker, plugin.talker")
	runDir := filepath.Join(l.dir, "runs", "e")
	if code, out, errs := clirun.Run(t, l.dir, "lock", runFile); code != ExitOK {
		t.Fatalf("lock: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := clirun.Run(t, l.dir, "run", runFile)
	if code != ExitOK {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "first run", out,
		"plan speaker: 2 conversations: 0 reused, 2 to play (2 new)",
		"plan talker: 2 conversations: 0 reused, 2 to play (2 new)",
		"plugins started: speaker, talker, pocketsphinx, lexical",
		"scored 4 conversations (4 now, 0 reused)")
	if m := regexp.MustCompile(`scorer calls: (\d+) transcribed`).FindStringSubmatch(out); m == nil || m[1] == "0" {
		t.Fatalf("the first run transcribed nothing; the test would prove nothing:\n%s", out)
	}

	// An untracked file and a rebuild leave the plugin's hash alone: the run is accepted,
	// nothing plays and no plugin process starts (their logs do not grow).
	clitest.WriteFile(t, filepath.Join(l.dir, "screenshot.png"), "an untracked file")
	l.build()
	logs := logSizes(t, runDir)
	code, out, errs = clirun.Run(t, l.dir, "run", runFile)
	if code != ExitOK {
		t.Fatalf("run after an untracked file and a rebuild: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "run after a rebuild", out,
		"tts plugin not started",
		"plan speaker: 2 conversations: 2 reused", "plan talker: 2 conversations: 2 reused",
		"plugins started: none",
		"model speaker: 2 conversations: 2 reused, 0 played", "model talker: 2 conversations: 2 reused, 0 played",
		"scored 4 conversations (0 now, 4 reused)", "plugins started: none")
	if after := logSizes(t, runDir); fmt.Sprint(after) != fmt.Sprint(logs) {
		t.Errorf("plugin logs grew in a run with nothing to do: %v, then %v", logs, after)
	}

	// A change of the plugin's code is refused, naming the run file's line and the fix.
	src, _ := os.ReadFile(filepath.Join(l.dir, "speaker", "main.go"))
	changed := strings.Replace(string(src), "I heard you.", "I hear you.", 1)
	if changed == string(src) {
		t.Fatal("the speaker's source has no answer to change")
	}
	oldHash := clitest.Sha256File(t, filepath.Join(l.dir, "bin", "speaker"))
	clitest.WriteFile(t, filepath.Join(l.dir, "speaker", "main.go"), changed)
	l.build()
	newHash := clitest.Sha256File(t, filepath.Join(l.dir, "bin", "speaker"))
	code, out, errs = clirun.Run(t, l.dir, "run", runFile)
	if code != ExitDeterministic {
		t.Fatalf("run with a changed plugin: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "refusal", errs, runFile+`:2: plugin "speaker": its files hash to `+newHash+", but "+filepath.Join(l.dir, "run.lock.hcl")+" pins "+oldHash,
		"re-pin it with `duplexmpe lock --upgrade "+runFile+"`")
	clitest.WriteFile(t, filepath.Join(l.dir, "speaker", "main.go"), string(src))
	l.build()
	if got := clitest.Sha256File(t, filepath.Join(l.dir, "bin", "speaker")); got != oldHash {
		t.Fatalf("rebuilding the original source gave %s, not %s", got, oldHash)
	}

	// A model added to the finished run (and pinned: plain lock keeps the other pins)
	// plays only its own conversations.
	runFile = l.runFile("plugin.speaker, plugin.talker, plugin.silent")
	if code, out, errs := clirun.Run(t, l.dir, "lock", runFile); code != ExitOK || !strings.Contains(out, `plugin "speaker": 0.2.0 `+oldHash+" (unchanged)") {
		t.Fatalf("lock with a new model: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = clirun.Run(t, l.dir, "run", runFile)
	if code != ExitOK {
		t.Fatalf("run with a new model: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "run with a new model", out,
		"plan speaker: 2 conversations: 2 reused", "plan talker: 2 conversations: 2 reused",
		"plan silent: 2 conversations: 0 reused, 2 to play (2 new)",
		"plugins started: silent, pocketsphinx, lexical",
		"model speaker: 2 conversations: 2 reused, 0 played",
		"model talker: 2 conversations: 2 reused, 0 played",
		"model silent: 2 conversations: 0 reused, 2 played",
		"scored 6 conversations (2 now, 4 reused)")

	// Changing one model invalidates only that model's items, and the run says which
	// field changed.
	cfg, _ := os.ReadFile(runFile)
	clitest.WriteFile(t, runFile, strings.Replace(string(cfg), `plugin "speaker" { source = "bin/speaker" }`, "plugin \"speaker\" {\n  source = \"bin/speaker\"\n  config {\n    pause_s = 2\n  }\n}", 1))
	code, out, errs = clirun.Run(t, l.dir, "run", runFile)
	if code != ExitOK {
		t.Fatalf("run with a changed model: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "run with a changed model", out,
		"plan speaker: 2 conversations: 0 reused, 2 to play (2 model.config.pause_s: 1 -> 2; model.identity.pause_s: 1 -> 2)",
		"plan talker: 2 conversations: 2 reused", "plan silent: 2 conversations: 2 reused",
		"2 items of earlier plans are kept",
		"plugins started: speaker, pocketsphinx, lexical",
		"model speaker: 2 conversations: 0 reused, 2 played", "model talker: 2 conversations: 2 reused, 0 played",
		"scored 6 conversations (2 now, 4 reused)")

	// Another judge block on the scored run, as a view of its own: every item is scored
	// again (another judge), and every transcript is reused. (It is the same judge
	// program, so its verdicts are reused too; plugins/openai swaps in a hosted one.)
	report, _ := os.ReadFile(filepath.Join(runDir, "report.md"))
	code, out, errs = clirun.Run(t, l.dir, "score", "runs/e", "--judge", "second", "--out", "views/second")
	if code != ExitOK {
		t.Fatalf("score --judge second: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "score --judge second", out, "scored 6 conversations (6 now, 0 reused)", "scorer calls: 0 transcribed (")
	if m := regexp.MustCompile(`0 transcribed \((\d+) transcripts reused\), 0 judged \((\d+) verdicts reused\)`).FindStringSubmatch(out); m == nil || m[1] == "0" || m[2] == "0" {
		t.Errorf("no transcript or verdict was reused:\n%s", out)
	}
	if after, _ := os.ReadFile(filepath.Join(runDir, "report.md")); string(after) != string(report) {
		t.Error("score --out changed the run's own report")
	}
	for _, f := range []string{"report.md", "summary.json", "scored.jsonl", "view.json"} {
		if _, err := os.Stat(filepath.Join(l.dir, "views", "second", f)); err != nil {
			t.Errorf("the view has no %s: %v", f, err)
		}
	}
	if ents, _ := filepath.Glob(filepath.Join(l.dir, "views", "second", "*", "*.wav")); len(ents) > 0 {
		t.Errorf("the view holds audio: %v", ents)
	}

	code, out, errs = clirun.Run(t, l.dir, "compare", "runs/e", "views/second")
	if code != ExitOK {
		t.Fatalf("compare: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "compare", out, "A: runs/e (judge lexical)", "B: views/second (judge second)")
	for _, m := range []string{"speaker", "silent", "talker"} {
		if !regexp.MustCompile(m + `\s+explicit\s+accuracy\s+1\s+0\s+0\s`).MatchString(out) {
			t.Errorf("compare does not pair %s's one explicit item, lacking none:\n%s", m, out)
		}
	}
}

// Every plugin a run needs is started and configured before the first conversation
// plays: a typo in the judge's config fails the run at once, with nothing played.
func TestRunConfiguresTheJudgeBeforePlaying(t *testing.T) {
	l := &lab{t: t, dir: t.TempDir()}
	copyFile(t, "../../examples/plugin-go/main.go", filepath.Join(l.dir, "speaker", "main.go"))
	copyFile(t, buildPlugin(t, "examples/plugin-go"), filepath.Join(l.dir, "bin", "speaker"))
	runFile := l.runFile("plugin.speaker, plugin.silent")
	src, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	typo := regexp.MustCompile(`plugin "lexical" \{ source = ("[^"]*") \}`).ReplaceAllString(string(src), "plugin \"lexical\" {\n  source = $1\n  config {\n    strictnes = \"high\"\n  }\n}")
	if typo == string(src) {
		t.Fatal("no lexical plugin block to change")
	}
	clitest.WriteFile(t, runFile, typo)
	dir := l.dir
	code, out, errs := clirun.Run(t, dir, "run", runFile)
	if code != ExitDeterministic || !strings.Contains(errs, "strictnes") {
		t.Fatalf("run with a typo in the judge's config: exit %d\n%s\n%s", code, out, errs)
	}
	if items, _ := os.ReadDir(filepath.Join(dir, "runs", "e", "items")); len(items) > 0 {
		t.Errorf("%d conversations played before the judge's config was checked", len(items))
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	clitest.WriteFile(t, to, string(b))
	if err := os.Chmod(to, 0o755); err != nil {
		t.Fatal(err)
	}
}

// A conversation of the plan that the store lacks (never played, or on a shard not
// merged yet) is never dropped silently from the denominators: score names it, counts
// it in the report, and exits 1; the next run plays it alone.
func TestScoreCountsMissingConversations(t *testing.T) {
	l := &lab{t: t, dir: t.TempDir()}
	copyFile(t, buildPlugin(t, "examples/plugin-go"), filepath.Join(l.dir, "bin", "speaker"))
	runFile := l.runFile("plugin.speaker, plugin.silent")
	if code, out, errs := clirun.Run(t, l.dir, "run", "--no-score", runFile); code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	items, _ := filepath.Glob(filepath.Join(l.dir, "runs", "e", "items", "*", "item.json"))
	if len(items) != 4 {
		t.Fatalf("%d items played, want 4", len(items))
	}
	raw, _ := os.ReadFile(items[0])
	m := regexp.MustCompile(`"model": "(\w+)",\s*"scenario_id": "([\w-]+)"`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatalf("item.json without model and scenario:\n%s", raw)
	}
	if err := os.RemoveAll(filepath.Dir(items[0])); err != nil {
		t.Fatal(err)
	}
	code, out, errs := clirun.Run(t, l.dir, "score", "runs/e")
	if code != ExitFailed {
		t.Fatalf("score with a conversation missing: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "score", out, "scored 3 conversations", "1 conversations of the plan are missing from the run store", m[1]+"/"+m[2], "(1 unscored)")
	clitest.InOrder(t, "score's error", errs, "1 conversations of the run's plan are not in", m[1]+"/"+m[2], "duplexmpe run "+runFile)
	if rep, _ := os.ReadFile(filepath.Join(l.dir, "runs", "e", "report.md")); !strings.Contains(string(rep), "missing conversation | "+m[1]+"/"+m[2]) {
		t.Errorf("the report does not name the missing conversation:\n%s", rep)
	}
	code, out, errs = clirun.Run(t, l.dir, "run", runFile)
	if code != ExitOK {
		t.Fatalf("run again: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "run again", out, "plan "+m[1]+": 2 conversations: 1 reused, 1 to play (1 new)", "scored 4 conversations (1 now, 3 reused)")
}
