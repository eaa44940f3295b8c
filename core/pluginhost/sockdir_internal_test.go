package pluginhost

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Before, each host kill left one $TMPDIR/plugin-dir* folder per plugin, which nothing
// removed. Now the host marks the socket folders it makes, and the next host removes the
// marked ones of hosts that are gone, and nothing else.
func TestSocketDirsOfGoneHostsAreSwept(t *testing.T) {
	tmp := t.TempDir()
	gone := exec.Command("true") // a process that has ended
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name, owner string) string {
		d := filepath.Join(tmp, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(d, socketOwnerFile), []byte(owner+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	dead := mk("plugin-dir1", strconv.Itoa(gone.Process.Pid)+"-1")
	reused := mk("plugin-dir2", strconv.Itoa(os.Getpid())+"-1") // this pid, another start
	live := mk("plugin-dir3", ownerID(os.Getpid()))
	unmarked := mk("plugin-dir4", "")                                   // another program's
	other := mk("duplexmpe-notes", strconv.Itoa(gone.Process.Pid)+"-1") // not a socket folder
	sweepSocketDirs(tmp)
	for _, d := range []string{dead, reused} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s, of a host that is gone, was left", filepath.Base(d))
		}
	}
	for _, d := range []string{live, unmarked, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(d), err)
		}
	}
}
