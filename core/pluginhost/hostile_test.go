package pluginhost_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
)

// Before, a model returning 1 MB of text a frame drove the host to 2 GB and a 210 MB
// text.json, and the run exited 0. Now a frame's text and a conversation's are bounded:
// the conversation fails with an error naming the plugin, the conversation and the
// frame; the plugin is not killed, and its next conversation plays.
func TestModelTextIsBounded(t *testing.T) {
	cases := []struct {
		name  string
		bytes float64
		says  string
	}{
		{"per frame", 1 << 20, "bytes of text in one frame"},
		{"per conversation", 60 << 10, "bytes of text in the conversation"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := startFaulty(t, pluginhost.Spec{}, map[string]any{"fault": "text", "at_frame": 2.0, "text_bytes": c.bytes, "conversations": []any{"flood"}})
			err := play(cl, "flood", 40)
			if err == nil {
				t.Fatalf("40 frames of %g bytes of text each were accepted", c.bytes)
			}
			for _, want := range []string{`plugin "faulty"`, `conversation "flood"`, "frame", c.says} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error %q does not say %q", err, want)
				}
			}
			if cl.Exited() {
				t.Errorf("the plugin was killed for its text")
			}
			if err := play(cl, "calm", 40); err != nil {
				t.Errorf("the next conversation: %v", err)
			}
		})
	}
}

// Before, a plugin whose child called setsid hung the host after scoring ("plugin
// failed to exit gracefully", no progress for 240-283 s until killed), and with the
// child's output elsewhere the run ended and the child lived on. Now Kill ends every
// process of the plugin, the setsid child included, and returns in bounded time.
func TestKillEndsASetsidChildAndReturns(t *testing.T) {
	t.Run("go", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "child.pid")
		killSetsid(t, startFaulty(t, pluginhost.Spec{}, map[string]any{"fault": "setsid", "pid_file": pidFile}), pidFile)
	})
	// Before, a child that also cleared its environment (no token) survived even a clean
	// run: the plugin's graceful exit orphaned it before the host looked for it. Now the
	// host notes the plugin's processes before it exits, and ends them all.
	t.Run("go, the child with an empty environment", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "child.pid")
		tmpFile := filepath.Join(t.TempDir(), "tmpdir")
		cl := startFaulty(t, pluginhost.Spec{}, map[string]any{"fault": "setsid", "pid_file": pidFile, "clear_env": true, "tmpdir_file": tmpFile})
		// The plugin's TMPDIR is the host's temporary root, not the system's.
		if b, err := os.ReadFile(tmpFile); err != nil || string(b) != pluginhost.RunRoot() || !strings.Contains(string(b), "duplexmpe-run-") {
			t.Errorf("the plugin's TMPDIR is %q (%v), want the host's root %q", b, err, pluginhost.RunRoot())
		}
		killSetsid(t, cl, pidFile)
	})
	t.Run("python behind a wrapper", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "child.pid")
		runPy, _ := filepath.Abs("../../tests/reliability/faulty_py/run.sh")
		cl := startFaulty(t, pluginhost.Spec{Name: "faulty-py", Command: []string{"bash", runPy}, Env: map[string]string{"PYTHON": venvPython(t)}},
			map[string]any{"fault": "setsid", "pid_file": pidFile})
		killSetsid(t, cl, pidFile)
	})
}

func killSetsid(t *testing.T, cl *pluginhost.Client, pidFile string) {
	if err := play(cl, "c", 5); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if !alive(child) {
		t.Fatalf("the setsid child %d is not running before Kill", child)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	done := make(chan struct{})
	go func() {
		cl.Kill()
		close(done)
	}()
	// Kill's own bounds are a few seconds; a minute only catches an unbounded wait
	// whatever the machine's load.
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Kill did not return within a minute: it waits on a plugin exit without bound")
	}
	for deadline := time.Now().Add(10 * time.Second); alive(child); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the setsid child %d outlived Kill", child)
		}
	}
}

// alive reports whether pid runs (not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
