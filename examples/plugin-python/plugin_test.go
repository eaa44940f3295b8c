package pluginpython_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
)

const (
	rate  = 16000
	frame = 1280
)

// spec runs the example exactly as a run file would: the run.sh wrapper, which execs the
// repository's .venv Python on plugin.py.
func spec(t testing.TB) pluginhost.Spec {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	venvPython := filepath.Join(dir, "..", "..", ".venv", "bin", "python")
	if _, err := os.Stat(venvPython); err != nil {
		t.Skipf("the Python plugin needs the repository's .venv (%s is missing): run `make deps-py` first", venvPython)
	}
	return pluginhost.Spec{Name: "speaker", Command: []string{"./run.sh"}, Dir: dir, StartTimeout: time.Minute}
}

// syncBuffer collects the host's hclog output, which plugin log lines are copied into.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func start(t testing.TB, logs *syncBuffer) *pluginhost.Client {
	t.Helper()
	var logger hclog.Logger
	if logs != nil {
		logger = hclog.New(&hclog.LoggerOptions{Name: "host", Output: logs, Level: hclog.Trace, JSONFormat: true})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, spec(t), logger)
	if err != nil {
		t.Fatalf("starting the Python example through the host: %v", err)
	}
	t.Cleanup(c.Kill)
	return c
}

func constant(v float32) []float32 {
	s := make([]float32, frame)
	for i := range s {
		s[i] = v
	}
	return s
}

