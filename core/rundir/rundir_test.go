package rundir

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/fault"
)

// TestMain doubles as the second writer: with RUNDIR_HOLD set, the test binary takes
// the lock of that directory, says so, and waits to be killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("RUNDIR_HOLD"); dir != "" {
		l, err := Acquire(dir, Options{Command: "duplexmpe run held.hcl"})
		if err != nil {
			os.Stdout.WriteString("error: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("locked\n")
		defer l.Release()
		select {} // held until killed
	}
	os.Exit(m.Run())
}

// holdLock starts another process that holds dir's lock; it is SIGKILLed by kill (or
// at the end of the test).
func holdLock(t *testing.T, dir string) (pid int, kill func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RUNDIR_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the holder did not lock: %q", line)
	}
	killed := false
	kill = func() {
		if !killed {
			killed = true
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
		}
	}
	t.Cleanup(kill)
	return cmd.Process.Pid, kill
}

// Before, two runs on one directory both wrote there (the second's start-up sweep
// deleted the first's temporary file; seed 1 and seed 2 left a mixed directory). Now the
// second writer fails at once, naming the holder, and is not deterministic (exit 1: it
// may pass later); once the holder is killed, its lock is taken over and named.
func TestSecondWriterFailsNamingTheHolderAndAStaleLockIsTakenOver(t *testing.T) {
	dir := t.TempDir()
	pid, kill := holdLock(t, dir)
	// A temporary file of the holder's writer must survive the refused second writer.
	inflight := filepath.Join(dir, atomicfile.TempPrefix+"summary.json.1-1.tmp")
	if err := os.WriteFile(inflight, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Acquire(dir, Options{})
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Holder == nil || busy.Holder.PID != pid {
		t.Fatalf("second writer: %v, want a BusyError naming pid %d", err, pid)
	}
	for _, want := range []string{dir, "pid", "duplexmpe run held.hcl", "started"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	if fault.IsDeterministic(err) {
		t.Errorf("a busy directory is transient (exit 1), got a deterministic error")
	}
	if _, err := os.Stat(inflight); err != nil {
		t.Errorf("the refused writer swept the holder's temporary file: %v", err)
	}
	kill()
	l, err := Acquire(dir, Options{Command: "duplexmpe score"})
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	defer l.Release()
	if l.Stale == nil || l.Stale.PID != pid {
		t.Errorf("the stale holder is %+v, want pid %d", l.Stale, pid)
	}
	if _, err := os.Stat(inflight); err == nil {
		t.Errorf("the killed writer's temporary file was not swept by the next writer")
	}
	// Released cleanly, the next one finds no stale holder.
	l.Release()
	l2, err := Acquire(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Release()
	if l2.Stale != nil {
		t.Errorf("a released lock reads as stale: %+v", l2.Stale)
	}
}

func TestMissingDirectoryIsDeterministic(t *testing.T) {
	_, err := Acquire(filepath.Join(t.TempDir(), "nope"), Options{})
	if err == nil || !fault.IsDeterministic(err) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing directory: %v, want a deterministic error saying it does not exist", err)
	}
}

// Before, `run --var out=v` on a folder holding .notes.tmp and .config.tmpl deleted
// both and exited 0. Now such a folder is refused (deterministic: exit 3) unless asked,
// and the sweep removes only the project's own temporary names even when asked.
func TestNonRunFolderRefusedAndUserFilesKept(t *testing.T) {
	dir := t.TempDir()
	user := []string{".notes.tmp", ".config.tmpl", "notes.txt", ".draft.tmp-old", ".x.tmp"}
	for _, n := range user {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := CheckTarget(dir, false)
	if err == nil || !fault.IsDeterministic(err) || !strings.Contains(err.Error(), "--into-existing") {
		t.Fatalf("non-empty non-run folder: %v, want a deterministic refusal naming --into-existing", err)
	}
	if err := CheckTarget(dir, true); err != nil {
		t.Fatalf("asked: %v", err)
	}
	for _, ok := range []string{filepath.Join(t.TempDir(), "new"), t.TempDir()} {
		if err := CheckTarget(ok, false); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	run := t.TempDir()
	if err := os.WriteFile(filepath.Join(run, ManifestFile), []byte(ownManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckTarget(run, false); err != nil {
		t.Errorf("a run directory: %v", err)
	}
	// Own debris of every writer (atomicfile, the viewer, a merge's folder).
	own := []string{atomicfile.TempPrefix + "manifest.json.12-3.tmp", "viewer/" + atomicfile.TempPrefix + "abc.wav.123.tmp",
		"items/" + atomicfile.TempPrefix + "0123456789abcdef.99.tmp/done"}
	for _, n := range own {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Acquire(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	for _, n := range user {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("the sweep removed the user's %s", n)
		}
	}
	for _, n := range own {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("the sweep left the project's %s", n)
		}
	}
	// The lock file marks the folder as a run's, even before a manifest.
	if err := CheckTarget(dir, false); err != nil {
		t.Errorf("a folder a run started in: %v", err)
	}
}

// ownManifest is a manifest.json as this project writes it (store.OwnManifest).
const ownManifest = `{"name": "e", "harness": {"version": "dev", "protocol_version": 1}, "plugins": []}`

// Issue 31: dotfiles named like the older writers' temporary files (.draft.1.tmp,
// .x.tmp-12) were deleted from any folder a run, a report --out or a score --out wrote
// in, and from any folder holding some manifest.json. They go now only from a run
// directory whose manifest this project wrote.
func TestOlderTempNamesRemovedOnlyFromOwnRunDirectories(t *testing.T) {
	legacy := []string{".draft.1.tmp", ".x.tmp-12", "viewer/.abc.wav.4567.tmp", ".manifest.json.123-4.tmp"}
	write := func(dir, name, body string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, c := range map[string]struct {
		manifest string
		swept    bool
	}{
		"a user's folder":                   {"", false},
		"a folder with some manifest.json":  {`{"version": 2, "files": ["a"]}`, false},
		"a folder with a damaged manifest":  {`{"name": "e", "harn`, false},
		"a run directory this project made": {ownManifest, true},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if c.manifest != "" {
				write(dir, ManifestFile, c.manifest)
			}
			for _, n := range legacy {
				write(dir, n, "mine")
			}
			l, err := Acquire(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			l.Release()
			for _, n := range legacy {
				_, err := os.Stat(filepath.Join(dir, n))
				if gone := err != nil; gone != c.swept {
					t.Errorf("%s: removed = %v, want %v", n, gone, c.swept)
				}
			}
		})
	}
}

// Issue 31: report --out and score --out overwrote a user's report.md, results.json and
// summary.json (exit 0). A folder that holds files and is not this project's output is
// refused (exit 3); a run directory, a folder an earlier --out wrote (its lock file), a
// new or empty folder are fine.
func TestOutFolderMustBeTheProjects(t *testing.T) {
	user := t.TempDir()
	for _, n := range []string{"report.md", "results.json", "summary.json"} {
		if err := os.WriteFile(filepath.Join(user, n), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := CheckOut(user, "--out")
	if err == nil || !fault.IsDeterministic(err) || !strings.Contains(err.Error(), "not this project's output") || !strings.Contains(err.Error(), "report.md") {
		t.Fatalf("a user's folder: %v; want a deterministic refusal naming what it holds", err)
	}
	foreignManifest := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreignManifest, ManifestFile), []byte(`{"files": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckOut(foreignManifest, "--out"); err == nil {
		t.Errorf("a folder holding someone's manifest.json was taken for a run directory")
	}
	if err := CheckTarget(foreignManifest, false); err == nil {
		t.Errorf("run: a folder holding someone's manifest.json was taken for a run directory")
	}
	earlier := t.TempDir()
	l, err := Acquire(earlier, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	run := t.TempDir()
	if err := os.WriteFile(filepath.Join(run, ManifestFile), []byte(ownManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{filepath.Join(t.TempDir(), "new"), t.TempDir(), earlier, run} {
		if err := CheckOut(ok, "--out"); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// Before, a run directory's viewer/, cache/ and logs/ pointing outside received 121 MB,
// were appended to, and an outside file named like an item id was deleted. Now a link
// anywhere in the run directory is refused before anything is written or deleted.
func TestSymlinkOutOfTheRunDirectoryIsRefused(t *testing.T) {
	for _, sub := range []string{"viewer", "cache", "logs", "items/0123456789abcdef", "items/0123456789abcdef/text.json", LockFile} {
		t.Run(sub, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			victim := filepath.Join(outside, atomicfile.TempPrefix+"victim.1.tmp")
			if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, sub)
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			_, err := Acquire(dir, Options{})
			if err == nil || !fault.IsDeterministic(err) || !strings.Contains(err.Error(), "symbolic link") {
				t.Fatalf("link %s: %v, want a deterministic refusal naming the link", sub, err)
			}
			if _, err := os.Stat(victim); err != nil {
				t.Errorf("a file outside the run directory was deleted through the link")
			}
			ents, _ := os.ReadDir(outside)
			if len(ents) != 1 {
				t.Errorf("something was written outside the run directory: %d entries", len(ents))
			}
		})
	}
	// The run directory itself may be a link: it is where the run is.
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "run")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(link, Options{})
	if err != nil {
		t.Fatalf("a run directory that is itself a link: %v", err)
	}
	l.Release()
}
