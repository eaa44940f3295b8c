package pluginhost_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// The fault plugins of tests/reliability, as real processes: a wedged, hung or garbage
// plugin must cost its own conversation only, with an error that says what to change.

func faultyBin(t testing.TB) string {
	t.Helper()
	return plugintest.BuildGo(t, "../../tests/reliability/faulty")
}

// venvPython is the repository's .venv interpreter, with the Python SDK installed.
func venvPython(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs("../../.venv/bin/python")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run `make deps-py` (make test does)", p)
	}
	return p
}

func startFaulty(t *testing.T, spec pluginhost.Spec, config map[string]any) *pluginhost.Client {
	t.Helper()
	if spec.Name == "" {
		spec.Name = "faulty"
	}
	if spec.Source == "" && len(spec.Command) == 0 {
		spec.Source = faultyBin(t)
	}
	c := startBeeper(t, spec)
	if err := c.Configure(context.Background(), config); err != nil {
		t.Fatal(err)
	}
	return c
}

// play starts conversation id and steps it n frames; it returns the first error.
func play(c *pluginhost.Client, id string, n int) error {
	m, err := c.Model()
	if err != nil {
		return err
	}
	ctx := context.Background()
	conv, err := m.Start(ctx, sdk.ConversationStart{ID: id})
	if err != nil {
		return err
	}
	defer conv.Close()
	for range n {
		if _, err := conv.Step(ctx, make([]float32, conv.Format().FrameSize)); err != nil {
			return err
		}
	}
	return conv.Close()
}

func waitExited(t *testing.T, c *pluginhost.Client) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !c.Exited(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the plugin still runs 5 s after the call that wedged it failed")
		}
	}
}

// Before, a step past its deadline left the wedged process in place: every later
// conversation waited for it and failed too, and nothing restarted it.
func TestWedgedStepKillsThePluginAndRestartHeals(t *testing.T) {
	c := startFaulty(t, pluginhost.Spec{FrameTimeout: 2 * time.Second},
		map[string]any{"fault": "wedge", "at_frame": 3.0, "conversations": []any{"first"}})
	pid := c.Pid()
	err := play(c, "first", 10)
	var dl *pluginhost.DeadlineError
	if !errors.As(err, &dl) || !dl.Killed || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want a DeadlineError that killed the plugin", err)
	}
	for _, want := range []string{`plugin "faulty"`, `conversation "first", frame 3`, "frame_timeout = 2s", "raise frame_timeout in the plugin \"faulty\" block", "killed its process group"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	waitExited(t, c)
	waitGroupGone(t, pid)
	if err := c.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := play(c, "second", 10); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
}

// A hung Step in a plugin that still serves other conversations is a dead plugin too.
func TestHungStepIsAWedge(t *testing.T) {
	c := startFaulty(t, pluginhost.Spec{FrameTimeout: time.Second}, map[string]any{"fault": "hang"})
	if err := play(c, "x", 5); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "frame_timeout = 1s") {
		t.Fatalf("err = %v", err)
	}
	waitExited(t, c)
}

// Before, a hung conversation start was bounded only by the caller's hard-coded 10 min.
func TestHungConversationStart(t *testing.T) {
	c := startFaulty(t, pluginhost.Spec{ConversationStartTimeout: time.Second}, map[string]any{"fault": "hang_start"})
	err := play(c, "x", 1)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `Model.Start (conversation "x")`) ||
		!strings.Contains(err.Error(), "conversation_start_timeout = 1s") || !strings.Contains(err.Error(), "raise conversation_start_timeout") {
		t.Fatalf("err = %v; want the conversation start deadline named", err)
	}
	waitExited(t, c)
}

func TestHungCloseIsBounded(t *testing.T) {
	c := startFaulty(t, pluginhost.Spec{FrameTimeout: time.Second}, map[string]any{"fault": "hang_close"})
	err := play(c, "x", 2)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `Model.Close (conversation "x")`) {
		t.Fatalf("err = %v", err)
	}
	waitExited(t, c)
}

// The other conversations on a killed process say why it went.
func TestConversationsBesideAWedgeSayWhy(t *testing.T) {
	c := startFaulty(t, pluginhost.Spec{FrameTimeout: time.Second}, map[string]any{"fault": "hang", "conversations": []any{"stuck"}})
	m, _ := c.Model()
	ctx := context.Background()
	beside, err := m.Start(ctx, sdk.ConversationStart{ID: "beside"})
	if err != nil {
		t.Fatal(err)
	}
	if err := play(c, "stuck", 5); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	waitExited(t, c)
	_, err = beside.Step(ctx, make([]float32, beside.Format().FrameSize))
	if err == nil || !strings.Contains(err.Error(), `the host killed the plugin process because Model.Step (conversation "stuck", frame 3) got no answer`) {
		t.Fatalf("err = %v; want it to say the host killed the process for the other conversation", err)
	}
}

// Before, the start timeout said only "timeout while waiting for plugin to start".
func TestSlowStartNamesStartTimeout(t *testing.T) {
	_, err := pluginhost.Start(context.Background(), pluginhost.Spec{Name: "slow", Source: faultyBin(t),
		Env: map[string]string{"FAULTY_START_DELAY": "30"}, StartTimeout: 500 * time.Millisecond}, nil)
	if err == nil || !strings.Contains(err.Error(), `plugin "slow" did not start within start_timeout = 500ms`) ||
		!strings.Contains(err.Error(), `raise start_timeout in the plugin "slow" block`) {
		t.Fatalf("err = %v", err)
	}
}

