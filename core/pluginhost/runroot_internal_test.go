package pluginhost

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Before, a plugin's child in a session of its own survived a host SIGKILL and a whole
// second run, and the temporary folders of plugins killed mid-call stayed (flite: 5 after
// 12 kills; ten cascade-wake-* folders after make test). Now every plugin's TMPDIR is the
// host's root, which records the plugin's processes: the next host kills the recorded
// survivors of a host that is gone (the same pid and start time only) and removes its
// root with whatever the plugins left in it; a live host's root, and folders without
// the mark, stay.
func TestRunRootsOfGoneHostsAreSwept(t *testing.T) {
	tmp := t.TempDir()
	gone := exec.Command("true") // a host that has ended
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	survivor := exec.Command("sleep", "60") // a plugin's child the dead host recorded
	if err := survivor.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = survivor.Process.Kill() })
	bystander := exec.Command("sleep", "60") // recorded with another start time: a reused pid
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bystander.Process.Kill() })
	start := processStart(survivor.Process.Pid)
	if start == "0" {
		t.Skip("no /proc")
	}
	mk := func(owner string, procs string) string {
		d := filepath.Join(tmp, runRootPrefix+owner)
		if err := os.MkdirAll(filepath.Join(d, "cascade-wake-123"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, socketOwnerFile), []byte(owner+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, procsFile), []byte(procs), 0o600); err != nil {
			t.Fatal(err)
		}
		return d
	}
	dead := mk(strconv.Itoa(gone.Process.Pid)+"-1",
		fmt.Sprintf("%d %s\n%d 1\n", survivor.Process.Pid, start, bystander.Process.Pid))
	live := mk(ownerID(os.Getpid()), "")
	sweepRunRoots(tmp)
	if _, err := os.Stat(dead); err == nil {
		t.Error("the root of a host that is gone was left, with its plugins' temporary folders")
	}
	if _, err := os.Stat(filepath.Join(live, "cascade-wake-123")); err != nil {
		t.Errorf("a live host's root was touched: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- survivor.Wait() }()
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Error("the recorded survivor of a host that is gone was not killed")
	}
	if !processAlive(bystander.Process.Pid) {
		t.Error("a process recorded with another start time (a reused pid) was killed")
	}
}
