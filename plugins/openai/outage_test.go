package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/cli"
	"github.com/duplexmpe/duplexmpe/plugins/internal/hosted/standintest"
	"github.com/duplexmpe/duplexmpe/plugins/standin"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// standinEnv makes the test binary a stand-in server process (serveStandin), so that a
// test can kill the service its judge talks to.
const standinEnv = "DUPLEXMPE_TEST_STANDIN_ADDR"

// serveStandin runs the OpenAI stand-in at the address in standinEnv until killed. It
// prints "ready", then "chat N" as it takes the N-th chat request; with
// DUPLEXMPE_TEST_STANDIN_HOLD_AFTER=N, requests after the N-th are held unanswered, so a
// test that kills the process on "chat N" does so with exactly N answered.
func serveStandin() {
	hold, _ := strconv.Atoi(os.Getenv("DUPLEXMPE_TEST_STANDIN_HOLD_AFTER"))
	var chats atomic.Int64
	watch := func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/chat/completions" {
				inner.ServeHTTP(w, r)
				return
			}
			n := chats.Add(1)
			if hold > 0 && n > int64(hold) {
				select {} // held until the process is killed
			}
			inner.ServeHTTP(w, r)
			w.(http.Flusher).Flush() // answered before it is counted
			fmt.Printf("chat %d\n", n)
		})
	}
	l, err := net.Listen("tcp", os.Getenv(standinEnv))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	fmt.Println("ready")
	srv := &http.Server{Handler: watch(standin.NewOpenAI("")), ReadHeaderTimeout: time.Minute}
	fmt.Println("error:", srv.Serve(l))
	os.Exit(2)
}

// standinProcess is a stand-in server in a process of its own.
type standinProcess struct {
	cmd   *exec.Cmd
	chats chan int
}

// startStandin starts the stand-in at addr; holdAfter > 0 holds chat requests after
// that many.
func startStandin(t *testing.T, addr string, holdAfter int) *standinProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), standinEnv+"="+addr, fmt.Sprintf("DUPLEXMPE_TEST_STANDIN_HOLD_AFTER=%d", holdAfter))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &standinProcess{cmd: cmd, chats: make(chan int, 1024)}
	t.Cleanup(p.kill)
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("the stand-in process did not start: %q", sc.Text())
	}
	go func() {
		for sc.Scan() {
			var n int
			if _, err := fmt.Sscanf(sc.Text(), "chat %d", &n); err == nil {
				p.chats <- n
			}
		}
		close(p.chats)
	}()
	return p
}

func (p *standinProcess) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

// freeAddr is a local address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

const outageRunFile = `
plugin "flite" { source = %q }
plugin "talk" { source = %q }
plugin "pocketsphinx" {
  source = %q
  config {
    fast = true
  }
}
plugin "lexical" { source = %q }
plugin "gpt" {
  source = %q
  config {
    base_url      = %q
    cache         = false
    retry_backoff = 0.01
    max_retries   = 1
    timeout       = 30
  }
}

dataset "one" {
  scenarios = "scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out       = "build/one"
}

evaluation "e" {
  dataset = dataset.one
  models  = [plugin.talk]
  asr     = plugin.pocketsphinx
  judge   = plugin.%s
  out     = "runs/e"
}
`

