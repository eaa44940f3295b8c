package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
)

// IsTemp reports whether name is one of Write's temporary files (".<name>.<pid>-<n>.tmp";
// the older writers' ".<name>.*.tmp" and ".<name>.tmp-*" too): one left behind means its
// writer was killed before the rename.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp")
}

// Sweep removes the temporary files a killed writer left in dir (not below it). Call it
// only where no other writer may be at work: when a run or a build starts on its
// directory.
func Sweep(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() && IsTemp(e.Name()) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
