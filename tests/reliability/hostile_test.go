package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostileRuns replays the findings of issue 24's fault campaign through the CLI, as
// a user meets them: a model flooding its text channel, a plugin whose child calls
// setsid, a model that crashes in every conversation, two writers on one run directory
// and a stale lock, a run into a folder that is not a run directory, a symbolic link
// out of a run directory, a missing run directory, and viewer debris. Each case says
// what was broken before.
func TestHostileRuns(t *testing.T) {
	dir := t.TempDir()
	scen := scenarios(t, dir, 4) // two pairs: four conversations
	ids := scenarioIDs(t, scen)
	faulty := faultyBin(t)
	model := func(name, config, extra string) string {
		return fmt.Sprintf("plugin %q {\n  source = %q\n  frame_timeout = \"3s\"\n  %s\n  config {\n    %s\n  }\n}\n", name, faulty, extra, config)
	}
	evaluation := func(name, models string) string {
		return fmt.Sprintf("evaluation %q {\n  dataset = dataset.d\n  models = [%s]\n  asr = plugin.pocketsphinx\n  judge = plugin.lexical\n  concurrency = 2\n  out = \"runs/%s\"\n}\n", name, models, name)
	}
	pidFile := filepath.Join(dir, "setsid.pid")
	var b strings.Builder
	fmt.Fprintf(&b, "plugin \"flite\" { source = %q }\nplugin \"pocketsphinx\" { source = %q }\nplugin \"lexical\" { source = %q }\n",
		bin(t, "plugins/flite"), bin(t, "plugins/pocketsphinx"), bin(t, "plugins/lexical-judge"))
	b.WriteString(model("text", fmt.Sprintf("fault = \"text\"\n    at_frame = 3\n    conversations = [%q]", ids[0]), ""))
	b.WriteString(model("setsid", fmt.Sprintf("fault = \"setsid\"\n    pid_file = %q", pidFile), ""))
	b.WriteString(model("crashing", "fault = \"crash\"", ""))
	b.WriteString(model("stuck", "fault = \"hang_start\"", `conversation_start_timeout = "10m"`))
	b.WriteString(model("silent", "fault = \"none\"", ""))
	fmt.Fprintf(&b, "dataset \"d\" {\n  scenarios = %q\n  tts = plugin.flite\n  voices = { A = \"kal16\", B = \"awb\", C = \"rms\", D = \"slt\" }\n  out = \"build/d\"\n}\n", scen)
	for _, e := range [][2]string{{"text", "plugin.text"}, {"setsid", "plugin.setsid"}, {"crashing", "plugin.crashing"},
		{"lock", "plugin.stuck"}, {"foreign", "plugin.silent"}} {
		b.WriteString(evaluation(e[0], e[1]))
	}
	runFile := filepath.Join(dir, "run.hcl")
	if err := os.WriteFile(runFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _, _ := duplexmpe(t, dir, "build", runFile); code != 0 {
		t.Fatalf("build: exit %d\n%s", code, out)
	}
	figures := map[string]any{}
	checks, caught := 0, 0
	check := func(what string, ok bool, format string, args ...any) {
		checks++
		if ok {
			caught++
			return
		}
		t.Errorf("%s: "+format, append([]any{what}, args...)...)
	}
	itemFile := func(run, scenario, name string) (string, []byte) {
		ents, _ := os.ReadDir(filepath.Join(dir, "runs", run, "items"))
		for _, e := range ents {
			d := filepath.Join(dir, "runs", run, "items", e.Name())
			raw, _ := os.ReadFile(filepath.Join(d, "item.json"))
			var m struct {
				Scenario string `json:"scenario_id"`
			}
			if json.Unmarshal(raw, &m) == nil && m.Scenario == scenario {
				got, _ := os.ReadFile(filepath.Join(d, name))
				return d, got
			}
		}
		return "", nil
	}

	// 1. Text flood (before: 2 GB of host memory, a 210 MB text.json, exit 0).
	code, out, _, inv := duplexmpe(t, dir, "run", "--no-score", "--evaluation", "text", runFile)
	_, failure := itemFile("text", ids[0], "failure.json")
	_, text := itemFile("text", ids[0], "text.json")
	_, second := itemFile("text", ids[1], "done")
	check("text flood", code == 1 && strings.Contains(string(failure), `plugin \"text\"`) && strings.Contains(string(failure), "bytes of text in one frame") && second != nil,
		"exit %d, failure %s, second done %v\n%s", code, failure, second != nil, out)
	figures["text_json_bytes"] = len(text)
	check("text flood orphans", len(inv.orphans(5*time.Second)) == 0, "processes outlived the run")

	// 2. A plugin's setsid child (before: the host hung 240-283 s after scoring, or the
	// child was orphaned). Scored too, so that its report and viewer exist for 8.
	code, out, secs, inv := duplexmpe(t, dir, "run", "--evaluation", "setsid", runFile)
	orphans := inv.orphans(5 * time.Second)
	check("setsid child", code == 0 && len(orphans) == 0, "exit %d, orphans %v\n%s", code, orphans, out)
	figures["setsid_run_s"] = round(secs)
	if raw, err := os.ReadFile(pidFile); err == nil {
		var pid int
		fmt.Sscan(string(raw), &pid)
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		i := strings.LastIndexByte(string(stat), ')')
		gone := len(stat) == 0 || (i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X'))
		check("setsid child gone", pid > 0 && gone, "child %d still runs", pid)
	}

	// 3. A model that crashes in every conversation (before: restarted for each).
	code, out, _, _ = duplexmpe(t, dir, "run", "--no-score", "--evaluation", "crashing", runFile)
	_, lastFailure := itemFile("crashing", ids[3], "failure.json")
	check("same failure 3 times", code == 1 && strings.Contains(out, "model crashing: 4 conversations: 0 reused, 0 played, 4 failed, 2 plugin restarts") &&
		strings.Contains(string(lastFailure), "failed 3 conversations in a row"), "exit %d, last failure %s\n%s", code, lastFailure, out)

	// 4. Two writers on one run directory (before: both wrote, one deleted the other's
	// temporary file; the directory mixed two runs), then a stale lock.
	first := start(t, dir, "run", "--no-score", "--evaluation", "lock", runFile)
	lockFile := filepath.Join(dir, "runs", "lock", ".duplexmpe-run.lock")
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		raw, _ := os.ReadFile(lockFile)
		_, err := os.Stat(filepath.Join(dir, "runs", "lock", "manifest.json"))
		if len(raw) > 0 && err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first run did not lock its directory:\n%s", first.out.String())
		}
	}
	code, out, secs, _ = duplexmpe(t, dir, "run", "--no-score", "--evaluation", "lock", runFile)
	check("second writer", code == 1 && strings.Contains(out, "is in use by pid "+fmt.Sprint(first.cmd.Process.Pid)), "exit %d\n%s", code, out)
	figures["second_writer_s"] = round(secs)
	_ = first.cmd.Process.Signal(syscall.SIGKILL)
	first.wait()
	first.orphans(5 * time.Second)
	code, out, _, _ = duplexmpe(t, dir, "score", "runs/lock")
	check("stale lock taken over", strings.Contains(out, "taken over") && !strings.Contains(out, "in use by"), "exit %d\n%s", code, out)

	// 5. A run into a folder that is not a run directory (before: .notes.tmp and
	// .config.tmpl deleted, exit 0).
	foreign := filepath.Join(dir, "runs", "foreign")
	os.MkdirAll(foreign, 0o755)
	for _, n := range []string{".notes.tmp", ".config.tmpl"} {
		os.WriteFile(filepath.Join(foreign, n), []byte("mine"), 0o644)
	}
	code, out, _, _ = duplexmpe(t, dir, "run", "--evaluation", "foreign", runFile)
	ents, _ := os.ReadDir(foreign)
	check("foreign folder", code == 3 && len(ents) == 2 && strings.Contains(out, "--into-existing"), "exit %d, %d entries\n%s", code, len(ents), out)

	// 7. score and report on a missing directory (before: exit 1).
	for _, cmd := range []string{"score", "report"} {
		code, out, _, _ = duplexmpe(t, dir, cmd, "runs/nope")
		check(cmd+" missing", code == 3, "exit %d\n%s", code, out)
	}

	// 8. Viewer debris of a killed report (before: never removed).
	viewer := filepath.Join(dir, "runs", "setsid", "viewer")
	debris := []string{filepath.Join(viewer, ".duplexmpe.x.wav.123.tmp"), filepath.Join(viewer, ".x.wav.456.tmp")}
	for _, d := range debris {
		os.MkdirAll(filepath.Dir(d), 0o755)
		os.WriteFile(d, []byte("partial"), 0o644)
	}
	code, out, _, _ = duplexmpe(t, dir, "report", "runs/setsid")
	left := 0
	for _, d := range debris {
		if _, err := os.Stat(d); err == nil {
			left++
		}
	}
	check("viewer debris", code == 0 && left == 0, "exit %d, %d temporary files left\n%s", code, left, out)

	// 9. A symbolic link out of a run directory (before: 121 MB written outside through
	// viewer/, an outside file named like an item deleted, cache/ and logs/ appended to).
	outside := filepath.Join(dir, "outside")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o644)
	os.RemoveAll(viewer)
	os.Symlink(outside, viewer)
	code, out, _, _ = duplexmpe(t, dir, "report", "runs/setsid")
	ents, _ = os.ReadDir(outside)
	check("symlink", code == 3 && len(ents) == 1 && strings.Contains(out, "symbolic link"), "exit %d, %d entries outside\n%s", code, len(ents), out)

	figures["checks"], figures["caught"] = checks, caught
	report(t, figures)
}
