package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fault is one model block of the fault evaluation: what it does to the first
// conversation, and what the run must record.
type fault struct {
	name     string // the plugin block
	python   bool
	config   string // the config block's attributes
	env      map[string]string
	extra    string // more plugin block attributes
	failed   string // what the first conversation's failure says; "" when both finish
	restarts int
}

var faults = []fault{
	{name: "control", config: `fault = "none"`},
	{name: "go_panic", config: `fault = "panic"`, failed: "plugin panicked in /duplexmpe.v1.Model/Converse: faulty: panic at frame 3"},
	{name: "go_crash", config: `fault = "crash"`, failed: "the plugin process has exited", restarts: 1},
	{name: "go_hang", config: `fault = "hang"`, failed: "no answer within frame_timeout = 3s", restarts: 1},
	{name: "go_wedge", config: `fault = "wedge"`, failed: "no answer within frame_timeout = 3s", restarts: 1},
	{name: "go_hang_start", config: `fault = "hang_start"`, failed: "no answer within conversation_start_timeout = 3s", restarts: 1},
	{name: "go_hang_close", config: `fault = "hang_close"`, restarts: 1},
	{name: "go_garbage", config: `fault = "garbage"`, failed: "the model sent sample 3000 at index 0, far outside [-1, 1]"},
	{name: "go_nan", config: `fault = "nan"`, failed: "the model sent a non-finite sample (NaN) at index 7"},
	{name: "go_flood", config: `fault = "flood"`, extra: "log_limit_mb = 1"},
	{name: "go_slow_start", config: `fault = "none"`, env: map[string]string{"FAULTY_START_DELAY": "3"}, extra: `start_timeout = "2m"`},
	{name: "py_sys_exit", python: true, config: `fault = "sys_exit"`, failed: "the plugin's code raised sys.exit(3)"},
	{name: "py_raise", python: true, config: `fault = "raise"`, failed: "RuntimeError: faulty: raised at frame 3"},
	{name: "py_hang", python: true, config: `fault = "hang"`, failed: "no answer within frame_timeout = 3s", restarts: 1},
	{name: "py_flood", python: true, config: `fault = "flood"`, extra: "log_limit_mb = 1"},
	{name: "py_slow_start", python: true, config: `fault = "none"`, env: map[string]string{"FAULTY_START_DELAY": "3"}, extra: `start_timeout = "2m"`},
}

