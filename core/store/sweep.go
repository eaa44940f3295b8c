package store

import (
	"os"
	"path/filepath"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
)

// sweepTemps removes the temporary files a killed writer left in the run directory and
// its item directories. It runs when a run starts on the directory (Create), when no
// other writer may be at work there; it never touches anything else.
func sweepTemps(dir string) {
	atomicfile.Sweep(dir)
	items, err := os.ReadDir(filepath.Join(dir, ItemsDir))
	if err != nil {
		return
	}
	for _, e := range items {
		if e.IsDir() {
			atomicfile.Sweep(filepath.Join(dir, ItemsDir, e.Name()))
		}
	}
}
