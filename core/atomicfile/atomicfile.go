// Package atomicfile is the one way the harness writes a file: whole or not at all, and
// durably. Write puts the content in a temporary file in the target's directory, fsyncs
// it, renames it over the target and fsyncs the directory, so that after a crash or a
// power cut a reader finds either the old file or the new one, never half of one, and a
// file that Write returned for is on disk (a run store's item relies on that: its
// marker is written last and must not survive the files it vouches for).
//
// Permissions are those of os.WriteFile(path, data, 0o644): readable by everyone, less
// the umask. (os.CreateTemp would make them 0600, which left items unreadable to a
// group sharing a run directory.)
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
)

// Perm is the mode a written file gets before the umask.
const Perm fs.FileMode = 0o644

// WriteFile writes data to path atomically and durably.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write streams the content fill writes into path, atomically and durably. When fill
// or anything after it fails, path is left as it was and the temporary file is removed.
func Write(path string, fill func(w io.Writer) error) error {
	return write(path, fill, true)
}

// Replace is Write without the fsyncs: a reader still finds the old file or the new one,
// never half of one, but after a crash the new content may be lost. It is for derived
// files that the next run makes again (the report's viewer pages and recordings, of
// which a run has thousands), where a sync per file would cost more than remaking one.
func Replace(path string, fill func(w io.Writer) error) error {
	return write(path, fill, false)
}

func write(path string, fill func(w io.Writer) error, durable bool) error {
	dir := filepath.Dir(path)
	f, err := createTemp(dir, filepath.Base(path))
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	bw := bufio.NewWriterSize(f, 64<<10)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if !durable {
		return nil
	}
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// SyncDir fsyncs a directory, so that the names created, renamed or removed in it are
// on disk. Call it after renaming a directory into place (the file writes sync their
// own directory).
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	// Some file systems cannot sync a directory; the rename is then as durable as they
	// make it.
	if errors.Is(err, syscall.EINVAL) {
		return nil
	}
	return err
}

var tempSeq atomic.Uint64

// createTemp makes a new hidden file next to the target, with the permissions
// os.WriteFile would give it (os.CreateTemp always uses 0600).
func createTemp(dir, base string) (*os.File, error) {
	for range 100 {
		n := tempSeq.Add(1)
		name := filepath.Join(dir, TempPrefix+base+"."+strconv.Itoa(os.Getpid())+"-"+
			strconv.FormatUint(n, 36)+".tmp")
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, Perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("no free temporary name in %s", dir)
}
