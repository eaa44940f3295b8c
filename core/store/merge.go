package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
)

// MergeReport counts what Merge did.
type MergeReport struct {
	Done       int // finished items in the output
	Failed     int // failed items in the output (no shard finished them)
	Duplicates int // finished items found in more than one directory; the first was kept
}

// Merge combines the run directories dirs (the shards of one run) into out. Every
// manifest must equal the first one, and so must out's when it already exists; otherwise
// nothing is written. A finished item wins over a failed one; items without a marker
// (interrupted) are skipped. Each item is copied to a temporary directory and renamed
// into place, so an interrupted merge can simply be run again.
func Merge(out string, dirs []string) (MergeReport, error) {
	var rep MergeReport
	if len(dirs) == 0 {
		return rep, errors.New("merge: no run directories given")
	}
	var srcs []*Store
	for _, d := range dirs {
		s, err := Open(d)
		if err != nil {
			return rep, fmt.Errorf("merge: %w", err)
		}
		if len(srcs) > 0 {
			if diff := Diff(srcs[0].manifest, s.manifest); len(diff) > 0 {
				return rep, fmt.Errorf("merge: %s and %s are not shards of one run: their manifests differ in %s; merge only directories written by the same run file and the same harness build",
					srcs[0].dir, d, strings.Join(diff, ", "))
			}
		}
		srcs = append(srcs, s)
	}
	m := srcs[0].manifest
	if old, err := readManifest(out); err == nil {
		if diff := Diff(old, m); len(diff) > 0 {
			return rep, fmt.Errorf("merge: %s already holds a different run (manifests differ in %s); choose another output directory", out, strings.Join(diff, ", "))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("merge: %w", err)
	}
	dst, err := Create(out, m)
	if err != nil {
		return rep, fmt.Errorf("merge: %w", err)
	}

	best := map[string]*Store{} // id -> the directory holding its best version
	for _, s := range srcs {
		ids, err := s.IDs()
		if err != nil {
			return rep, fmt.Errorf("merge: %w", err)
		}
		for _, id := range ids {
			st := s.Status(id)
			if st == Missing {
				continue
			}
			prev, seen := best[id]
			switch {
			case !seen:
				best[id] = s
			case prev.Status(id) == Done && st == Done:
				rep.Duplicates++
			case st > prev.Status(id):
				best[id] = s
			}
		}
	}
	for id, s := range best {
		st := s.Status(id)
		if have := dst.Status(id); have < st && !sameDir(s.ItemDir(id), dst.ItemDir(id)) {
			if err := copyItem(s.ItemDir(id), dst.ItemDir(id)); err != nil {
				return rep, fmt.Errorf("merge: item %s from %s: %w", id, s.dir, err)
			}
		}
		if dst.Status(id) == Done {
			rep.Done++
		} else {
			rep.Failed++
		}
	}
	return rep, nil
}

func sameDir(a, b string) bool {
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}

// copyItem copies the item directory src over dst: into a temporary sibling (every file
// written durably, markers last), then the old dst is removed, the copy renamed into
// place and the items directory synced.
func copyItem(src, dst string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it 0700
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	var markers []string
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") {
			continue
		}
		if name == markerDone || name == markerFailed {
			markers = append(markers, name)
			continue
		}
		if err := copyFile(filepath.Join(src, name), filepath.Join(tmp, name)); err != nil {
			return err
		}
	}
	for _, name := range markers {
		if err := copyFile(filepath.Join(src, name), filepath.Join(tmp, name)); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(dst))
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return atomicfile.Write(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
