// Package rundir guards a run directory (core/store) against what is not the run: a
// second writer, a folder that holds someone else's files, symbolic links that lead
// out of it, and the debris of killed writers.
//
// Every command that writes in a run directory (run, score, report, prune, merge) takes
// its lock first (Acquire): an advisory lock (flock) on RUN_DIR/.duplexmpe-run.lock,
// which records the holder (pid, command, start time, host). A second writer fails at
// once naming the holder (exit 1: it may pass once the first is done). The kernel
// releases the lock of a process however it ends, so a lock file left by a killed
// process is stale by construction and the next command takes it over; it says whose
// it was.
//
// Under the lock, Acquire refuses a directory that holds a symbolic link anywhere in it
// (writing or deleting through one would reach files outside the run), and removes the
// temporary files and folders killed writers of this project left (core/atomicfile's
// names only) in the directory, its items, its viewer and its caches.
package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// LockFile is the lock's file in the run directory. Its presence also marks a
// directory a run started in (CheckTarget), even before its manifest is written.
const LockFile = store.LockFile

// ManifestFile is the run store's manifest (core/store).
const ManifestFile = store.ManifestFile

// Holder is who holds (or last held) a lock.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Started time.Time `json:"started"`
	Host    string    `json:"host,omitempty"`
}

func (h Holder) String() string {
	s := fmt.Sprintf("pid %d (%s), started %s", h.PID, h.Command, h.Started.Local().Format("2006-01-02 15:04:05"))
	if host, _ := os.Hostname(); h.Host != "" && h.Host != host {
		s += " on " + h.Host
	}
	return s
}

// Lock is a held run-directory lock. Release it when the command ends (the kernel
// releases it anyway when the process dies).
type Lock struct {
	f   *os.File
	dir string
	// Stale is the holder a killed process left recorded, taken over; nil when the
	// lock was free and clean.
	Stale *Holder
}

// BusyError is a run directory another process is writing in.
type BusyError struct {
	Dir    string
	Holder *Holder // nil when the holder could not be read
}

func (e *BusyError) Error() string {
	who := "another process (it has not recorded itself yet)"
	if e.Holder != nil {
		who = e.Holder.String()
	}
	return fmt.Sprintf("%s is in use by %s; wait until it ends, or stop it, then run this again (two writers in one run directory would overwrite each other's files)", e.Dir, who)
}

// Options of Acquire.
type Options struct {
	// Create makes dir (and its parents) when it does not exist; otherwise a missing
	// dir is a deterministic error (exit 3).
	Create bool
	// Command names the holder; default: the process's command line.
	Command string
}

// Acquire takes the lock of run directory dir, checks it for symbolic links and sweeps
// the debris of killed writers. It fails at once when another process holds it.
func Acquire(dir string, o Options) (*Lock, error) {
	if st, err := os.Stat(dir); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("run directory %s: %w", dir, err)
		}
		if !o.Create {
			return nil, fault.Deterministicf("%s does not exist: give the run directory a run wrote (its `out`)", dir)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("creating run directory %s: %w", dir, err)
		}
	} else if !st.IsDir() {
		return nil, fault.Deterministicf("%s is not a directory: give a run directory", dir)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fault.Deterministicf("%s is a symbolic link; a run directory's files must be its own: remove the link", path)
		}
		return nil, fmt.Errorf("locking run directory %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &BusyError{Dir: dir, Holder: readHolder(f)}
		}
		return nil, fmt.Errorf("locking run directory %s: %w", dir, err)
	}
	l := &Lock{f: f, dir: dir, Stale: readHolder(f)}
	host, _ := os.Hostname()
	cmd := o.Command
	if cmd == "" {
		cmd = strings.Join(append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...), " ")
	}
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Command: cmd, Started: time.Now().UTC().Truncate(time.Second), Host: host})
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(append(b, '\n'), 0)
		if err == nil {
			_ = f.Sync()
		}
	}
	if err := CheckLinks(dir); err != nil {
		l.Release()
		return nil, err
	}
	Sweep(dir)
	return l, nil
}

// Release clears the holder record and releases the lock. It is idempotent.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}

// Dir is the locked directory.
func (l *Lock) Dir() string { return l.dir }

