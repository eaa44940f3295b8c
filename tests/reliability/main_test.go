// Package reliability is the suite `make test-reliability` runs against the built
// harness, as an operator of long runs would: duplexmpe killed at random points and
// resumed, compared with an uninterrupted run; fault plugins (panic, hang, wedge,
// garbage, flood, slow start, sys.exit) in one evaluation; and the catalogue of damaged
// inputs. Every check counts what was lost, what differs, which processes outlived
// their host and which temporary files were left. docs/reliability.md has the figures.
//
// It runs only with DUPLEXMPE_RELIABILITY=1 (it takes minutes); `go test ./...` skips
// it. DUPLEXMPE_RELIABILITY_TRIALS and DUPLEXMPE_RELIABILITY_SEED set the kill trials
// (12, seed 1); DUPLEXMPE_RELIABILITY_REPORT names a file the figures are appended to
// as JSON lines.
package reliability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

var root, _ = filepath.Abs("../..")

func TestMain(m *testing.M) {
	if os.Getenv("DUPLEXMPE_RELIABILITY") != "1" {
		fmt.Println("tests/reliability: skipped (it takes minutes); run `make test-reliability`")
		os.Exit(0)
	}
	code := m.Run()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

// bin is a built executable of the repository (make build).
func bin(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(root, "bin", rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run `make build` first (make test-reliability does)", p)
	}
	return p
}

// faultyBin is the Go fault plugin, built once.
func faultyBin(t testing.TB) string {
	t.Helper()
	return plugintest.BuildGo(t, "./faulty")
}

func venvPython(t testing.TB) string {
	t.Helper()
	p := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run `make deps-py` first", p)
	}
	return p
}

// scenarios writes the first n lines of the shipped scenarios (whole pairs) to
// dir/scenarios and returns that directory.
func scenarios(t testing.TB, dir string, n int) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "examples", "scenarios", "scenarios.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")[:n]
	out := filepath.Join(dir, "scenarios")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "scenarios.jsonl"), []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// scenarioIDs lists the scenario ids of a scenarios file, in order.
func scenarioIDs(t testing.TB, dir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "scenarios.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s struct {
			ID string `json:"scenario_id"`
		}
		if json.Unmarshal(sc.Bytes(), &s) == nil && s.ID != "" {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// invocation is one duplexmpe command, with its own TMPDIR: the host passes TMPDIR to
// its plugins, so every process of the invocation is found by it afterwards.
type invocation struct {
	cmd    *exec.Cmd
	tmp    string
	out    bytes.Buffer
	start  time.Time
	waited bool
	err    error
}

func start(t testing.TB, dir string, args ...string) *invocation {
	t.Helper()
	tmp, err := os.MkdirTemp(dir, "tmp-")
	if err != nil {
		t.Fatal(err)
	}
	inv := &invocation{tmp: tmp, cmd: exec.Command(bin(t, "duplexmpe"), args...)}
	inv.cmd.Dir = dir
	inv.cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	inv.cmd.Stdout, inv.cmd.Stderr = &inv.out, &inv.out
	inv.start = time.Now()
	if err := inv.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return inv
}

func (inv *invocation) wait() error {
	if !inv.waited {
		inv.err = inv.cmd.Wait()
		inv.waited = true
	}
	return inv.err
}

// duplexmpe runs one command to its end: exit status, output, seconds.
func duplexmpe(t testing.TB, dir string, args ...string) (int, string, float64, *invocation) {
	t.Helper()
	inv := start(t, dir, args...)
	err := inv.wait()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	return code, inv.out.String(), time.Since(inv.start).Seconds(), inv
}

// survivors lists the live processes of the invocation (by their TMPDIR), the host
// excluded once it has exited.
func (inv *invocation) survivors() []string {
	// The host gives its plugins a root of its own under its TMPDIR (pluginhost.RunRoot).
	want, under := []byte("TMPDIR="+inv.tmp+"\x00"), []byte("TMPDIR="+inv.tmp+"/")
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || (!bytes.Contains(env, want) && !bytes.Contains(env, under)) {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		out = append(out, fmt.Sprintf("%d (%s)", pid, strings.TrimSpace(string(comm))))
	}
	return out
}

// orphans waits up to grace for the invocation's processes to be gone and returns those
// still alive (and kills them, so that one failure does not spoil the next checks).
func (inv *invocation) orphans(grace time.Duration) []string {
	deadline := time.Now().Add(grace)
	for {
		left := inv.survivors()
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				pid, _ := strconv.Atoi(strings.Fields(p)[0])
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tempFiles lists the temporary files the atomic writers left under dir.
func tempFiles(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), "tmp-") && filepath.Dir(path) == dir {
			return fs.SkipDir // an invocation's TMPDIR
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp") {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// report appends one JSON line of figures to DUPLEXMPE_RELIABILITY_REPORT, if set, and
// logs it.
func report(t *testing.T, figures map[string]any) {
	t.Helper()
	figures["test"] = t.Name()
	b, _ := json.Marshal(figures)
	t.Logf("figures: %s", b)
	if path := os.Getenv("DUPLEXMPE_RELIABILITY_REPORT"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.Write(append(b, '\n'))
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
