package pluginhost

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The folders go-plugin makes for each plugin's Unix socket ("plugin-dir*") go into one
// folder of this host process, $TMPDIR/duplexmpe-plugins-<pid>-<start>, named after the
// process (its pid and its start time, so a reused pid is no match). A host killed
// before it removed them leaves that folder behind; the next host to start a plugin
// removes every such folder whose process is gone, and only those: names of the
// project's own prefix.
const socketDirPrefix = "duplexmpe-plugins-"

var socketDirMade atomic.Bool

var socketDirOnce = sync.OnceValue(func() string {
	socketDirMade.Store(true)
	sweepSocketDirs(os.TempDir())
	dir := filepath.Join(os.TempDir(), socketDirPrefix+strconv.Itoa(os.Getpid())+"-"+processStart(os.Getpid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "" // go-plugin's default, $TMPDIR
	}
	return dir
})

// socketDir is the folder of this process's plugin socket folders ("" when it cannot be
// made: then go-plugin's default).
func socketDir() string { return socketDirOnce() }

// removeSocketDir removes this process's socket folder when it is empty (KillAll).
func removeSocketDir() {
	if !socketDirMade.Load() {
		return
	}
	if dir := socketDir(); dir != "" {
		_ = os.Remove(dir)
	}
}

// sweepSocketDirs removes the socket folders of host processes that are gone.
func sweepSocketDirs(tmp string) {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), socketDirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pid, start, ok := strings.Cut(rest, "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n <= 0 {
			continue
		}
		if processAlive(n) && processStart(n) == start {
			continue // its host still runs
		}
		_ = os.RemoveAll(filepath.Join(tmp, e.Name()))
	}
}
