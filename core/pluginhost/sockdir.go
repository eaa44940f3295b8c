package pluginhost

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// go-plugin makes a folder for each plugin's Unix socket, $TMPDIR/plugin-dir<random>,
// and removes it when the plugin is killed: a host killed first leaves it behind. The
// host marks each such folder as its own with a file naming the host process (its pid
// and its start time, so a reused pid is no match), and the first plugin start of the
// next host removes the marked folders of hosts that are gone, and only those: a
// folder without the mark is not the project's. (A folder of our own around them would
// lengthen the socket's path past the 108 bytes a Unix socket address holds.)
const socketOwnerFile = ".duplexmpe-host"

var sweepOnce sync.Once

// markSocketDir records this process as the owner of go-plugin's socket folder dir,
// after sweeping the folders of hosts that are gone (once per process).
func markSocketDir(dir string) {
	sweepOnce.Do(func() { sweepSocketDirs(os.TempDir()) })
	if dir == "" {
		return
	}
	_ = os.WriteFile(filepath.Join(dir, socketOwnerFile), []byte(ownerID(os.Getpid())+"\n"), 0o600)
}

// ownerID names process pid for good: "<pid>-<start time>".
func ownerID(pid int) string { return strconv.Itoa(pid) + "-" + processStart(pid) }

// sweepSocketDirs removes the marked socket folders in tmp whose host is gone.
func sweepSocketDirs(tmp string) {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "plugin-dir") {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		raw, err := os.ReadFile(filepath.Join(dir, socketOwnerFile))
		if err != nil {
			continue // not marked: not ours
		}
		owner := strings.TrimSpace(string(raw))
		pid, _, ok := strings.Cut(owner, "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n <= 0 {
			continue
		}
		if processAlive(n) && ownerID(n) == owner {
			continue // its host still runs
		}
		_ = os.RemoveAll(dir)
	}
}
