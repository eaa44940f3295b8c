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
