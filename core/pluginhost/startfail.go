package pluginhost

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
)

// StartError is a plugin whose process could not be run or exited on its own before the
// handshake. Its message ends with the last lines the plugin wrote on stderr, so the
// cause is on the terminal and not only in the plugin's log.
//
// It is deterministic (core/fault: the CLI exits 3) when the plugin's own files are the
// cause: its executable or command is missing or cannot be run, it exited with status 0
// (no duplexmpe plugin), with one of the statuses that mean "cannot be run as written"
// (DeterministicExitStatuses: Python's for a script it cannot open, a shell's for a
// command not found or not executable), or after writing what a Python plugin writes when
// its files cannot be loaded (DeterministicStderr). Any other failure (a crash, weights
// that would not fit in memory) may pass on a retry, so it stays transient (exit 1).
type StartError struct {
	Plugin string
	Cause  string // what happened: "exited with status 2 before the handshake", ...
	Tail   string // the last lines of its stderr, when it wrote any
	Hint   string // where its whole output is (logHint)
	// Transient marks a process that exited with a status a retry may not repeat.
	Transient bool
}

// DeterministicExitStatuses are the exit statuses of a plugin process, before the
// handshake, that say it cannot be run as written: 2 (Python: the script cannot be
// opened; a usage error), 126 (found but not executable) and 127 (not found).
var DeterministicExitStatuses = []int{2, 126, 127}

// DeterministicStderr are what a Python plugin writes when its own files cannot be
// loaded (a module not installed, code that does not parse): with any exit status, a
// start that fails with one of them on stderr fails the same way again.
var DeterministicStderr = []string{"ModuleNotFoundError", "ImportError", "SyntaxError", "can't open file"}

func (e *StartError) Error() string {
	msg := fmt.Sprintf("plugin %q did not start: %s%s; fix the plugin's files or its block (source, command, dir)", e.Plugin, e.Cause, e.Hint)
	if e.Tail != "" {
		msg += "; the end of its stderr:\n  " + strings.ReplaceAll(e.Tail, "\n", "\n  ")
	}
	return msg
}

// Deterministic: the plugin's files or its block must change (core/fault), unless the
// status it exited with may pass on a retry.
func (e *StartError) Deterministic() bool { return !e.Transient }

// tailLines keeps the last tailBytes of what a plugin writes on stderr, whole lines.
type tailLines struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 2048

func (t *tailLines) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 2*tailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String is the tail, at most tailBytes, cut at a line start, blank lines dropped.
func (t *tailLines) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimRight(l, "\r "); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// exitWait bounds how long a failed start waits for the plugin's process to be reaped
// before it is judged: go-plugin reports a plugin that closed its stdout as soon as it
// does, which can be just before the process ends. A process still running after it is
// not judged (the failure stays transient).
const exitWait = 10 * time.Second

// startFailure judges a failed handshake: a process that could not be run, or that
// exited on its own (not killed by a signal) before the handshake, is a StartError;
// anything else (killed, still running) is nil and the caller reports it as before.
func startFailure(name string, err error, pc *plugin.Client, gr *groupRunner, tail *tailLines, hint string) error {
	if gr == nil {
		return nil
	}
	if gr.Pid() == 0 {
		// exec failed: no such file, not executable, wrong format.
		return &StartError{Plugin: name, Cause: fmt.Sprintf("%s cannot be run: %v", gr.cmd.Path, err), Tail: tail.String(), Hint: hint}
	}
	for deadline := time.Now().Add(exitWait); !pc.Exited(); {
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	st := gr.cmd.ProcessState // set before go-plugin marks the client exited
	if st == nil || !st.Exited() {
		return nil // killed by a signal (the OOM killer, a user): a retry may pass
	}
	code := st.ExitCode()
	cause := fmt.Sprintf("its process exited with status %d before the handshake", code)
	if code == 0 {
		cause = "its process exited before the handshake (is it a duplexmpe plugin: sdk.Serve, or the Python SDK?)"
	}
	t := tail.String()
	transient := code != 0 && !slices.Contains(DeterministicExitStatuses, code) &&
		!slices.ContainsFunc(DeterministicStderr, func(m string) bool { return strings.Contains(t, m) })
	return &StartError{Plugin: name, Cause: cause, Tail: t, Hint: hint, Transient: transient}
}
