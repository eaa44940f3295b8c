package app

import (
	"path/filepath"
	"strings"
	"testing"
)

// The disk check reads the real free space of the file system a run directory (not yet
// created) would go on: work that fits passes, work that cannot fit is refused before
// anything is spent, with an error naming the work, the space and where.
func TestCheckDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "not-yet")
	free, where, ok := freeSpace(dir)
	if !ok {
		t.Skip("this file system does not report its free space")
	}
	if free == 0 {
		t.Skip("the disk is full")
	}
	if err := checkDisk(dir, free/2, "playing 2 conversations"); err != nil {
		t.Errorf("half the free space was refused: %v", err)
	}
	err := checkDisk(dir, free+(1<<40), "playing 2 conversations")
	if err == nil {
		t.Fatalf("%s more than the %s free was accepted", mib(1<<40), mib(free))
	}
	for _, want := range []string{"playing 2 conversations needs about", "on the disk of " + where, "is free", "nothing was spent"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
}