// outageRun writes a run file over the first shipped pair: flite speaks it, always-talk
// answers everywhere (the judge is asked about every window), pocketsphinx transcribes,
// and the evaluation's judge is judge ("lexical" or "gpt", this plugin at url).
func outageRun(t *testing.T, dir, url, judge string) string {
	t.Helper()
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("flite is not installed")
	}
	raw, err := os.ReadFile("../../examples/scenarios/scenarios.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(raw), "\n", 3)
	if err := os.MkdirAll(filepath.Join(dir, "scenarios"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scenarios", "scenarios.jsonl"), []byte(lines[0]+"\n"+lines[1]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "run.hcl")
	text := fmt.Sprintf(outageRunFile, plugintest.BuildGo(t, "../flite"), plugintest.BuildGo(t, "../always-talk"),
		plugintest.BuildGo(t, "../pocketsphinx"), plugintest.BuildGo(t, "../lexical-judge"), buildPlugin(t), url, judge)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// duplexmpe runs the CLI in dir and returns its exit code and output.
func duplexmpe(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	// A guard against a hang, not a measure: on a loaded machine a score takes minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	st := &cli.State{Ctx: ctx, Args: args, Env: map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")},
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getwd: func() (string, error) { return dir, nil }}
	return cli.Run(st), out.String()
}

// Issue 11 item 4, with this real plugin against the stand-in in a process of its own:
// the judge server is killed in the middle of `score`, which leaves the items it could
// not judge unscored (nothing saved or cached), names the judge and its error, writes
// the report and exits 1; with the server back, a second `score` completes them,
// reusing the verdicts given before the kill, and exits 0.
func TestKillingTheJudgeServerLeavesItemsUnscored(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole run with real plugins")
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	runFile := outageRun(t, dir, "http://"+addr+"/v1", "gpt")
	if code, out := duplexmpe(t, dir, "run", "--no-score", runFile); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}

	const answered = 3
	server := startStandin(t, addr, answered)
	go func() {
		for n := range server.chats {
			if n == answered {
				server.kill() // mid-score: requests after the third are in flight
				return
			}
		}
	}()
	code, out := duplexmpe(t, dir, "score", "runs/e")
	if code != 1 {
		t.Fatalf("score with the judge server killed: exit %d, want 1\n%s", code, out)
	}
	m := regexp.MustCompile(`(\d+) conversations unscored`).FindStringSubmatch(out)
	if m == nil || m[1] == "0" {
		t.Fatalf("no conversation is counted unscored:\n%s", out)
	}
	inOrder(t, out, `the judge plugin "gpt" failed`, "report: ", "Error: ", "unscored because a scorer failed", "duplexmpe score")
	report, err := os.ReadFile(filepath.Join(dir, "runs", "e", "report.md"))
	if err != nil || !strings.Contains(string(report), "unscored conversation") || !strings.Contains(string(report), `the judge plugin "gpt" failed`) {
		t.Errorf("the report does not name the unscored conversations (%v)", err)
	}
	items, _ := filepath.Glob(filepath.Join(dir, "runs", "e", "items", "*", "verdicts.json"))
	if unscored, _ := strconv.Atoi(m[1]); len(items) != 2-unscored {
		t.Errorf("%d items kept verdicts; with %d unscored of 2, want %d", len(items), unscored, 2-unscored)
	}

	// The judge cache holds the answers given before the kill (two of them may have been
	// the same question) and no failed call.
	cached := 0
	if raw, err := os.ReadFile(filepath.Join(dir, "runs", "e", "cache", "judgements.jsonl")); err == nil {
		cached = strings.Count(string(raw), "\n")
	}
	if cached < 1 || cached > answered {
		t.Errorf("the judge cache holds %d answers after %d were given and the rest failed", cached, answered)
	}

	startStandin(t, addr, 0)
	code, out = duplexmpe(t, dir, "score", "runs/e")
	if code != 0 {
		t.Fatalf("score with the server back: exit %d\n%s", code, out)
	}
	inOrder(t, out, "scored 2 conversations (", "judged (")
	if m := regexp.MustCompile(`(\d+) conversations unscored`).FindStringSubmatch(out); m != nil {
		t.Errorf("items still unscored with the server back:\n%s", out)
	}
	// Every cached answer is looked up at least once (a question asked twice counts twice).
	if m := regexp.MustCompile(`judged \((\d+) verdicts reused\)`).FindStringSubmatch(out); m == nil {
		t.Errorf("no count of reused verdicts:\n%s", out)
	} else if n, _ := strconv.Atoi(m[1]); n < cached {
		t.Errorf("%d verdicts reused, but %d were answered and cached before the kill:\n%s", n, cached, out)
	}
}

// score --judge on a scored run transcribes nothing: the hosted judge gets every
// question, the ASR none.
func TestScoreWithAnotherJudgeTranscribesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole run with real plugins")
	}
	s := standintest.NewOpenAI(t, "")
	dir := t.TempDir()
	runFile := outageRun(t, dir, s.URL+"/v1", "lexical")
	code, out := duplexmpe(t, dir, "run", runFile)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if m := regexp.MustCompile(`scorer calls: (\d+) transcribed`).FindStringSubmatch(out); m == nil || m[1] == "0" {
		t.Fatalf("the run transcribed nothing; the test would prove nothing:\n%s", out)
	}
	code, out = duplexmpe(t, dir, "score", "runs/e", "--judge", "gpt")
	if code != 0 {
		t.Fatalf("score --judge gpt: exit %d\n%s", code, out)
	}
	m := regexp.MustCompile(`scorer calls: 0 transcribed \((\d+) transcripts reused\), (\d+) judged`).FindStringSubmatch(out)
	if m == nil || m[1] == "0" || m[2] == "0" || s.Count("/v1/chat/completions") == 0 {
		t.Errorf("score --judge gpt transcribed, or judged nothing:\n%s", out)
	}
}

// inOrder checks that text contains each of want, in order.
func inOrder(t *testing.T, text string, want ...string) {
	t.Helper()
	rest := text
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("output lacks %q (in order):\n%s", w, text)
		}
		rest = rest[i+len(w):]
	}
}
