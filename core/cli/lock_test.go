package cli

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/tools/clitest"
)

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func appendByte(t *testing.T, path string) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.Write([]byte{0}); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
}

// The whole pinning cycle: lock writes what the plugins resolved to, plugins accepts
// them while they match, refuses a changed binary or directory, and lock re-pins.
func TestLockCycle(t *testing.T) {
	bin := examplePlugin(t)
	dir := t.TempDir()
	// The run file lives in a subdirectory; its relative paths and its lock file are
	// relative to it, not to the working directory.
	runs := filepath.Join(dir, "runs")
	copyExecutable(t, bin, filepath.Join(runs, "bin", "beeper"))
	copyExecutable(t, bin, filepath.Join(runs, "pyish", "plugin"))
	clitest.WriteFile(t, filepath.Join(runs, "pyish", "model.txt"), "weights v1\n")
	clitest.WriteFile(t, filepath.Join(runs, "run.hcl"), `plugin "beeper" {
  source = "bin/beeper"
}

plugin "dirplug" {
  command = ["./plugin"]
  dir     = "pyish"
}
`)
	code, stdout, stderr := runInDir(t, dir, nil, "lock", "runs/run.hcl")
	if code != ExitOK {
		t.Fatalf("lock: exit %d\n%s\n%s", code, stdout, stderr)
	}
	sum := clitest.Sha256File(t, filepath.Join(runs, "bin", "beeper"))
	clitest.InOrder(t, "stdout", stdout, `plugin "beeper": 0.1.0 `+sum+" (pinned)", `plugin "dirplug": 0.1.0 h1:`, "wrote runs/run.lock.hcl (2 plugins)")

	lockPath := filepath.Join(runs, "run.lock.hcl")
	lock, err := pluginhost.ReadLock(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	beeper, _ := lock.Get("beeper")
	if !reflect.DeepEqual(beeper, pluginhost.LockedPlugin{Name: "beeper", Version: "0.1.0", Source: "bin/beeper", Hashes: []string{sum}}) {
		t.Errorf("locked beeper = %+v", beeper)
	}
	dirplug, _ := lock.Get("dirplug")
	wantHash, wantFiles, err := pluginhost.HashDirFiles(filepath.Join(runs, "pyish"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dirplug, pluginhost.LockedPlugin{Name: "dirplug", Version: "0.1.0", Command: []string{"./plugin"}, Hashes: []string{wantHash}, Files: wantFiles}) {
		t.Errorf("locked dirplug = %+v", dirplug)
	}
	if b, _ := os.ReadFile(lockPath); strings.Contains(string(b), dir) {
		t.Errorf("the lock file holds absolute paths:\n%s", b)
	}

	// Everything matches.
	if code, stdout, stderr := runInDir(t, dir, nil, "plugins", "runs/run.hcl"); code != ExitOK {
		t.Fatalf("plugins after lock: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// A changed binary and a changed plugin directory are refused, naming the plugin.
	appendByte(t, filepath.Join(runs, "bin", "beeper"))
	clitest.WriteFile(t, filepath.Join(runs, "pyish", "model.txt"), "weights v2\n")
	code, stdout, stderr = runInDir(t, dir, nil, "plugins", "runs/run.hcl")
	if code != ExitDeterministic { // the files must change back, or be re-pinned
		t.Fatalf("plugins after a change: exit %d\n%s", code, stderr)
	}
	if strings.Contains(stdout, "describes:") {
		t.Errorf("a plugin that does not match the lock file was started:\n%s", stdout)
	}
	runHCL := filepath.Join(runs, "run.hcl")
	newSum := clitest.Sha256File(t, filepath.Join(runs, "bin", "beeper"))
	clitest.InOrder(t, "stderr", stderr,
		"Error: Plugin does not match the lock file", "on runs/run.hcl line 1",
		runHCL+`:1: plugin "beeper": its files hash to `+newSum+", but "+lockPath+" pins "+sum,
		"re-pin it with `duplexmpe lock --upgrade "+runHCL+"`",
		"Error: Plugin does not match the lock file", "on runs/run.hcl line 5", `plugin "dirplug"`,
		"2 plugins failed: beeper, dirplug")

	// Plain lock never overwrites a pin, and does not start the changed plugins.
	before, _ := os.ReadFile(lockPath)
	code, stdout, stderr = runInDir(t, dir, nil, "lock", "runs/run.hcl")
	if code != ExitFailed {
		t.Fatalf("lock over changed pins: exit %d\n%s\n%s", code, stdout, stderr)
	}
	clitest.InOrder(t, "stderr", stderr, "Error: Pin differs", "on runs/run.hcl line 1", "its files hash to "+newSum,
		"never overwrites a pin", "duplexmpe lock --upgrade "+runHCL, "2 plugins failed: beeper, dirplug; runs/run.lock.hcl not written")
	if after, _ := os.ReadFile(lockPath); string(after) != string(before) {
		t.Errorf("plain lock changed the pins:\n%s", after)
	}

	// Re-pinning is deliberate: lock --upgrade accepts the change.
	code, stdout, stderr = runInDir(t, dir, nil, "lock", "--upgrade", "runs/run.hcl")
	if code != ExitOK {
		t.Fatalf("lock --upgrade: exit %d\n%s\n%s", code, stdout, stderr)
	}
	clitest.InOrder(t, "stdout", stdout, `plugin "beeper": 0.1.0 `+newSum+" (re-pinned, was 0.1.0 "+sum+")", `plugin "dirplug"`, "re-pinned", "wrote runs/run.lock.hcl")
	// Locking again changes nothing.
	if code, stdout, stderr := runInDir(t, dir, nil, "lock", "runs/run.hcl"); code != ExitOK || !strings.Contains(stdout, newSum+" (unchanged)") {
		t.Fatalf("lock after -upgrade: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runInDir(t, dir, nil, "plugins", "runs/run.hcl"); code != ExitOK {
		t.Fatalf("plugins after re-lock: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// A plugin added to the run file but not locked is refused.
	clitest.WriteFile(t, filepath.Join(runs, "run.hcl"), `plugin "beeper" {
  source = "bin/beeper"
}

plugin "new" {
  source = "bin/beeper"
}
`)
	code, _, stderr = runInDir(t, dir, nil, "plugins", "runs/run.hcl")
	if code != ExitDeterministic {
		t.Fatalf("unlocked plugin: exit %d\n%s", code, stderr)
	}
	clitest.InOrder(t, "stderr", stderr, "on runs/run.hcl line 5", `plugin "new" is not in`, "pin it with `duplexmpe lock "+runHCL+"`", "1 plugin failed: new")

	// A failing plugin leaves the lock file as it was.
	before, _ = os.ReadFile(lockPath)
	broken := filepath.Join(runs, "bin", "broken")
	clitest.WriteFile(t, broken, "#!/bin/sh\nexit 3\n")
	if err := os.Chmod(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	clitest.WriteFile(t, filepath.Join(runs, "run.hcl"), `plugin "beeper" {
  source = "bin/beeper"
}

plugin "broken" {
  source = "bin/broken"
}
`)
	code, stdout, stderr = runInDir(t, dir, nil, "lock", "runs/run.hcl")
	if code != ExitFailed {
		t.Fatalf("lock with a broken plugin: exit %d\n%s", code, stdout)
	}
	clitest.InOrder(t, "stderr", stderr, "Error: Plugin did not start", "on runs/run.hcl line 5", "1 plugin failed: broken; runs/run.lock.hcl not written")
	if after, _ := os.ReadFile(lockPath); string(after) != string(before) {
		t.Errorf("lock file changed after a failed lock:\n%s", after)
	}

	// A lock file that is not valid is an error of its own.
	clitest.WriteFile(t, lockPath, "plugin \"beeper\" {\n  hashes = [\"md5:1\"]\n  source = \"bin/beeper\"\n}\n")
	clitest.WriteFile(t, filepath.Join(runs, "run.hcl"), "plugin \"beeper\" {\n  source = \"bin/beeper\"\n}\n")
	code, _, stderr = runInDir(t, dir, nil, "plugins", "runs/run.hcl")
	if code != ExitDeterministic || !strings.Contains(stderr, "Error: Bad lock file") {
		t.Fatalf("bad lock file: exit %d\n%s", code, stderr)
	}
}

// Each run file keeps its own pins: locking a second run file in the same directory
// leaves the first one's lock file alone, and the old per-directory lock file is read,
// with a warning that says how to migrate, until the run file is locked again.
func TestLockPerRunFile(t *testing.T) {
	bin := examplePlugin(t)
	dir := t.TempDir()
	copyExecutable(t, bin, filepath.Join(dir, "bin", "a"))
	copyExecutable(t, bin, filepath.Join(dir, "bin", "b"))
	appendByte(t, filepath.Join(dir, "bin", "b")) // another hash
	clitest.WriteFile(t, filepath.Join(dir, "first.hcl"), "plugin \"m\" {\n  source = \"bin/a\"\n}\n")
	clitest.WriteFile(t, filepath.Join(dir, "second.hcl"), "plugin \"m\" {\n  source = \"bin/b\"\n}\n")
	if code, stdout, stderr := runInDir(t, dir, nil, "lock", "first.hcl"); code != ExitOK || !strings.Contains(stdout, "wrote first.lock.hcl (1 plugin)") {
		t.Fatalf("lock first: exit %d\n%s\n%s", code, stdout, stderr)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "first.lock.hcl"))
	if code, stdout, stderr := runInDir(t, dir, nil, "lock", "second.hcl"); code != ExitOK || !strings.Contains(stdout, "wrote second.lock.hcl (1 plugin)") {
		t.Fatalf("lock second: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "first.lock.hcl")); string(after) != string(first) {
		t.Errorf("locking second.hcl changed first.lock.hcl:\n%s\nthen\n%s", first, after)
	}
	for _, f := range []string{"first.hcl", "second.hcl"} {
		if code, stdout, stderr := runInDir(t, dir, nil, "plugins", f); code != ExitOK {
			t.Errorf("plugins %s: exit %d\n%s\n%s", f, code, stdout, stderr)
		}
	}

	// The old lock file, shared by the directory, still counts for a run file without
	// its own, with a warning; locking the run file moves its pins to its own file.
	if err := os.Rename(filepath.Join(dir, "first.lock.hcl"), filepath.Join(dir, ".duplexmpe.lock.hcl")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runInDir(t, dir, nil, "plugins", "first.hcl")
	if code != ExitOK {
		t.Fatalf("plugins with the old lock file: exit %d\n%s\n%s", code, stdout, stderr)
	}
	clitest.InOrder(t, "stderr", stderr, "Warning: Old lock file", ".duplexmpe.lock.hcl", "duplexmpe lock "+filepath.Join(dir, "first.hcl"), "first.lock.hcl")
	appendByte(t, filepath.Join(dir, "bin", "a"))
	if code, _, stderr := runInDir(t, dir, nil, "plugins", "first.hcl"); code != ExitDeterministic || !strings.Contains(stderr, filepath.Join(dir, ".duplexmpe.lock.hcl")+" pins") {
		t.Errorf("a plugin that does not match the old lock file: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr = runInDir(t, dir, nil, "lock", "--upgrade", "first.hcl")
	if code != ExitOK {
		t.Fatalf("lock --upgrade from the old lock file: exit %d\n%s\n%s", code, stdout, stderr)
	}
	clitest.InOrder(t, "stdout", stdout, "re-pinned", "wrote first.lock.hcl", "taken from .duplexmpe.lock.hcl")
	if code, _, stderr := runInDir(t, dir, nil, "plugins", "first.hcl"); code != ExitOK || strings.Contains(stderr, "Old lock file") {
		t.Errorf("after the migration: exit %d\n%s", code, stderr)
	}
}

// Pins in the run file are checked by lock too: a plugin that does not match its
// checksum is not locked.
func TestLockChecksPins(t *testing.T) {
	bin := examplePlugin(t)
	dir := t.TempDir()
	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), `plugin "beeper" {
  source   = "`+bin+`"
  checksum = "sha256:`+strings.Repeat("1", 64)+`"
}
`)
	code, _, stderr := runInDir(t, dir, nil, "lock", "run.hcl")
	if code != ExitFailed {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	clitest.InOrder(t, "stderr", stderr, "Error: Plugin did not start", "on run.hcl line 3", `plugin "beeper" refused`)
	if _, err := os.Stat(filepath.Join(dir, "run.lock.hcl")); err == nil {
		t.Error("a lock file was written")
	}
	if code, _, _ := runInDir(t, dir, nil, "lock"); code != ExitUsage {
		t.Errorf("lock without a file: exit %d, want %d", code, ExitUsage)
	}
}

// examples/runs/pinned.hcl works as shipped: every pin holds, and its pinned Python
// plugin holds a conversation through the real plugin host. It needs `make build` (the
// plugins in bin/plugins) and `make deps-py` (.venv), which make test runs first.
func TestPinnedExample(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, need := range []string{"bin/plugins/plugin-go", "bin/plugins/flite", "bin/plugins/pocketsphinx", "bin/plugins/lexical-judge", ".venv/bin/python"} {
		if _, err := os.Stat(filepath.Join(root, need)); err != nil {
			t.Skipf("%s is missing (make build, make deps-py): %v", need, err)
		}
	}
	code, stdout, stderr := runInDir(t, root, nil, "plugins", "examples/runs/pinned.hcl")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	clitest.InOrder(t, "stdout", stdout, `plugin "quiet": ok`, "describes: quiet 0.1.0, protocol 1, kinds model", "5 plugins: all checks passed")

	f, err := loadRunFile(&State{Getwd: func() (string, error) { return root, nil }, Stderr: &strings.Builder{}}, "examples/runs/pinned.hcl", nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := pluginhost.Start(context.Background(), pluginstart.HostSpec(f.Plugin("quiet")), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Kill()
	model, err := client.Model()
	if err != nil {
		t.Fatal(err)
	}
	conv, err := model.Start(context.Background(), sdk.ConversationStart{ID: "c1", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := conv.Format(); got != (sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1280}) {
		t.Errorf("format = %+v", got)
	}
	frame := make([]float32, 1280)
	for i := range frame {
		frame[i] = 0.5 // loud: quiet stays silent whatever it hears
	}
	for i := 0; i < 3; i++ {
		out, err := conv.Step(context.Background(), frame)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Samples) != 0 || out.Text != "" || out.Flush {
			t.Errorf("frame %d: quiet answered %+v", i, out)
		}
	}
	if err := conv.Close(); err != nil {
		t.Error(err)
	}
}

// Issue 23: a plugin whose dir holds the run file, its lock file and the run's output
// (the run directory, the dataset's build) was hashed with them, so every run changed
// its identity: the lock file was stale as soon as it was written, each run replayed
// the whole model, and `lock --upgrade` never converged. Those files are not the
// plugin's: its hash leaves them out.
func TestPluginDirHoldingTheRunKeepsItsIdentity(t *testing.T) {
	dir, runFile := runFixture(t, "3s")
	copyExecutable(t, buildPlugin(t, "plugins/silent"), filepath.Join(dir, "silent-plugin"))
	src, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, `plugin "silent"`) {
			lines[i] = `plugin "silent" {
  command = ["./silent-plugin"]
  dir     = "."
}`
		}
	}
	clitest.WriteFile(t, runFile, strings.Join(lines, "\n"))

	lockFile := filepath.Join(dir, "run.lock.hcl")
	var pins []byte
	for i := 1; i <= 4; i++ {
		if i == 4 {
			// Pinned now: the lock file written beside the run file holds at once.
			if code, out, errs := runCLI(t, dir, "lock", runFile); code != ExitOK {
				t.Fatalf("lock: exit %d\n%s\n%s", code, out, errs)
			}
			if pins, err = os.ReadFile(lockFile); err != nil {
				t.Fatal(err)
			}
		}
		code, out, errs := runCLI(t, dir, "run", "--no-score", runFile)
		if code != ExitOK {
			t.Fatalf("run %d: exit %d\n%s\n%s", i, code, out, errs)
		}
		if i == 1 {
			clitest.InOrder(t, "first run", out, "model silent: 2 conversations: 0 reused, 2 played")
			continue
		}
		clitest.InOrder(t, "a later run", out,
			"plan silent: 2 conversations: 2 reused\n", "plugins started: none",
			"model silent: 2 conversations: 2 reused, 0 played")
		if strings.Contains(out, "earlier plans") {
			t.Errorf("run %d left items of an earlier plan:\n%s", i, out)
		}
	}
	// The pins hold, and re-pinning finds nothing to change.
	code, out, errs := runCLI(t, dir, "lock", "--upgrade", runFile)
	if code != ExitOK || strings.Contains(out, "re-pinned") || !strings.Contains(out, `plugin "silent": 1.0.0 h1:`) {
		t.Fatalf("lock --upgrade after the runs: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "lock --upgrade", out, `plugin "silent"`, "(unchanged)")
	if after, _ := os.ReadFile(lockFile); string(after) != string(pins) {
		t.Errorf("lock --upgrade changed the pins:\n%s\nwas\n%s", after, pins)
	}

	// The plugin's own files still count: a change of its code is a change of it.
	appendByte(t, filepath.Join(dir, "silent-plugin"))
	code, _, errs = runCLI(t, dir, "run", "--no-score", runFile)
	if code != ExitDeterministic || !strings.Contains(errs, `plugin "silent"`) {
		t.Errorf("run after the plugin changed: exit %d, want %d naming the plugin\n%s", code, ExitDeterministic, errs)
	}
}
