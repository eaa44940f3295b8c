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
)

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/bash\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitGroupGone polls until process group pgid has no live member, for at most 30 s
// (a bound on a hang, generous so that a loaded machine does not fail it).
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pids, err := pluginhost.GroupMembers(pgid)
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has live members %v 30 s after the kill", pgid, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestChecksumMismatchRefusedBeforeStart(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	script := writeScript(t, dir, "plugin.sh", `touch "$MARKER"; exec "$BEEPER"`+"\n")
	env := map[string]string{"MARKER": marker, "BEEPER": beeperBin(t)}
	good, err := pluginhost.HashFile(script)
	if err != nil {
		t.Fatal(err)
	}
	const bad = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

	_, err = pluginhost.Start(context.Background(), pluginhost.Spec{Name: "pinned", Source: script, Env: env, Checksum: bad}, nil)
	var ce *pluginhost.ChecksumError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v; want a ChecksumError", err)
	}
	for _, want := range []string{`"pinned"`, bad, good, "duplexmpe lock"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("the plugin process ran although its checksum did not match")
	}

	// The h1 pin of a command plugin's directory, wrong then right.
	cmdSpec := pluginhost.Spec{Name: "pinned-dir", Command: []string{"bash", "plugin.sh"}, Dir: dir, Env: env,
		Checksum: "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}
	if _, err := pluginhost.Start(context.Background(), cmdSpec, nil); !errors.As(err, &ce) || !strings.Contains(err.Error(), `"pinned-dir"`) {
		t.Fatalf("h1 mismatch: err = %v", err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("the command plugin ran although its dir hash did not match")
	}
	if cmdSpec.Checksum, err = pluginhost.HashDir(dir); err != nil {
		t.Fatal(err)
	}
	c := startBeeper(t, cmdSpec)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the correctly pinned plugin did not run: %v", err)
	}
	c.Kill()
	startBeeper(t, pluginhost.Spec{Name: "pinned", Source: script, Env: env, Checksum: good}).Kill()
}

func TestVersionPin(t *testing.T) {
	_, err := pluginhost.Start(context.Background(), pluginhost.Spec{Name: "b", Source: beeperBin(t), Version: "9.9.9"}, nil)
	if err == nil || !strings.Contains(err.Error(), `"0.1.0"`) || !strings.Contains(err.Error(), `"9.9.9"`) {
		t.Fatalf("err = %v; want a version mismatch naming both versions", err)
	}
	startBeeper(t, pluginhost.Spec{Version: "0.1.0"})
}

// wrapper starts the plugin behind bash, with a stray background child: the case where
// killing only the direct child leaves processes behind.
func wrapper(t *testing.T) pluginhost.Spec {
	dir := t.TempDir()
	writeScript(t, dir, "run.sh", "sleep 300 &\n\"$BEEPER\"\necho plugin exited >&2\n")
	return pluginhost.Spec{Name: "wrapped", Command: []string{"bash", "run.sh"}, Dir: dir, Env: map[string]string{"BEEPER": beeperBin(t)}}
}

func TestKillLeavesNoProcessBehindAWrapper(t *testing.T) {
	c := startBeeper(t, wrapper(t))
	pgid := c.Pid()
	if pids, _ := pluginhost.GroupMembers(pgid); len(pids) < 3 {
		t.Fatalf("group %d has %v; want bash, sleep and the plugin", pgid, pids)
	}
	c.Kill()
	waitGroupGone(t, pgid)
	if !c.Exited() {
		t.Fatal("Exited() is false after Kill")
	}
	if _, err := c.Describe(context.Background()); err == nil {
		t.Fatal("Describe after Kill succeeded")
	}
	c.Kill() // idempotent
}

func TestKillAllLeavesNoProcessBehind(t *testing.T) {
	a := startBeeper(t, wrapper(t))
	b := startBeeper(t, pluginhost.Spec{Name: "direct"})
	pa, pb := a.Pid(), b.Pid()
	pluginhost.KillAll()
	waitGroupGone(t, pa)
	waitGroupGone(t, pb)
	if !a.Exited() || !b.Exited() {
		t.Fatal("a plugin reports it is still running after KillAll")
	}
}

