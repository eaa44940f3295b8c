package main

import (
	"context"
	"encoding/binary"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/plugins/internal/adaptertest"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// The upstream tier (`make test-adapters`): moshi-ws against Kyutai's real moshi.server
// (moshi from PyPI, as plugins/moshi/requirements.txt pins it), started by the test on the
// tiny random checkpoint of plugins/moshi/tests_real/tiny_moshi.py through
// plugins/moshi/tests_real/moshi_server_tee.py, which records what the server decoded and
// sent. Skipped unless DUPLEXMPE_ADAPTERS_PYTHON names a Python with torch and moshi.

// realServer is one running moshi.server.
type realServer struct {
	url  string
	tee  string // the per-connection records
	cmd  *exec.Cmd
	logf string
}

var (
	hubOnce sync.Once
	hubDir  string
)

// sharedHub is one Hugging Face cache for the package's servers: the first one writes the
// tiny checkpoint into it.
func sharedHub(t *testing.T) string {
	hubOnce.Do(func() {
		dir, err := os.MkdirTemp("", "moshi-ws-hub-")
		if err != nil {
			t.Fatal(err)
		}
		hubDir = dir
	})
	return hubDir
}

func startRealServer(t *testing.T, extra ...string) *realServer {
	t.Helper()
	python := adaptertest.Python(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	s := &realServer{url: "ws://127.0.0.1:" + strconv.Itoa(port) + "/api/chat", tee: filepath.Join(dir, "tee"), logf: filepath.Join(dir, "server.log")}
	args := append([]string{"../moshi/tests_real/moshi_server_tee.py", "--hub", sharedHub(t), "--tee", s.tee,
		"--port", strconv.Itoa(port)}, extra...)
	log, err := os.Create(s.logf)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(python, args...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { s.cmd.Wait(); log.Close(); close(exited) }()
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGCONT)
		s.cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatalf("moshi.server exited: %s", s.logTail())
		default:
		}
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
			c.Close()
			return s
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("moshi.server did not listen within 5 min: %s", s.logTail())
	return nil
}

func (s *realServer) logTail() string {
	b, _ := os.ReadFile(s.logf)
	return string(b[max(0, len(b)-3000):])
}

// decoded is the PCM the server handed its Opus encoder in its first connection.
func (s *realServer) decoded(t *testing.T) []float32 { return s.decodedIn(t, 1) }

// decodedIn is the same for connection n (from 1).
func (s *realServer) decodedIn(t *testing.T, n int) []float32 {
	t.Helper()
	return readF32(t, filepath.Join(s.tee, "conn-"+strconv.Itoa(n), "output.f32"))
}

// heard is the PCM the server decoded from the plugin's stream in its first connection.
func (s *realServer) heard(t *testing.T) []float32 {
	t.Helper()
	return readF32(t, filepath.Join(s.tee, "conn-1", "input.f32"))
}

func readF32(t *testing.T, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x
}

// centered is x less its mean (Opus drops the DC of the tiny model's audio).
func centered(x []float32) []float32 {
	var m float64
	for _, v := range x {
		m += float64(v)
	}
	m /= float64(max(len(x), 1))
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(float64(v) - m)
	}
	return y
}

// alignment finds where the window ref[from:from+n] of the server's audio sits in got:
// got[from+lag+i] ~ ref[from+i], best over lags in [lo, hi].
func alignment(ref, got []float32, from, n, lo, hi int) (float64, int) {
	start := max(0, from+lo)
	a := centered(ref[from : from+n])
	b := centered(got[start:min(len(got), from+hi+n)])
	c, at := correlation(a, b, 0, from+hi-start)
	return c, start + at - from
}