func readHolder(f *os.File) *Holder {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	if n == 0 {
		return nil
	}
	var h Holder
	if json.Unmarshal([]byte(strings.TrimSpace(string(b[:n]))), &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}

// CheckLinks refuses a run directory with a symbolic link anywhere below it: the run
// writes, appends to and deletes files there, and through a link it would reach files
// outside it (the directory itself may be a link: it is where the run is). The walk
// follows no link.
func CheckLinks(dir string) error {
	var found string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // gone meanwhile, or unreadable: nothing is written through it
		}
		if path != dir && d.Type()&fs.ModeSymlink != 0 {
			found = path
			return filepath.SkipAll
		}
		return nil
	})
	if found != "" {
		target, _ := os.Readlink(found)
		return fault.Deterministicf("%s is a symbolic link (to %s): a run directory never writes or deletes through a link, which could reach files outside it; replace the link with a real folder or file (or remove it), then run again", found, target)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("run directory %s: %w", dir, err)
	}
	return nil
}

// debrisDirs are the folders of a run directory that its writers put temporary files
// in (each item's folder too).
var debrisDirs = store.RunDirs

// Sweep removes the temporary files and folders killed writers of this project left in
// run directory dir (core/atomicfile.IsTemp names only): in dir, its items, its viewer
// (the report's stereo recordings), its caches and logs. The older writers' names
// (atomicfile.IsLegacyTemp, which a user's ".draft.1.tmp" matches too) go only where
// dir's manifest is this project's (store.OwnManifest). Call it under the lock.
func Sweep(dir string) {
	sweep := atomicfile.Sweep
	if store.OwnManifest(dir) {
		sweep = atomicfile.SweepLegacy
	}
	for _, d := range debrisDirs {
		sweep(filepath.Join(dir, d))
	}
	items, err := os.ReadDir(filepath.Join(dir, store.ItemsDir))
	if err != nil {
		return
	}
	for _, e := range items {
		if e.IsDir() {
			sweep(filepath.Join(dir, store.ItemsDir, e.Name()))
		}
	}
}

// CheckTarget refuses to start a run in dir when dir holds files and is not a run
// directory (no manifest this project wrote, no lock file of a run that started there):
// the run would write its files among someone else's. A missing or empty dir is fine.
// The error is deterministic (exit 3); allow (`run --into-existing`) lets the run in,
// and it still removes nothing it did not write.
func CheckTarget(dir string, allow bool) error {
	ents, err := foreign(dir)
	if err != nil || len(ents) == 0 || allow {
		return err
	}
	return fault.Deterministicf("out = %s is not empty (%s) and is not a run directory (no %s this project wrote): a run writes many files there; give it a new or empty folder (out = \"runs/<name>\"), or pass --into-existing to write into this one (the run removes nothing it did not write)",
		dir, someNames(ents), ManifestFile)
}

// CheckOut refuses an --out folder of `report` or `score` (flag names the flag) that
// holds files and is not this project's output (a run directory, or a folder an
// earlier --out wrote, which holds the lock file): the command would overwrite a
// user's report.md or results.json. A missing or empty folder is fine. Exit 3.
func CheckOut(dir, flag string) error {
	ents, err := foreign(dir)
	if err != nil || len(ents) == 0 {
		return err
	}
	return fault.Deterministicf("%s %s is not empty (%s) and is not this project's output (no %s this project wrote, no %s): the command would overwrite files there; give a new or empty folder",
		flag, dir, someNames(ents), ManifestFile, LockFile)
}

// foreign lists dir's entries when dir holds files and none of them marks it as this
// project's (the lock file, or a manifest this project wrote); nil otherwise.
func foreign(dir string) ([]os.DirEntry, error) {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return nil, fault.Deterministicf("%s is a file, not a folder: give a folder of its own", dir)
		}
		return nil, fmt.Errorf("run directory %s: %w", dir, err)
	}
	for _, e := range ents {
		if e.Name() == LockFile && e.Type().IsRegular() {
			return nil, nil
		}
	}
	if store.OwnManifest(dir) {
		return nil, nil
	}
	return ents, nil
}

func someNames(ents []os.DirEntry) string {
	names := make([]string, 0, 3)
	for _, e := range ents[:min(3, len(ents))] {
		names = append(names, e.Name())
	}
	if len(ents) > 3 {
		return strings.Join(names, ", ") + fmt.Sprintf(" and %d more", len(ents)-3)
	}
	return strings.Join(names, ", ")
}
