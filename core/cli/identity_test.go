package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/internal/clitest"
)

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
		clitest.InOrder(t, fmt.Sprintf("run %d", i), out,
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

// Issue 23: a second run file with the same evaluation name and out took the run
// directory over (exit 0), reported its own models only, and offered a prune that
// would delete the first one's results. A run directory belongs to the run file that
// made it: another is refused (exit 3) and nothing there changes; the same run file,
// edited, resumes; moved or renamed, it takes the directory back with --adopt.
func TestRunDirectoryBelongsToItsRunFile(t *testing.T) {
	dir, runFile := runFixture(t, "3s")
	if code, out, errs := runCLI(t, dir, "run", "--no-score", runFile); code != ExitOK {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	src, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "runs", "e")
	snapshot := func() string {
		var b strings.Builder
		for _, f := range []string{"manifest.json", "run.json"} {
			data, err := os.ReadFile(filepath.Join(runDir, f))
			if err != nil {
				t.Fatal(err)
			}
			b.Write(data)
		}
		return b.String()
	}
	before := snapshot()

	other := filepath.Join(dir, "other.hcl")
	clitest.WriteFile(t, other, strings.Replace(string(src), "models  = [plugin.silent, plugin.beeper]", "models  = [plugin.beeper]", 1))
	code, out, errs := runCLI(t, dir, "run", "--no-score", other)
	if code != ExitDeterministic {
		t.Fatalf("another run file into the run directory: exit %d, want %d\n%s\n%s", code, ExitDeterministic, out, errs)
	}
	clitest.InOrder(t, "the refusal", errs, runDir+" was made by the run file "+runFile+", not by "+other,
		"an out of its own", "--adopt")
	if strings.Contains(out, "model beeper:") || snapshot() != before {
		t.Errorf("the refused run played or rewrote the run directory:\n%s", out)
	}

	// The same run file, edited (a model added), resumes: only the new model plays.
	edited := strings.Replace(string(src), "models  = [plugin.silent, plugin.beeper]", "models  = [plugin.silent, plugin.beeper, plugin.quiet]", 1)
	edited = strings.Replace(edited, `plugin "beeper"`, fmt.Sprintf("plugin \"quiet\" { source = %q }\nplugin \"beeper\"", buildPlugin(t, "plugins/silent")), 1)
	clitest.WriteFile(t, runFile, edited)
	code, out, errs = runCLI(t, dir, "run", "--no-score", runFile)
	if code != ExitOK {
		t.Fatalf("the edited run file: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "the edited run file", out, "plan silent: 2 conversations: 2 reused", "plan quiet: 2 conversations: 0 reused, 2 to play")

	// Renamed, it is refused until it adopts the directory; then it owns it.
	moved := filepath.Join(dir, "renamed.hcl")
	if err := os.Rename(runFile, moved); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, dir, "run", "--no-score", moved)
	if code != ExitDeterministic || !strings.Contains(errs, runFile+", which is no longer there, not by "+moved) {
		t.Fatalf("the renamed run file: exit %d, want %d saying the first is gone\n%s", code, ExitDeterministic, errs)
	}
	for i, args := range [][]string{{"--adopt", moved}, {moved}} {
		code, out, errs = runCLI(t, dir, append([]string{"run", "--no-score"}, args...)...)
		if code != ExitOK {
			t.Fatalf("run %q: exit %d\n%s\n%s", args, code, out, errs)
		}
		clitest.InOrder(t, fmt.Sprint("run ", args), out, "plan silent: 2 conversations: 2 reused", "plan quiet: 2 conversations: 2 reused", "plugins started: none")
		if i == 0 && strings.Contains(out, "earlier plans") {
			t.Errorf("adopting left items of an earlier plan:\n%s", out)
		}
	}
	// A link to the run file is the run file.
	link := filepath.Join(dir, "link.hcl")
	if err := os.Symlink(moved, link); err != nil {
		t.Fatal(err)
	}
	if code, out, errs = runCLI(t, dir, "run", "--no-score", link); code != ExitOK {
		t.Fatalf("run through a link to the run file: exit %d\n%s\n%s", code, out, errs)
	}
}