// Before, integer-scaled or NaN audio reached the recording.
func TestOutputAudioIsChecked(t *testing.T) {
	for fault, want := range map[string]string{
		"garbage": "the model sent sample 3000 at index 0, far outside [-1, 1]",
		"nan":     "the model sent a non-finite sample (NaN) at index 7",
	} {
		t.Run(fault, func(t *testing.T) {
			c := startFaulty(t, pluginhost.Spec{}, map[string]any{"fault": fault})
			err := play(c, "x", 5)
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `plugin "faulty"`) ||
				!strings.Contains(err.Error(), `conversation "x", frame 3`) {
				t.Fatalf("err = %v; want %q naming the plugin, conversation and frame", err, want)
			}
			if c.Exited() {
				t.Fatal("bad audio is the model's answer, not a wedge: the plugin must keep running")
			}
		})
	}
}

// Before, 1 MiB per frame on stdout grew the log without bound.
func TestLogIsCappedWithANote(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "faulty.log")
	const limit = 256 << 10
	c := startFaulty(t, pluginhost.Spec{LogFile: log, LogLimit: limit}, map[string]any{"fault": "flood"})
	if err := play(c, "x", 6); err != nil {
		t.Fatal(err)
	}
	c.Kill()
	cur, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	prev, err := os.ReadFile(log + ".1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cur) > limit || len(prev) > limit {
		t.Fatalf("log files of %d and %d bytes; the limit is %d", len(cur), len(prev), limit)
	}
	if !strings.Contains(string(cur)+string(prev), "bytes before that were dropped") {
		t.Fatalf("no note of the dropped output in:\n%.300s", cur)
	}
}

// A path-typed config field is resolved against Spec.ConfigDir, not the plugin's cwd.
func TestPathConfigResolvesAgainstConfigDir(t *testing.T) {
	runDir, pluginDir := t.TempDir(), t.TempDir()
	c := startFaulty(t, pluginhost.Spec{ConfigDir: runDir, Dir: pluginDir}, map[string]any{"touch": "marker"})
	if _, err := os.Stat(filepath.Join(runDir, "marker")); err != nil {
		t.Fatalf("the relative path did not resolve against ConfigDir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(pluginDir, "marker")); err == nil {
		t.Fatal("the relative path resolved against the plugin's directory")
	}
	// A restart sends the resolved config again.
	os.Remove(filepath.Join(runDir, "marker"))
	if err := c.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(runDir, "marker")); err != nil {
		t.Fatalf("after Restart: %v", err)
	}
}

// TestHelperSlowHost is a host for TestHostKilledDuringSlowStarts: it starts plugins that
// load for a minute behind wrappers that do not exec (a Go and a Python one) and waits.
func TestHelperSlowHost(t *testing.T) {
	if os.Getenv("PLUGINHOST_HELPER_SLOW_HOST") == "" {
		t.Skip("only run by TestHostKilledDuringSlowStarts")
	}
	dir := os.Getenv("HELPER_DIR")
	env := map[string]string{"FAULTY_START_DELAY": "60", "FAULTY": os.Getenv("FAULTY"), "PYTHON": os.Getenv("PYTHON")}
	writeScript(t, dir, "go.sh", "echo $$ > go.pid\n\"$FAULTY\"\necho exited >&2\n")
	writeScript(t, dir, "py.sh", "echo $$ > py.pid\n"+os.Getenv("FAULTY_PY_RUN")+"\necho exited >&2\n")
	for _, name := range []string{"go", "py"} {
		go pluginhost.Start(context.Background(), pluginhost.Spec{Name: name, Command: []string{"bash", name + ".sh"}, Dir: dir, Env: env}, nil)
	}
	time.Sleep(2 * time.Minute)
}

// Before, a plugin behind a wrapper that does not exec outlived a SIGKILLed host until it
// finished loading (25 s in the fault campaign): the kernel's parent-death signal reaches
// only the wrapper, and the SDKs watched their parent only once serving.
func TestHostKilledDuringSlowStarts(t *testing.T) {
	dir := t.TempDir()
	runPy, _ := filepath.Abs("../../tests/reliability/faulty_py/run.sh")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSlowHost$")
	cmd.Env = append(os.Environ(), "PLUGINHOST_HELPER_SLOW_HOST=1", "HELPER_DIR="+dir, "FAULTY="+faultyBin(t),
		"PYTHON="+venvPython(t), "FAULTY_PY_RUN="+runPy)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pgids := map[string]int{}
	for deadline := time.Now().Add(30 * time.Second); len(pgids) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the helper host did not start both plugins: %v", pgids)
		}
		for _, name := range []string{"go", "py"} {
			b, _ := os.ReadFile(filepath.Join(dir, name+".pid"))
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				pgids[name] = pid
			}
		}
	}
	// Wait until each plugin, still loading, watches the host's pipe (or long enough for
	// its interpreter to be up, for an SDK without the watch).
	for _, pg := range pgids {
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if pids, _ := pluginhost.GroupMembers(pg); watching(pids) {
				break
			}
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	for _, pg := range pgids {
		waitGroupGone(t, pg)
	}
}

// watching reports whether one of pids holds the host's pipe at fd 3 marked
// close-on-exec: what the SDKs' host watch does when it starts (the wrapper holds it
// without the flag).
func watching(pids []int) bool {
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/3")
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "flags:"); ok {
				if flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64); err == nil && flags&syscall.O_CLOEXEC != 0 {
					return true
				}
			}
		}
	}
	return false
}
