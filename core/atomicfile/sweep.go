package atomicfile

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// TempPrefix begins the name of every temporary file or folder the harness writes
// (".duplexmpe.<name>.<pid>-<n>.tmp"): a prefix the project owns, so that a sweep
// removes only what a killed writer of this project left, never a user's ".notes.tmp".
const TempPrefix = ".duplexmpe."

// legacyTemp matches the temporary names that writers before TempPrefix used
// (".<name>.<pid>-<n>.tmp", os.CreateTemp's ".<name>.<digits>.tmp" and ".<name>.tmp-<digits>"):
// a number always comes before the suffix, which a name people give a file rarely has.
var legacyTemp = regexp.MustCompile(`^\.[^/]+\.[0-9]+(-[0-9a-z]+)?\.tmp$|^\.[^/]+\.tmp-[0-9]+$`)

// IsTemp reports whether name is one of the harness's temporary names (TempPrefix, or a
// writer before it): one left behind means its writer was killed before the rename.
func IsTemp(name string) bool {
	if strings.HasPrefix(name, TempPrefix) && strings.HasSuffix(name, ".tmp") {
		return true
	}
	return legacyTemp.MatchString(name)
}

// TempPattern is the os.CreateTemp / os.MkdirTemp pattern of a temporary sibling of
// base: TempPrefix, base, a random part, ".tmp".
func TempPattern(base string) string { return TempPrefix + base + ".*.tmp" }

// Sweep removes the temporary files a killed writer left in dir (not below it), and the
// temporary folders of TempPrefix (a killed merge's). Symbolic links are never followed
// or removed. Call it only where no other writer may be at work: when a run or a build
// starts on its directory, under the run directory's lock (core/rundir).
func Sweep(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case e.Type().IsRegular() && IsTemp(name):
			_ = os.Remove(filepath.Join(dir, name))
		case e.IsDir() && strings.HasPrefix(name, TempPrefix) && strings.HasSuffix(name, ".tmp"):
			_ = os.RemoveAll(filepath.Join(dir, name))
		}
	}
}