func TestFailedStartLeavesNothingBehind(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	writeScript(t, dir, "slow.sh", "echo $$ > pid\nsleep 300 &\nsleep 300\n")
	spec := pluginhost.Spec{Name: "slow", Command: []string{"./slow.sh"}, Dir: dir, StartTimeout: 500 * time.Millisecond}
	_, err := pluginhost.Start(context.Background(), spec, nil)
	if err == nil || !strings.Contains(err.Error(), `"slow" did not start`) {
		t.Fatalf("err = %v; want a start failure naming the plugin", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	waitGroupGone(t, pid)

	// Cancelling the context ends a start as well.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	spec.StartTimeout = time.Minute
	if _, err := pluginhost.Start(ctx, spec, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want the context's deadline", err)
	}
	b, _ = os.ReadFile(pidFile)
	pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	waitGroupGone(t, pid)
}

func TestMinimalEnvironmentAndLogFile(t *testing.T) {
	t.Setenv("DUPLEXMPE_TEST_SECRET", "leak")
	t.Setenv("CUDA_VISIBLE_DEVICES", "3")
	dir := t.TempDir()
	envOut := filepath.Join(dir, "env")
	writeScript(t, dir, "run.sh", "env > \"$ENV_OUT\"\nexec \"$BEEPER\"\n")
	logFile := filepath.Join(dir, "logs", "plugin.log")
	c := startBeeper(t, pluginhost.Spec{Name: "env", Command: []string{"./run.sh"}, Dir: dir, LogFile: logFile,
		Env: map[string]string{"ENV_OUT": envOut, "BEEPER": beeperBin(t), "MY_SETTING": "x"}})
	c.Kill()
	env, err := os.ReadFile(envOut)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PATH=", "MY_SETTING=x", "CUDA_VISIBLE_DEVICES=3", "DUPLEXMPE_PLUGIN="} {
		if !strings.Contains(string(env), want) {
			t.Errorf("plugin environment lacks %s:\n%s", want, env)
		}
	}
	if strings.Contains(string(env), "DUPLEXMPE_TEST_SECRET") {
		t.Errorf("plugin inherited a variable outside the minimal set:\n%s", env)
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "plugin address") {
		t.Errorf("log file lacks the plugin's own log lines:\n%s", log)
	}
}

func TestRestartAfterCrashMidStream(t *testing.T) {
	c := startBeeper(t, pluginhost.Spec{})
	ctx := context.Background()
	if err := c.Configure(ctx, map[string]any{"threshold": 0.3}); err != nil {
		t.Fatal(err)
	}
	m, _ := c.Model()
	conv, err := m.Start(ctx, sdk.ConversationStart{ID: "before"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conv.Step(ctx, tone(1920, 0.1)); err != nil {
		t.Fatal(err)
	}
	oldPid := c.Pid()
	if err := syscall.Kill(oldPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := conv.Step(ctx, tone(1920, 0.1)); err == nil {
		t.Fatal("Step succeeded on a killed plugin")
	} else if !strings.Contains(err.Error(), `"beeper"`) {
		t.Fatalf("error does not name the plugin: %v", err)
	}
	conv.Close()
	deadline := time.Now().Add(30 * time.Second)
	for !c.Exited() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !c.Exited() {
		t.Fatal("Exited() is false after SIGKILL")
	}

	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Pid() == oldPid || c.Exited() {
		t.Fatalf("restart: pid %d (was %d), exited %v", c.Pid(), oldPid, c.Exited())
	}
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Identity["threshold"] != "0.3" {
		t.Fatalf("restarted plugin did not get its config again: identity %v", info.Identity)
	}
	// The Model value from before the crash works on the new process.
	conv, err = m.Start(ctx, sdk.ConversationStart{ID: "after"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := conv.Step(ctx, tone(1920, 0.5))
	if err != nil || len(out.Samples) == 0 {
		t.Fatalf("after restart: %d samples, err %v; want the tone", len(out.Samples), err)
	}
	if err := conv.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestReattachToDebugModePlugin(t *testing.T) {
	cmd := exec.Command(beeperBin(t), "--debug")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	var reattach string
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if s, ok := strings.CutPrefix(lines.Text(), sdk.ReattachPrefix); ok {
			reattach = s
			break
		}
	}
	if reattach == "" {
		t.Fatal("the debug-mode plugin printed no reattach line")
	}

	ctx := context.Background()
	for round := range 2 { // a second host reattaches after the first one left
		c := startBeeper(t, pluginhost.Spec{Name: "warm", Reattach: reattach})
		if c.Pid() != 0 {
			t.Fatalf("a reattached plugin reports pid %d; it is not ours", c.Pid())
		}
		m, err := c.Model()
		if err != nil {
			t.Fatal(err)
		}
		conv, err := m.Start(ctx, sdk.ConversationStart{ID: "r"})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if out, err := conv.Step(ctx, tone(1920, 0.5)); err != nil || len(out.Samples) != 1920 {
			t.Fatalf("round %d: %d samples, err %v", round, len(out.Samples), err)
		}
		conv.Close()
		c.Kill()
		if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
			t.Fatalf("round %d: Kill on a reattached plugin stopped its process: %v", round, err)
		}
	}
	if _, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "warm", Reattach: `{"Protocol":"grpc"`}, nil); err == nil ||
		!strings.Contains(err.Error(), "--debug") {
		t.Fatalf("bad reattach JSON: err = %v", err)
	}
}

// TestHelperHost is a host process for TestHostKilledLeavesNothingBehind: it starts a
// plugin directly and one behind bash, prints both process groups, and waits to be
// killed.
func TestHelperHost(t *testing.T) {
	if os.Getenv("PLUGINHOST_HELPER_HOST") == "" {
		t.Skip("only run by TestHostKilledLeavesNothingBehind")
	}
	ctx := context.Background()
	direct, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "direct", Source: os.Getenv("BEEPER")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeScript(t, dir, "run.sh", "\"$BEEPER\"\necho plugin exited >&2\n")
	wrapped, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "wrapped", Command: []string{"bash", "run.sh"}, Dir: dir,
		Env: map[string]string{"BEEPER": os.Getenv("BEEPER")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("PGIDS " + strconv.Itoa(direct.Pid()) + " " + strconv.Itoa(wrapped.Pid()) + "\n")
	time.Sleep(time.Minute)
}

// A host killed with SIGKILL cannot clean up: the kernel kills its direct children
// (Pdeathsig), and a Go plugin behind a wrapper exits when its parent goes.
func TestHostKilledLeavesNothingBehind(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHost$", "-test.v")
	cmd.Env = append(os.Environ(), "PLUGINHOST_HELPER_HOST=1", "BEEPER="+beeperBin(t))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pgids []int
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if f := strings.Fields(lines.Text()); len(f) == 3 && f[0] == "PGIDS" {
			for _, s := range f[1:] {
				n, _ := strconv.Atoi(s)
				pgids = append(pgids, n)
			}
			break
		}
	}
	if len(pgids) != 2 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the helper host did not report its plugins")
	}
	for _, pg := range pgids {
		if pids, _ := pluginhost.GroupMembers(pg); len(pids) == 0 {
			t.Fatalf("plugin group %d is empty before the host was killed", pg)
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

// KillAll (Ctrl-C) during a slow start ends the start at once, not after StartTimeout.
func TestKillAllDuringStart(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "slow.sh", "echo $$ > pid\nsleep 300\n")
	errc := make(chan error, 1)
	go func() {
		_, err := pluginhost.Start(context.Background(), pluginhost.Spec{Name: "loading", Command: []string{"./slow.sh"}, Dir: dir}, nil)
		errc <- err
	}()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the plugin never started")
		}
		b, _ := os.ReadFile(filepath.Join(dir, "pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	go pluginhost.KillAll() // blocks until the start has ended
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), `"loading"`) {
			t.Fatalf("err = %v; want a failed start naming the plugin", err)
		}
	case <-time.After(30 * time.Second): // well below the 5 min StartTimeout
		t.Fatal("Start still waits 30 s after KillAll")
	}
	waitGroupGone(t, pid)
}

// A relative dir, a relative argv[0] and a bare name found on the plugin's own PATH.
func TestCommandResolution(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	bin := filepath.Join(root, "venv", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	writeScript(t, bin, "my-plugin", "exec \"$BEEPER\"\n")
	if err := os.Mkdir("work", 0o755); err != nil {
		t.Fatal(err)
	}
	writeScript(t, "work", "run.sh", "exec \"$BEEPER\"\n")
	env := map[string]string{"BEEPER": beeperBin(t)}

	startBeeper(t, pluginhost.Spec{Name: "rel", Command: []string{"./run.sh"}, Dir: "work", Env: env}).Kill()

	env["PATH"] = bin + ":/usr/bin:/bin"
	startBeeper(t, pluginhost.Spec{Name: "onpath", Command: []string{"my-plugin"}, Dir: "work", Env: env}).Kill()

	_, err := pluginhost.Start(context.Background(), pluginhost.Spec{Name: "missing", Command: []string{"no-such-plugin"}}, nil)
	if err == nil || !strings.Contains(err.Error(), `"missing"`) || !strings.Contains(err.Error(), "PATH") {
		t.Fatalf("err = %v; want not found on PATH, naming the plugin", err)
	}
}