// steps plays frames straight to the plugin's model (no session) and returns the steps'
// outputs; it stops at the first error.
func steps(t *testing.T, m sdk.Model, frames [][]float32) ([]sdk.Output, error) {
	t.Helper()
	ctx := context.Background()
	conv, err := m.Start(ctx, sdk.ConversationStart{ID: "real"})
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	var outs []sdk.Output
	for _, f := range frames {
		o, err := conv.Step(ctx, f)
		if err != nil {
			return outs, err
		}
		outs = append(outs, o)
	}
	return outs, nil
}

func speechFrames(t *testing.T, seconds float64) [][]float32 {
	x := speech(t, seconds)
	n := int(seconds * rate / frameSize)
	frames := make([][]float32, n)
	for k := range frames {
		frames[k] = x[k*frameSize : (k+1)*frameSize]
	}
	return frames
}

// A shipped conversation, through the real plugin process and the harness's session, to
// the real server at its default settings (paced, waiting for answers): the recorded
// audio is the server's own decode, where the in-process adapter would have put it
// (reply to frame k, the server's frame k-1, audible from (k+1)*80 ms) plus the codec's
// 6.5 ms, from its first frame to the end of the session.
func TestUpstreamServerShippedConversation(t *testing.T) {
	srv := startRealServer(t, "--mark-frames")
	conv := adaptertest.Shipped(t, adaptertest.ShortestShipped)
	_, m := startPlugin(t, map[string]any{"url": srv.url})
	began := time.Now()
	rec := adaptertest.Play(t, m, conv, 1)
	wall := time.Since(began)
	adaptertest.CheckPlayed(t, conv, rec)
	if heard := len(srv.heard(t)) / frameSize; heard != rec.Frames {
		t.Errorf("the server decoded %d frames of the %d sent", heard, rec.Frames)
	}
	ref, got := srv.decoded(t), rec.Audible.Samples
	if len(ref) != (rec.Frames-1)*frameSize {
		t.Fatalf("the server decoded %d samples for %d frames", len(ref), rec.Frames)
	}
	// Its first frame is there (trusting the declared 80 ms pre-skip would drop it), less
	// the codec's delay, audible from 160 ms on: the reply to frame 1. The playback buffer
	// then runs 156 samples dry, so the rest plays 6.5 ms later than in-process.
	const codec = 156 // 6.5 ms at 24 kHz
	if c, at := alignment(ref, got, 0, frameSize-codec, frameSize, 3*frameSize); c < 0.6 || at < 2*frameSize-6 || at > 2*frameSize+6 {
		t.Errorf("the server's first frame: correlation %.3f at lag %d, want %d", c, at, 2*frameSize)
	}
	want := 2*frameSize + codec
	// ...and every stretch up to the last one the session could record.
	last := len(got) - want - 2*rate
	for _, from := range []int{rate, len(ref) / 2, last} {
		c, at := alignment(ref, got, from, 2*rate, want-frameSize, want+frameSize)
		if c < 0.8 || at < want-6 || at > want+6 {
			t.Errorf("server audio at %.1f s: correlation %.3f at lag %d, want %d (one frame is %d)", float64(from)/rate, c, at, want, frameSize)
		}
		t.Logf("server audio at %.1f s recorded at lag %d (%.2f ms after the in-process position), correlation %.3f",
			float64(from)/rate, at, float64(at-2*frameSize)/rate*1000, c)
	}
	t.Logf("%d frames (%.1f s) in %v wall", rec.Frames, float64(rec.Frames)*frameTime.Seconds(), wall.Round(time.Millisecond))
}

