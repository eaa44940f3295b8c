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
// (".<name>.<pid>-<n>.tmp", os.CreateTemp's ".<name>.<digits>.tmp" and ".<name>.tmp-<digits>").
// A user's file may be named so too (".draft.1.tmp"), so they are swept only in a
// directory proven a run directory of this project (SweepLegacy's caller decides).
var legacyTemp = regexp.MustCompile(`^\.[^/]+\.[0-9]+(-[0-9a-z]+)?\.tmp$|^\.[^/]+\.tmp-[0-9]+$`)

// IsTemp reports whether name is one of the harness's temporary names (TempPrefix, or a
// writer before it): one left behind means its writer was killed before the rename.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, TempPrefix) && strings.HasSuffix(name, ".tmp")
}

// IsLegacyTemp reports whether name is a temporary name of the writers before
// TempPrefix (issue 24); a user's file may be named so too.
func IsLegacyTemp(name string) bool { return legacyTemp.MatchString(name) }

// TempPattern is the os.CreateTemp / os.MkdirTemp pattern of a temporary sibling of
// base: TempPrefix, base, a random part, ".tmp".
func TempPattern(base string) string { return TempPrefix + base + ".*.tmp" }

// Sweep removes the temporary files a killed writer left in dir (not below it), and the
// temporary folders of TempPrefix (a killed merge's): TempPrefix names only, which no
// user's file has. Symbolic links are never followed or removed. Call it only where no
// other writer may be at work: when a run or a build starts on its directory, under the
// run directory's lock (core/rundir).
func Sweep(dir string) { sweep(dir, false) }

// SweepLegacy is Sweep that also removes the older writers' temporary names
// (IsLegacyTemp): only for a directory known to be this project's (a run directory
// whose manifest this project wrote), never a folder a user pointed a command at.
func SweepLegacy(dir string) { sweep(dir, true) }

func sweep(dir string, legacy bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case e.Type().IsRegular() && (IsTemp(name) || legacy && IsLegacyTemp(name)):
			_ = os.Remove(filepath.Join(dir, name))
		case e.IsDir() && strings.HasPrefix(name, TempPrefix) && strings.HasSuffix(name, ".tmp"):
			_ = os.RemoveAll(filepath.Join(dir, name))
		}
	}
}