// TestFaultPlugins plays one evaluation whose models each misbehave in one way in their
// first conversation. Every fault must stay in that conversation: the second one
// finishes, the failure says what happened (and which setting to raise), a wedged or
// dead plugin is restarted, a flood stays within its log limit, and nothing outlives
// the run.
func TestFaultPlugins(t *testing.T) {
	dir := t.TempDir()
	scen := scenarios(t, dir, 2)
	ids := scenarioIDs(t, scen)
	var b strings.Builder
	var models []string
	fmt.Fprintf(&b, "plugin \"flite\" { source = %q }\nplugin \"pocketsphinx\" { source = %q }\nplugin \"lexical\" { source = %q }\n",
		bin(t, "plugins/flite"), bin(t, "plugins/pocketsphinx"), bin(t, "plugins/lexical-judge"))
	for _, f := range faults {
		fmt.Fprintf(&b, "plugin %q {\n", f.name)
		var env []string
		for k, v := range f.env {
			env = append(env, fmt.Sprintf("%s = %q", k, v))
		}
		if f.python {
			env = append(env, fmt.Sprintf("PYTHON = %q", venvPython(t)))
			fmt.Fprintf(&b, "  command = [%q]\n", filepath.Join(root, "tests", "reliability", "faulty_py", "run.sh"))
		} else {
			fmt.Fprintf(&b, "  source = %q\n", faultyBin(t))
		}
		if len(env) > 0 {
			fmt.Fprintf(&b, "  env = { %s }\n", strings.Join(env, ", "))
		}
		fmt.Fprintf(&b, "  frame_timeout = \"3s\"\n  conversation_start_timeout = \"3s\"\n  %s\n", f.extra)
		fmt.Fprintf(&b, "  config {\n    %s\n    conversations = [%q]\n  }\n}\n", f.config, ids[0])
		models = append(models, "plugin."+f.name)
	}
	fmt.Fprintf(&b, `
dataset "d" {
  scenarios = %q
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out       = "build/d"
}
evaluation "faults" {
  dataset     = dataset.d
  models      = [%s]
  asr         = plugin.pocketsphinx
  judge       = plugin.lexical
  concurrency = 4
  out         = "runs/faults"
}
`, scen, strings.Join(models, ", "))
	runFile := filepath.Join(dir, "run.hcl")
	if err := os.WriteFile(runFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _, _ := duplexmpe(t, dir, "build", runFile); code != 0 {
		t.Fatalf("build: exit %d\n%s", code, out)
	}
	// Conversations failed, so the run could not finish its work: exit 1, after playing
	// every other conversation.
	code, out, secs, inv := duplexmpe(t, dir, "run", "--no-score", runFile)
	if code != 1 || !strings.Contains(out, "conversations failed") {
		t.Fatalf("the fault run: exit %d, want 1 saying which conversations failed\n%s", code, out)
	}
	orphans := inv.orphans(5 * time.Second)
	if len(orphans) > 0 {
		t.Errorf("processes outlived the run: %v", orphans)
	}

	type item struct{ status, failure string }
	got := map[string]map[string]item{} // model -> scenario -> item
	runDir := filepath.Join(dir, "runs", "faults")
	ents, _ := os.ReadDir(filepath.Join(runDir, "items"))
	for _, e := range ents {
		d := filepath.Join(runDir, "items", e.Name())
		var meta struct {
			Model    string `json:"model"`
			Scenario string `json:"scenario_id"`
		}
		raw, _ := os.ReadFile(filepath.Join(d, "item.json"))
		json.Unmarshal(raw, &meta)
		it := item{status: "missing"}
		for _, m := range []string{"done", "failed"} {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				it.status = m
			}
		}
		var f struct{ Failure string }
		if raw, err := os.ReadFile(filepath.Join(d, "failure.json")); err == nil {
			json.Unmarshal(raw, &f)
		}
		it.failure = f.Failure
		if got[meta.Model] == nil {
			got[meta.Model] = map[string]item{}
		}
		got[meta.Model][meta.Scenario] = it
	}
	contained := 0
	for _, f := range faults {
		first, second := got[f.name][ids[0]], got[f.name][ids[1]]
		ok := second.status == "done"
		if !ok {
			t.Errorf("%s: the second conversation is %s (%s); the fault spread beyond its conversation", f.name, second.status, second.failure)
		}
		switch {
		case f.failed == "" && first.status != "done":
			ok = false
			t.Errorf("%s: the first conversation is %s: %s", f.name, first.status, first.failure)
		case f.failed != "" && (first.status != "failed" || !strings.Contains(first.failure, f.failed)):
			ok = false
			t.Errorf("%s: the first conversation is %s with %q; want failed saying %q", f.name, first.status, first.failure, f.failed)
		}
		line := fmt.Sprintf("model %s: 2 conversations:", f.name)
		if !strings.Contains(out, line) || !strings.Contains(out[strings.Index(out, line):], fmt.Sprintf("%d plugin restarts", f.restarts)) {
			ok = false
			t.Errorf("%s: want %d plugin restarts in:\n%s", f.name, f.restarts, out)
		}
		if strings.HasSuffix(f.name, "_flood") {
			for _, log := range []string{f.name + ".log", f.name + ".log.1"} {
				fi, err := os.Stat(filepath.Join(runDir, "logs", log))
				if err != nil || fi.Size() > 1<<20 {
					ok = false
					t.Errorf("%s: %s: %v, size %d; want it rotated within 1 MiB", f.name, log, err, sizeOf(fi))
				}
			}
			logText, _ := os.ReadFile(filepath.Join(runDir, "logs", f.name+".log"))
			if !strings.Contains(string(logText), "dropped") {
				ok = false
				t.Errorf("%s: the log has no note of what was dropped", f.name)
			}
		}
		if ok {
			contained++
		}
	}
	report(t, map[string]any{"faults": len(faults) - 1, "contained": contained - 1, "orphans": len(orphans), "run_s": round(secs)})
}

func sizeOf(fi os.FileInfo) int64 {
	if fi == nil {
		return 0
	}
	return fi.Size()
}