func TestDescribeConfigureConverse(t *testing.T) {
	c := start(t, nil)
	ctx := context.Background()

	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "speaker" || info.Version != "0.2.0" || info.ProtocolVersion != sdk.ProtocolVersion {
		t.Errorf("Describe = %q %q protocol %d, want speaker 0.2.0 protocol %d", info.Name, info.Version, info.ProtocolVersion, sdk.ProtocolVersion)
	}
	if strings.Join(info.Kinds, ",") != "model" {
		t.Errorf("kinds = %v, want [model]", info.Kinds)
	}
	fields := map[string]sdk.ConfigField{}
	for _, f := range info.Config {
		fields[f.Name] = f
	}
	if f := fields["threshold"]; f.Type != sdk.TypeNumber || f.Default != 0.05 {
		t.Errorf("config field threshold = %+v, want a number defaulting to 0.05", f)
	}
	if len(fields) != 3 || fields["answer"].Type != sdk.TypeString {
		t.Errorf("config schema has %d fields, want threshold, pause_ms, answer: %+v", len(fields), info.Config)
	}

	err = c.Configure(ctx, map[string]any{"threshold": 5.0, "pause_ms": 700.0})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "threshold = 5") {
		t.Fatalf("Configure(threshold 5) = %v, want InvalidArgument naming threshold", err)
	}
	answer := "The museum opens at nine tomorrow."
	if err := c.Configure(ctx, map[string]any{"threshold": 0.1, "pause_ms": 160.0, "answer": answer}); err != nil {
		t.Fatal(err)
	}
	info, err = c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Identity["answer"] != answer || !strings.HasPrefix(info.Identity["flite"], "flite-2") {
		t.Errorf("identity after Configure = %v, want the answer and flite's version", info.Identity)
	}

	model, err := c.Model()
	if err != nil {
		t.Fatal(err)
	}
	conv, err := model.Start(ctx, sdk.ConversationStart{ID: "c1", Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if f := conv.Format(); f != (sdk.Format{InputRate: rate, OutputRate: rate, FrameSize: frame}) {
		t.Fatalf("format = %+v", f)
	}
	// Quiet, two loud frames (someone speaks), then quiet: two quiet frames (160 ms)
	// later, on frame 5, it starts saying its sentence.
	inputs := [][]float32{constant(0), constant(0), constant(0.5), constant(-0.5)}
	for range 70 {
		inputs = append(inputs, constant(0))
	}
	var said []float32
	for i, in := range inputs {
		out, err := conv.Step(ctx, in)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if i < 5 && len(out.Samples) > 0 {
			t.Errorf("frame %d: %d output samples before the pause was over", i, len(out.Samples))
		}
		if (out.Text == "answer") != (i == 5) {
			t.Errorf("frame %d: text %q; want \"answer\" on frame 5 only", i, out.Text)
		}
		said = append(said, out.Samples...)
	}
	// What it says is speech to the harness: Silero, the VAD that scores every model,
	// finds most of the sentence.
	det, err := vad.Open(vad.Options{})
	if err != nil {
		t.Skipf("no VAD here (%v): run make deps", err)
	}
	defer det.Close()
	eps, err := det.Episodes(audio.PCM{Samples: said, Rate: rate}, protocol.DefaultVAD())
	if err != nil {
		t.Fatal(err)
	}
	var speech float64
	for _, e := range eps {
		speech += e.Duration()
	}
	if total := float64(len(said)) / rate; total < 1 || speech < 0.6*total {
		t.Errorf("Silero finds %.2f s of speech in the %.2f s answer (%v)", speech, total, eps)
	}

	// The SDK enforces the frame size: a short frame is refused with InvalidArgument.
	_, err = conv.Step(ctx, make([]float32, frame-1))
	if err == nil {
		t.Fatal("a frame of 1279 samples was accepted")
	}
	if err := conv.Close(); err != nil && status.Code(err) != codes.InvalidArgument {
		t.Logf("close after a refused frame: %v", err)
	}
}

func TestLogsReachTheHost(t *testing.T) {
	logs := &syncBuffer{}
	c := start(t, logs)
	if err := c.Configure(context.Background(), map[string]any{"threshold": 0.2}); err != nil {
		t.Fatal(err)
	}
	c.Kill()
	out := logs.String()
	// hclog JSON lines from Python become host log entries at their own level, with
	// their keys.
	for _, want := range []string{
		`"@level":"info","@message":"plugin serving"`,
		`"kinds":"model"`,
		`"mtls":true`,
		`"@message":"configured"`,
		`"threshold":0.2`,
		`"@message":"plugin stopping: shutdown requested"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("host log lacks %s; it has:\n%s", want, out)
		}
	}
}

// TestStdioReachesTheHost runs the SDK's own test fixture (sdk/python/tests) under the
// host: what Python prints after the handshake (print, sys.stderr, raw writes to fd 1)
// arrives through go-plugin's GRPCStdio as host log lines, and every kind the fixture
// serves answers through the host's sdk types.
func TestStdioReachesTheHost(t *testing.T) {
	s := spec(t)
	s.Name = "fixture"
	s.Command = []string{filepath.Join("..", "..", ".venv", "bin", "python"), filepath.Join("..", "..", "sdk", "python", "tests", "fixture_plugin.py")}
	logs := &syncBuffer{}
	logger := hclog.New(&hclog.LoggerOptions{Name: "host", Output: logs, Level: hclog.Trace, JSONFormat: true})
	ctx := context.Background()
	c, err := pluginhost.Start(ctx, s, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	if got := strings.Join(c.Kinds(), ","); got != "tts,asr,judge,llm" {
		t.Errorf("kinds = %s", got)
	}
	if err := c.Configure(ctx, map[string]any{"greeting": "hello from python"}); err != nil {
		t.Fatal(err)
	}
	tts, err := c.TTS()
	if err != nil {
		t.Fatal(err)
	}
	clip, err := tts.Synthesize(ctx, "abc", "a")
	if err != nil {
		t.Fatal(err)
	}
	if clip.Rate != 8000 || len(clip.Samples) != 3 || clip.Samples[2] != 0.25 {
		t.Errorf("Synthesize = %+v", clip)
	}
	asr, err := c.ASR()
	if err != nil {
		t.Fatal(err)
	}
	if text, err := asr.Transcribe(ctx, sdk.Audio{Samples: make([]float32, 160), Rate: 16000}, ""); err != nil || text != "160 samples at 16000 Hz" {
		t.Errorf("Transcribe = %q, %v", text, err)
	}
	// 12 MB each way, past gRPC's 4 MiB default, through go-plugin's P-521 mTLS.
	const big = 3_000_000
	if clip, err := tts.Synthesize(ctx, strings.Repeat("x", big), "a"); err != nil || len(clip.Samples) != big {
		t.Errorf("Synthesize of %d samples: %d samples, %v", big, len(clip.Samples), err)
	}
	if text, err := asr.Transcribe(ctx, sdk.Audio{Samples: make([]float32, big), Rate: 16000}, ""); err != nil || text != "3000000 samples at 16000 Hz" {
		t.Errorf("Transcribe of %d samples = %q, %v", big, text, err)
	}
	if _, err := c.Model(); err == nil {
		t.Error("the fixture serves no model, but Model() succeeded")
	}
	c.Kill()
	// Each line arrives once, on its own stream (the host's SyncStdout/SyncStderr), not
	// as stray stderr text.
	seen := map[string]string{}
	for _, line := range strings.Split(logs.String(), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		msg, _ := e["@message"].(string)
		stream, _ := e["stream"].(string)
		if strings.Contains(msg, "hello from python") || msg == "raw fd 1" {
			if prev, dup := seen[msg]; dup {
				t.Errorf("%q logged twice (streams %s and %s)", msg, prev, stream)
			}
			seen[msg] = stream
		}
	}
	want := map[string]string{"stdout: hello from python": "stdout", "stderr: hello from python": "stderr", "raw fd 1": "stdout"}
	for msg, stream := range want {
		if seen[msg] != stream {
			t.Errorf("%q arrived on stream %q, want %q; host log:\n%s", msg, seen[msg], stream, logs.String())
		}
	}
}

// TestKillLeavesNoPython starts the plugin through the run.sh shell wrapper and checks
// that after Kill nothing of it is alive: not the Python process, not anything else in
// its process group. The plugin stops through go-plugin's graceful Shutdown (its own
// log line says so), not through the SIGKILL fallback.
func TestKillLeavesNoPython(t *testing.T) {
	logs := &syncBuffer{}
	c := start(t, logs)
	pid := c.Pid()
	if pid <= 0 {
		t.Fatalf("pid = %d", pid)
	}
	exe, err := os.Readlink(filepath.Join("/proc", itoa(pid), "exe"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(filepath.Base(exe), "python") {
		t.Fatalf("the plugin process runs %s, want python (run.sh should exec it)", exe)
	}
	members, err := pluginhost.GroupMembers(pid)
	if err != nil || len(members) == 0 {
		t.Fatalf("process group %d before Kill: %v, %v", pid, members, err)
	}

	began := time.Now()
	c.Kill()
	t.Logf("Kill took %v", time.Since(began))

	members, err = pluginhost.GroupMembers(pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != 0 {
		t.Errorf("after Kill, process group %d still has %v", pid, members)
	}
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Errorf("after Kill, pid %d still exists (kill 0: %v)", pid, err)
	}
	if !strings.Contains(logs.String(), "plugin stopping: shutdown requested") {
		t.Errorf("the plugin did not stop through Shutdown; host log:\n%s", logs.String())
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// BenchmarkStep measures one lockstep frame round trip host -> Python -> host (80 ms of
// 16 kHz audio in, the reply out) through the real host and gRPC with mTLS.
func BenchmarkStep(b *testing.B) {
	c := start(b, nil)
	ctx := context.Background()
	model, err := c.Model()
	if err != nil {
		b.Fatal(err)
	}
	conv, err := model.Start(ctx, sdk.ConversationStart{ID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer conv.Close()
	in := constant(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := conv.Step(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/frame")
}

// BenchmarkStart measures starting the Python plugin through run.sh to a finished
// handshake and Describe, then Kill.
func BenchmarkStart(b *testing.B) {
	for i := 0; i < b.N; i++ {
		c := start(b, nil)
		c.Kill()
	}
}