// The server's real codec delay, measured: with nothing dropped, its audio comes back
// 156 samples (6.5 ms) late, though its stream declares 3840 at 48 kHz (80 ms); trusting
// the declaration brings it back 1764 samples (73.5 ms) early; at the default
// codec_delay_ms (6.5) it comes back where the server put it. One server, one connection
// per setting.
func TestUpstreamServerCodecDelay(t *testing.T) {
	frames := speechFrames(t, 6)
	srv := startRealServer(t, "--mark-frames")
	for i, c := range []struct {
		delay float64
		want  int
	}{{0, 156}, {-1, 156 - frameSize}, {6.5, 0}} {
		_, m := startPlugin(t, map[string]any{"url": srv.url, "pace": false, "codec_delay_ms": c.delay})
		outs, err := steps(t, m, frames)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := joined(outs)
		ref := srv.decodedIn(t, i+1)
		corr, at := alignment(ref, got, frameSize, 3*rate, -2000, 2000)
		if corr < 0.8 || at < c.want-6 || at > c.want+6 {
			t.Errorf("codec_delay_ms %v: the server's audio comes back at lag %d (correlation %.3f), want %d", c.delay, at, corr, c.want)
		}
		t.Logf("codec_delay_ms %v: the server's audio comes back %d samples (%.2f ms) after it was decoded, correlation %.3f",
			c.delay, at, float64(at)/rate*1000, corr)
	}
}

// A server slower than real time (120 ms per 80 ms frame) at the default settings: every
// step waits for its answer, so nothing is late and nothing is lost at the end.
func TestUpstreamServerSlowerThanRealTime(t *testing.T) {
	srv := startRealServer(t, "--mark-frames", "--frame-delay-ms", "120")
	_, m := startPlugin(t, map[string]any{"url": srv.url})
	frames := speechFrames(t, 8)
	outs, err := steps(t, m, frames)
	if err != nil {
		t.Fatal(err)
	}
	for k, o := range outs {
		if want := lockstepSamples(k); len(o.Samples) != want {
			t.Errorf("step %d returned %d samples, want %d", k, len(o.Samples), want)
		}
	}
	got, _ := joined(outs)
	ref := srv.decoded(t)
	if len(ref) != (len(frames)-1)*frameSize || len(got) != len(ref)-156 {
		t.Errorf("the server decoded %d samples, the plugin returned %d; want %d and 156 fewer", len(ref), len(got), (len(frames)-1)*frameSize)
	}
	last := len(got) - rate
	if c, at := alignment(ref, got, last, rate/2, -200, 200); c < 0.8 || at != 0 {
		t.Errorf("the last half second: correlation %.3f at lag %d, want 0", c, at)
	}
}

// A starved server (stopped with SIGSTOP after 20 frames: it holds the connection and
// answers nothing) fails the conversation with how far behind it was; with on_behind =
// "mark" the conversation goes on and the text channel says so.
func TestUpstreamServerStarved(t *testing.T) {
	frames := speechFrames(t, 5)
	for _, mode := range []string{"fail", "mark"} {
		srv := startRealServer(t)
		_, m := startPlugin(t, map[string]any{"url": srv.url, "pace": false, "step_wait_ms": 5000.0,
			"max_behind_frames": 3.0, "on_behind": mode, "drain_ms": 500.0})
		ctx := context.Background()
		conv, err := m.Start(ctx, sdk.ConversationStart{ID: "starved"})
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		var stepErr error
		for k, f := range frames {
			if k == 20 {
				srv.cmd.Process.Signal(syscall.SIGSTOP)
			}
			o, err := conv.Step(ctx, f)
			if err != nil {
				stepErr = err
				break
			}
			text.WriteString(o.Text)
		}
		conv.Close()
		srv.cmd.Process.Signal(syscall.SIGCONT)
		switch mode {
		case "fail":
			if stepErr == nil {
				t.Fatal("a stopped server was not reported")
			}
			frame, answered, _, behind := behindError(t, stepErr)
			if behind != 4 || answered > 20 || answered < 17 || frame > 30 {
				t.Errorf("reported at frame %d with %d answered, %d behind: %v", frame, answered, behind, stepErr)
			}
			t.Logf("fail: %v", stepErr)
		case "mark":
			if stepErr != nil {
				t.Fatalf("on_behind = mark failed: %v", stepErr)
			}
			if !strings.Contains(text.String(), "[moshi-ws: the server is ") {
				t.Errorf("no mark in the text channel: %q", text.String())
			}
		}
	}
}
