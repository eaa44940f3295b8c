package store

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
)

// sweepTemps removes the temporary files a killed writer left in the run directory and
// its item directories. It runs when a run starts on the directory (Create), when no
// other writer may be at work there; it never touches anything else. The older writers'
// names (atomicfile.IsLegacyTemp) go too where dir holds a manifest this project wrote
// (OwnManifest): elsewhere a ".draft.1.tmp" is a user's.
func sweepTemps(dir string) {
	sweepOne := atomicfile.Sweep
	if OwnManifest(dir) {
		sweepOne = atomicfile.SweepLegacy
	}
	sweepOne(dir)
	items, err := os.ReadDir(filepath.Join(dir, ItemsDir))
	if err != nil {
		return
	}
	for _, e := range items {
		if e.IsDir() {
			sweepOne(filepath.Join(dir, ItemsDir, e.Name()))
		}
	}
}

// OwnManifest reports whether dir holds a manifest.json this project wrote: it parses
// as a Manifest and names the run, the harness version and the protocol version. Any
// other file of that name (a user's, a damaged one) does not make dir a run directory.
func OwnManifest(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, ManifestFile), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	var m Manifest
	if err := json.NewDecoder(io.LimitReader(f, 256<<20)).Decode(&m); err != nil {
		return false
	}
	return m.Name != "" && m.Harness.Version != "" && m.Harness.ProtocolVersion > 0
}
