package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
)

// The file gets exactly what os.WriteFile(path, data, 0644) would give it under the
// same umask: issue 15 found item files owner-only because temporary files are 0600.
func TestWriteFilePermissionsAreThoseOfOSWriteFile(t *testing.T) {
	for _, umask := range []int{0o022, 0o002, 0o077} {
		old := syscall.Umask(umask)
		dir := t.TempDir()
		ref := filepath.Join(dir, "ref")
		if err := os.WriteFile(ref, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		got := filepath.Join(dir, "got")
		if err := atomicfile.WriteFile(got, []byte("x")); err != nil {
			t.Fatal(err)
		}
		syscall.Umask(old)
		want, _ := os.Stat(ref)
		have, _ := os.Stat(got)
		if have.Mode().Perm() != want.Mode().Perm() {
			t.Errorf("umask %04o: mode %v, os.WriteFile gives %v", umask, have.Mode().Perm(), want.Mode().Perm())
		}
	}
}

func TestWriteReplacesWholeAndLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := atomicfile.WriteFile(path, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteFile(path, []byte("second, longer")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "second, longer" {
		t.Errorf("content %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries; want only f.json", len(ents))
	}
}

// A fill that fails leaves the old file as it was and no temporary file behind; so does
// Replace, the unsynced Write of derived files; and both write files as os.WriteFile.
func TestWriteFailureKeepsTheOldFile(t *testing.T) {
	for name, write := range map[string]func(string, func(io.Writer) error) error{"Write": atomicfile.Write, "Replace": atomicfile.Replace} {
		dir := t.TempDir()
		path := filepath.Join(dir, "f")
		if err := write(path, func(w io.Writer) error { _, err := io.WriteString(w, "old"); return err }); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		err := write(path, func(w io.Writer) error {
			io.WriteString(w, strings.Repeat("new", 100000)) // more than the buffer: reaches the file
			return boom
		})
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v; want boom, naming the file", name, err)
		}
		b, _ := os.ReadFile(path)
		if string(b) != "old" {
			t.Errorf("%s: content %q; want the old one", name, b)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%s: directory holds %d entries; the temporary file was left", name, len(ents))
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm()&0o044 == 0 {
			t.Errorf("%s: mode %v: not readable by others", name, fi.Mode().Perm())
		}
	}
}

func TestWriteIntoAMissingDirectoryNamesIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "f")
	if err := atomicfile.WriteFile(path, nil); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v; want one naming %s", err, path)
	}
}

func TestSyncDir(t *testing.T) {
	if err := atomicfile.SyncDir(t.TempDir()); err != nil {
		t.Error(err)
	}
	if err := atomicfile.SyncDir(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("a missing directory synced")
	}
}
