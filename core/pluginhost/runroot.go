package pluginhost

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The host's temporary root: a folder of its own, $TMPDIR/duplexmpe-run-<pid>-<start>,
// that every plugin gets as its TMPDIR, so that what a plugin (and its children) leave
// in temporary folders goes when the run ends (KillAll removes it) and, after a host
// that was killed, when the next host starts a plugin (the roots of hosts that are gone
// are swept). The root also holds the host's record of every process of its plugins
// (procsFile: "<pid> <start time>" lines), written as the tracker finds them, so that
// the next host can end the survivors of one that was SIGKILLed: a plugin's child that
// called setsid and cleared its environment has neither the plugin's process group nor
// its token.
const (
	runRootPrefix = "duplexmpe-run-"
	procsFile     = "processes"
	// trackEvery is how often the tracker looks for the plugins' processes.
	trackEvery = time.Second
)

type tracker struct {
	once    sync.Once
	root    string
	mu      sync.Mutex
	runners map[*groupRunner]bool
	seen    map[int]string // pid -> start time, every plugin process found so far
	written int            // len(seen) at the last write of procsFile
}

var track = &tracker{runners: map[*groupRunner]bool{}, seen: map[int]string{}}

// RunRoot is the host's temporary root ("" when it cannot be made: plugins then keep
// the host's TMPDIR). The first call sweeps the roots of hosts that are gone and starts
// the tracker.
func RunRoot() string {
	track.once.Do(func() {
		tmp := os.TempDir()
		sweepRunRoots(tmp)
		dir := filepath.Join(tmp, runRootPrefix+ownerID(os.Getpid()))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return
		}
		if err := os.WriteFile(filepath.Join(dir, socketOwnerFile), []byte(ownerID(os.Getpid())+"\n"), 0o600); err != nil {
			return
		}
		track.root = dir
		go func() {
			for range time.Tick(trackEvery) {
				track.scan()
			}
		}()
	})
	return track.root
}

// add and remove keep the plugin processes the tracker watches (what a removed one
// was seen to have stays recorded).
func (t *tracker) add(r *groupRunner) {
	t.mu.Lock()
	t.runners[r] = true
	t.mu.Unlock()
}

func (t *tracker) remove(r *groupRunner) {
	t.mu.Lock()
	delete(t.runners, r)
	t.mu.Unlock()
}

// scan records every live process of the watched plugins (pluginProcesses: group,
// descendants, token), and writes the record when it grew.
func (t *tracker) scan() {
	t.mu.Lock()
	runners := make([]*groupRunner, 0, len(t.runners))
	for r := range t.runners {
		runners = append(runners, r)
	}
	t.mu.Unlock()
	for _, r := range runners {
		r.noteWith("") // group and descendants: no read of every process's environment each second
		r.checkMemory()
	}
	t.write()
}

// MemoryWarning is the resident memory of one plugin, all its live processes together,
// past which the host warns, once per start of the plugin, naming it (docs/reliability.md):
// the project's stated level, not a limit (a speech model may need more; the warning
// says where a run's memory went before the machine runs out of it).
var MemoryWarning int64 = 8 << 30

// checkMemory gives the memory warning when r's live processes (the same pid and start
// time as when they were found) hold more than MemoryWarning.
func (r *groupRunner) checkMemory() {
	if r == nil || r.logger == nil || r.warnedMemory.Load() {
		return
	}
	found := r.foundNow()
	var rss int64
	for pid, start := range found {
		if processStart(pid) == start {
			rss += residentBytes(pid)
		}
	}
	if rss > MemoryWarning && r.warnedMemory.CompareAndSwap(false, true) {
		r.logger.Warn(fmt.Sprintf("the plugin's processes hold %d MiB of memory, past the host's warning level of %d MiB (pluginhost.MemoryWarning); if it keeps growing, the machine may run out of memory",
			rss>>20, MemoryWarning>>20))
	}
}

// note records the live processes of r now (group, descendants, token), in r and in
// the host's record.
func (r *groupRunner) note() {
	if r != nil {
		r.noteWith(r.token)
	}
}

func (r *groupRunner) noteWith(token string) {
	pgid := r.Pid()
	if pgid == 0 {
		return
	}
	pids := pluginProcesses(pgid, token)
	track.mu.Lock()
	defer track.mu.Unlock()
	if r.found == nil {
		r.found = map[int]string{}
	}
	for _, pid := range pids {
		if _, ok := r.found[pid]; ok {
			continue
		}
		start := processStart(pid)
		r.found[pid] = start
		track.seen[pid] = start
	}
}

func (t *tracker) write() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.root == "" || len(t.seen) == t.written {
		return
	}
	var b strings.Builder
	pids := make([]int, 0, len(t.seen))
	for pid := range t.seen {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	for _, pid := range pids {
		fmt.Fprintf(&b, "%d %s\n", pid, t.seen[pid])
	}
	tmp := filepath.Join(t.root, procsFile+".new")
	if os.WriteFile(tmp, []byte(b.String()), 0o600) == nil && os.Rename(tmp, filepath.Join(t.root, procsFile)) == nil {
		t.written = len(t.seen)
	}
}

// foundNow is a copy of the processes r was seen to have (pid -> start time).
func (r *groupRunner) foundNow() map[int]string {
	track.mu.Lock()
	defer track.mu.Unlock()
	found := make(map[int]string, len(r.found))
	for pid, start := range r.found {
		found[pid] = start
	}
	return found
}

// killFound SIGKILLs every process r was seen to have that still runs (the same pid and
// start time): a child that left the plugin's group and session and cleared its
// environment, orphaned when the plugin exited, is found this way.
func (r *groupRunner) killFound() {
	if r == nil {
		return
	}
	found := r.foundNow()
	killRecorded(found)
}

// killRecorded SIGKILLs each recorded process that still runs as recorded.
func killRecorded(procs map[int]string) {
	self := os.Getpid()
	for pid, start := range procs {
		if pid != self && pid > 1 && start != "0" && processAlive(pid) && processStart(pid) == start {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// endRunRoot ends every process the host recorded and removes its temporary root; the
// last thing KillAll does.
func endRunRoot() {
	track.mu.Lock()
	seen := make(map[int]string, len(track.seen))
	for pid, start := range track.seen {
		seen[pid] = start
	}
	root := track.root
	track.mu.Unlock()
	killRecorded(seen)
	if root != "" {
		_ = os.RemoveAll(root)
		// A later plugin start in this process makes it again.
		_ = os.MkdirAll(root, 0o700)
		_ = os.WriteFile(filepath.Join(root, socketOwnerFile), []byte(ownerID(os.Getpid())+"\n"), 0o600)
	}
}

// sweepRunRoots ends the recorded processes of the roots in tmp whose host is gone and
// removes those roots; a root without the owner mark is not the project's.
func sweepRunRoots(tmp string) {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), runRootPrefix) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		raw, err := os.ReadFile(filepath.Join(dir, socketOwnerFile))
		if err != nil {
			continue
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
		if raw, err := os.ReadFile(filepath.Join(dir, procsFile)); err == nil {
			procs := map[int]string{}
			for _, line := range strings.Split(string(raw), "\n") {
				p, start, ok := strings.Cut(line, " ")
				if n, err := strconv.Atoi(p); ok && err == nil {
					procs[n] = start
				}
			}
			killRecorded(procs)
		}
		_ = os.RemoveAll(dir)
	}
}
