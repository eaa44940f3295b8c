// Package repeats tests repeated runs (issue 11, docs/protocol.md section 6.5) through
// the command line with real plugin processes. It is a package of its own so that its
// end-to-end runs have their own go test time limit.
package repeats

import (
	"encoding/json"
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

func TestMain(m *testing.M) {
	code := m.Run()
	pluginhost.KillAll()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

// runFile writes dir/run.hcl: random-talk (whose bursts are drawn from the
// conversation's seed) and silent play the first shipped pair, spoken by flite and scored
// by pocketsphinx and the lexical judge; repeats = n (n = 0 leaves the attribute out).
func runFile(t *testing.T, dir string, n int) string {
	t.Helper()
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("flite is not installed (scripts/install-apt.sh)")
	}
	bin := func(pkg string) string { return plugintest.BuildGo(t, filepath.Join("../..", pkg)) }
	if _, err := os.Stat(filepath.Join(dir, "scenarios")); err != nil {
		clitest.FirstPair(t, dir)
	}
	repeats := ""
	if n > 0 {
		repeats = fmt.Sprintf("\n  repeats = %d", n)
	}
	path := filepath.Join(dir, "run.hcl")
	clitest.WriteFile(t, path, fmt.Sprintf(`plugin "flite" { source = %q }
plugin "random" { source = %q }
plugin "silent" { source = %q }
plugin "pocketsphinx" {
  source = %q
  config {
    fast = true
  }
}
plugin "lexical" { source = %q }

dataset "one" {
  scenarios = "scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out       = "build/one"
}

evaluation "e" {
  dataset = dataset.one
  models  = [plugin.random, plugin.silent]
  asr     = plugin.pocketsphinx
  judge   = plugin.lexical
  out     = "runs/e"%s
}
`, bin("plugins/flite"), bin("plugins/random-talk"), bin("plugins/silent"), bin("plugins/pocketsphinx"), bin("plugins/lexical-judge"), repeats))
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

// Repeated runs through the command line with real plugin processes: a finished run is
// reused whole by repeats = 1 (nothing plays, no plugin starts); raising repeats to 3
// plays only the two new repeats, each with its own seed (random-talk speaks otherwise
// in them); the report and the summary show the run-to-run agreement and spread.
func TestRepeatsThroughTheCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real plugins end to end")
	}
	dir := t.TempDir()
	runDir := filepath.Join(dir, "runs", "e")

	path := runFile(t, dir, 0)
	code, out, errs := clirun.Run(t, dir, "run", path)
	if code != cli.ExitOK {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "first run", out,
		"plan random: 2 conversations: 0 reused, 2 to play (2 new)",
		"plan silent: 2 conversations: 0 reused, 2 to play (2 new)",
		"scored 4 conversations (4 now, 0 reused)")
	if strings.Contains(out, "repeats") {
		t.Errorf("a run without repeats talks of repeats:\n%s", out)
	}
	firstIDs := itemIDs(t, runDir)
	report, _ := os.ReadFile(filepath.Join(runDir, "report.md"))
	if strings.Contains(string(report), "Run-to-run") {
		t.Error("the report of a single play has a repeats section")
	}

	// repeats = 1 is the same run: everything reused, no plugin started.
	path = runFile(t, dir, 1)
	logs := logSizes(t, runDir)
	code, out, errs = clirun.Run(t, dir, "run", path)
	if code != cli.ExitOK {
		t.Fatalf("run with repeats = 1: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "run with repeats = 1", out,
		"plan random: 2 conversations: 2 reused", "plan silent: 2 conversations: 2 reused",
		"plugins started: none",
		"model random: 2 conversations: 2 reused, 0 played", "model silent: 2 conversations: 2 reused, 0 played",
		"scored 4 conversations (0 now, 4 reused)")
	if after := logSizes(t, runDir); fmt.Sprint(after) != fmt.Sprint(logs) {
		t.Errorf("plugin logs grew with repeats = 1: %v, then %v", logs, after)
	}

	// repeats = 3: the first repeat is reused, the two new ones play.
	path = runFile(t, dir, 3)
	code, out, errs = clirun.Run(t, dir, "run", path)
	if code != cli.ExitOK {
		t.Fatalf("run with repeats = 3: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "run with repeats = 3", out,
		"repeats: 3: every conversation is played 3 times",
		"plan random: 6 conversations: 2 reused, 4 to play (4 new)",
		"plan silent: 6 conversations: 2 reused, 4 to play (4 new)",
		"model random: 6 conversations: 2 reused, 4 played",
		"model silent: 6 conversations: 2 reused, 4 played",
		"scored 12 conversations (8 now, 4 reused)",
		"Repeats: 3 plays of every conversation")
	ids := itemIDs(t, runDir)
	if len(ids) != 12 {
		t.Fatalf("%d items in the run directory, want 12", len(ids))
	}
	for id := range firstIDs {
		if ids[id] != 0 {
			t.Errorf("item %s of the first run is repeat %d now", id, ids[id])
		}
	}

	// Each repeat's seed reached random-talk: its speech differs between repeats of the
	// same conversation (the draws are seeded by the conversation's seed and id).
	episodes := map[string]map[int]string{} // scenario -> repeat -> episodes.json
	for id := range ids {
		var m struct {
			Model      string `json:"model"`
			ScenarioID string `json:"scenario_id"`
			Repeat     int    `json:"repeat"`
			Key        struct {
				Seed int64 `json:"seed"`
			} `json:"key"`
		}
		readJSON(t, filepath.Join(runDir, "items", id, "item.json"), &m)
		if m.Model != "random" {
			continue
		}
		eps, _ := os.ReadFile(filepath.Join(runDir, "items", id, "episodes.json"))
		if episodes[m.ScenarioID] == nil {
			episodes[m.ScenarioID] = map[int]string{}
		}
		episodes[m.ScenarioID][m.Repeat] = string(eps)
		if (m.Repeat == 0) != (m.Key.Seed == 1) {
			t.Errorf("%s repeat %d played with seed %d", m.ScenarioID, m.Repeat, m.Key.Seed)
		}
	}
	for sc, byRepeat := range episodes {
		if len(byRepeat) != 3 {
			t.Fatalf("random on %s: repeats %v", sc, byRepeat)
		}
		if byRepeat[0] == byRepeat[1] && byRepeat[1] == byRepeat[2] {
			t.Errorf("random-talk spoke alike in all three repeats of %s: the repeats' seeds did not reach it\n%s", sc, byRepeat[0])
		}
	}
	var man struct {
		Seeds []int64 `json:"seeds"`
	}
	readJSON(t, filepath.Join(runDir, "manifest.json"), &man)
	if len(man.Seeds) != 3 || man.Seeds[0] != 1 || man.Seeds[1] == man.Seeds[2] {
		t.Errorf("manifest seeds %v", man.Seeds)
	}

	// The summary: silent decides every event alike in every repeat (agreement 1, sd 0);
	// each entry pools its three plays.
	var sum struct {
		Repeats int `json:"repeats"`
		Entries []struct {
			Model         string `json:"model"`
			Condition     string `json:"condition"`
			Items         int    `json:"items"`
			Repeatability *struct {
				Repeats  int `json:"repeats"`
				Compared int `json:"compared"`
				Measures []struct {
					Measure   string  `json:"measure"`
					Decisions int     `json:"decisions"`
					Agreed    int     `json:"agreed"`
					PerRepeat []any   `json:"per_repeat"`
					SD        float64 `json:"sd"`
					Spread    bool    `json:"spread"`
				} `json:"measures"`
			} `json:"repeatability"`
		} `json:"entries"`
	}
	readJSON(t, filepath.Join(runDir, "summary.json"), &sum)
	if sum.Repeats != 3 || len(sum.Entries) != 4 {
		t.Fatalf("summary: repeats %d, %d entries", sum.Repeats, len(sum.Entries))
	}
	for _, e := range sum.Entries {
		r := e.Repeatability
		if e.Items != 3 || r == nil || r.Repeats != 3 || r.Compared != 1 || len(r.Measures) != 6 {
			t.Fatalf("%s %s: %d items, repeatability %+v", e.Model, e.Condition, e.Items, r)
		}
		if e.Model != "silent" {
			continue
		}
		for _, m := range r.Measures {
			if m.Agreed != m.Decisions || len(m.PerRepeat) != 3 || (m.Spread && m.SD != 0) {
				t.Errorf("silent %s %s: %d of %d agreed, sd %g", e.Condition, m.Measure, m.Agreed, m.Decisions, m.SD)
			}
		}
	}
	report, _ = os.ReadFile(filepath.Join(runDir, "report.md"))
	if i := strings.Index(string(report), "## Run-to-run"); i >= 0 {
		section, _, _ := strings.Cut(string(report[i:]), "\n## Explicit")
		t.Logf("the report's run-to-run section:\n%s", section)
	}
	clitest.InOrder(t, "report", string(report), "Repeats: every conversation was played 3 times",
		"Run-to-run agreement and spread (3 repeats)", "decisions agreed", "Explicit vs implicit", "once per repeat (3 repeats)")
	if !regexp.MustCompile(`\| silent \| [a-z]+ \| explicit \| 3 \(3 repeats\) \|`).Match(report) {
		t.Errorf("the main table does not count silent's three plays:\n%s", report)
	}
}

// itemIDs lists the run directory's items with their repeat.
func itemIDs(t *testing.T, runDir string) map[string]int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(runDir, "items"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range ents {
		var m struct {
			Repeat int `json:"repeat"`
		}
		readJSON(t, filepath.Join(runDir, "items", e.Name(), "item.json"), &m)
		out[e.Name()] = m.Repeat
	}
	return out
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
