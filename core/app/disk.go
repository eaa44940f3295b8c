package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// checkDisk refuses to start work that would fill the disk half way: what, writing
// about need bytes under dir, needs that much space free on dir's file system (dir, or
// its nearest existing parent). A file system whose free space cannot be read is not
// checked.
func checkDisk(dir string, need uint64, what string) error {
	free, where, ok := freeSpace(dir)
	if !ok || free >= need {
		return nil
	}
	return fmt.Errorf("%s needs about %s on the disk of %s, but only %s is free: free some space (or set the evaluation's out to another disk), then run again; nothing was spent",
		what, mib(need), where, mib(free))
}

// freeSpace is the space an unprivileged writer has left on the file system of dir.
func freeSpace(dir string) (uint64, string, bool) {
	for p := dir; ; p = filepath.Dir(p) {
		var st syscall.Statfs_t
		err := syscall.Statfs(p, &st)
		if err == nil {
			return uint64(st.Bavail) * uint64(st.Bsize), p, true
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, os.ErrNotExist) || filepath.Dir(p) == p {
			return 0, p, false
		}
	}
}

func mib(n uint64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }
