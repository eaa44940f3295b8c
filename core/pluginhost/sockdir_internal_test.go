package pluginhost

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Before, each host kill left one $TMPDIR/plugin-dir* folder per plugin, which nothing
// removed. Now the socket folders of a host go into one folder named after the host
// process, and the next host removes those of hosts that are gone, and nothing else.
func TestSocketDirsOfGoneHostsAreSwept(t *testing.T) {
	tmp := t.TempDir()
	// A process that has ended: its pid names no live process with its start time.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(tmp, socketDirPrefix+strconv.Itoa(gone.Process.Pid)+"-1")
	live := filepath.Join(tmp, socketDirPrefix+strconv.Itoa(os.Getpid())+"-"+processStart(os.Getpid()))
	reused := filepath.Join(tmp, socketDirPrefix+strconv.Itoa(os.Getpid())+"-1") // this pid, another start
	foreign := []string{filepath.Join(tmp, "plugin-dir123"), filepath.Join(tmp, "duplexmpe-notes"), filepath.Join(tmp, socketDirPrefix+"x")}
	for _, d := range append([]string{dead, live, reused}, foreign...) {
		if err := os.MkdirAll(filepath.Join(d, "plugin-dir1"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sweepSocketDirs(tmp)
	for _, d := range []string{dead, reused} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s, of a host that is gone, was left", filepath.Base(d))
		}
	}
	for _, d := range append([]string{live}, foreign...) {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(d), err)
		}
	}
}
