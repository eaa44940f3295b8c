package session_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/session"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/plugins/always-talk/speech"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// These tests run the scheduler against the baseline plugins as real processes over
// real gRPC, with the real Silero online detector.

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "session-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	build := exec.Command("go", "build", "-o", dir+"/", "../../plugins/silent", "../../plugins/always-talk", "../../plugins/random-talk", "../../plugins/pause-responder")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the baseline plugins:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	pluginhost.KillAll()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	detOnce sync.Once
	det     *vad.Detector
	detErr  error
)

func detector(t testing.TB) *vad.Detector {
	t.Helper()
	detOnce.Do(func() { det, detErr = vad.Open(vad.Options{}) })
	if detErr != nil {
		t.Fatalf("%v\n(these tests run the real Silero model: run `make deps` first)", detErr)
	}
	return det
}

func startModel(t testing.TB, name string, config map[string]any) (sdk.Model, *pluginhost.Client) {
	t.Helper()
	ctx := context.Background()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: name, Source: filepath.Join(binDir, name)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	if err := c.Configure(ctx, config); err != nil {
		t.Fatal(err)
	}
	m, err := c.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m, c
}

// speechConversation: every clip is a stretch of real (flite) speech at 16 kHz.
func speechConversation(t *testing.T, id string) session.Conversation {
	t.Helper()
	v, err := speech.Voice(16000)
	if err != nil {
		t.Fatal(err)
	}
	cut := func(from, secs float64) audio.PCM {
		a, b := int(from*16000), int((from+secs)*16000)
		return audio.PCM{Samples: v[a:b], Rate: 16000}
	}
	conv := session.Conversation{ID: id, Preamble: cut(0, 1.0)}
	labels := []string{protocol.LabelN1, protocol.LabelT, protocol.LabelN4Q, protocol.LabelN4R, protocol.LabelN3}
	for i, l := range labels {
		conv.Turns = append(conv.Turns, session.Turn{Index: i, Label: l, Speaker: "ABC"[i%3 : i%3+1], Text: "...", Audio: cut(1+float64(i), 1.0)})
	}
	return conv
}

func options(t testing.TB) session.Options {
	p := protocol.Defaults()
	p.TWaitCap = 6
	return session.Options{Params: p, VAD: protocol.DefaultVAD(), Detector: detector(t)}
}

func TestSilentPlugin(t *testing.T) {
	m, _ := startModel(t, "silent", map[string]any{})
	opts := options(t)
	rec, err := session.Run(context.Background(), m, speechConversation(t, "c-silent"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Failed() {
		t.Fatal(rec.Failure)
	}
	if rec.Format != speech.DefaultFormat {
		t.Errorf("format %+v", rec.Format)
	}
	// preamble 1 s, gap 0.5, N1 [1.5, 2.5), gap, T [3.0, 4.0); no onset: 4.0 + 5 = 9.0,
	// a multiple of 80 ms? 9.0/0.08 = 112.5 -> 9.04. N4_Q [9.04, 10.04), n4_gap 3:
	// N4_R [13.04, 14.04), N3 [14.54, 15.54), tail 2 -> 17.54 -> 220 frames = 17.6 s.
	want := [][2]float64{{1.5, 2.5}, {3.0, 4.0}, {9.04, 10.04}, {13.04, 14.04}, {14.54, 15.54}}
	for i, w := range want {
		got := rec.Timeline.Turns[i]
		if math.Abs(got.Start-w[0]) > 1e-9 || math.Abs(got.End-w[1]) > 1e-9 {
			t.Errorf("turn %d [%.4f, %.4f), want [%.4f, %.4f)", i, got.Start, got.End, w[0], w[1])
		}
	}
	if rec.Frames != 220 || len(rec.Audible.Samples) != 220*1920 {
		t.Errorf("%d frames, %d audible samples; want 220 and %d", rec.Frames, len(rec.Audible.Samples), 220*1920)
	}
	if len(rec.Episodes) != 0 || rec.TWait.Onset || rec.TWait.Ending != record.WaitNoOnset {
		t.Errorf("episodes %v, wait %+v: the silent model spoke", rec.Episodes, rec.TWait)
	}
	if rec.Latency.Frames != 220 || rec.Latency.Max <= 0 {
		t.Errorf("latency %+v", rec.Latency)
	}
	// Calibration through the scorer (section 5): no fresh onset, no presence, every
	// silence window silent, the N4 event not eligible (no onset in the gap).
	for _, ev := range score.Events(rec.Timeline, rec.Episodes, opts.Params) {
		switch {
		case ev.T != nil && (ev.T.FreshOnset || ev.T.Presence):
			t.Errorf("silent model: T verdict %+v", ev.T)
		case ev.Silence != nil && !ev.Silence.Pass():
			t.Errorf("silent model: %s window failed: %+v", ev.Label, ev.Silence)
		case ev.N4 != nil && ev.N4.Eligible:
			t.Errorf("silent model: N4 event eligible: %+v", ev.N4)
		}
	}
}

func TestAlwaysTalkPlugin(t *testing.T) {
	m, _ := startModel(t, "always-talk", map[string]any{"input_rate": 16000.0, "output_rate": 24000.0, "frame_ms": 160.0})
	opts := options(t)
	rec, err := session.Run(context.Background(), m, speechConversation(t, "c-talk"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Failed() {
		t.Fatal(rec.Failure)
	}
	// The audible waveform is the looped voice, delayed by exactly one frame.
	voice, _ := speech.Voice(24000)
	d := 3840 // 160 ms at 24 kHz
	for i := 0; i < len(rec.Audible.Samples); i++ {
		want := float32(0)
		if i >= d {
			want = voice[(i-d)%len(voice)]
		}
		if rec.Audible.Samples[i] != want {
			t.Fatalf("audible sample %d = %g, want %g", i, rec.Audible.Samples[i], want)
		}
	}
	// Already speaking when T ended, never silent: the cap (6 s) ends the wait at the
	// first 160 ms boundary at or after 4.0 + 6 = 10.0 s (10.08 since 10.0/0.16 = 62.5).
	if w := rec.TWait; !w.Onset || w.Ending != record.WaitCap || math.Abs(w.End-10.08) > 1e-9 {
		t.Errorf("T wait %+v, want onset, cap, end 10.08", w)
	}
	// Silero hears speech nearly all the time.
	var speechSecs float64
	for _, e := range rec.Episodes {
		speechSecs += e.Duration()
	}
	if frac := speechSecs / rec.Timeline.Duration; frac < 0.9 {
		t.Errorf("Silero found speech in %.2f of the always-talk output (episodes %v); want > 0.9", frac, rec.Episodes)
	}
	// The online detector's episodes equal the offline detector's on the recorded audio.
	offline, err := opts.Detector.Episodes(rec.Audible, opts.VAD)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(offline, rec.Episodes) {
		t.Errorf("online episodes %v, offline %v", rec.Episodes, offline)
	}
	// Calibration through the scorer (section 5): already speaking at tE (presence, no
	// fresh onset), speech in every silence window, the N4 event not eligible.
	n := map[string]int{}
	for _, ev := range score.Events(rec.Timeline, rec.Episodes, opts.Params) {
		n[ev.Label]++
		switch {
		case ev.T != nil && (ev.T.FreshOnset || !ev.T.Presence || ev.T.Outcome != "already-speaking"):
			t.Errorf("always-talk: T verdict %+v", ev.T)
		case ev.Silence != nil && ev.Silence.Silent():
			t.Errorf("always-talk: %s window silent: %+v", ev.Label, ev.Silence)
		case ev.N4 != nil && (ev.N4.Eligible || !ev.N4.SpokeDuringQuestion):
			t.Errorf("always-talk: N4 event %+v", ev.N4)
		}
	}
	if n["T"] != 1 || n["N1"] != 1 || n["N3"] != 1 || n["N4_Q"] != 1 {
		t.Errorf("scored events %v", n)
	}
}

func TestRandomTalkPluginIsSeeded(t *testing.T) {
	cfg := map[string]any{"burst_rate": 20.0, "mean_length": 1.5, "seed": 7.0}
	m, _ := startModel(t, "random-talk", cfg)
	opts := options(t)
	play := func(id string, seed int64) *record.Record {
		o := opts
		o.Seed = seed
		rec, err := session.Run(context.Background(), m, speechConversation(t, id), o)
		if err != nil || rec.Failed() {
			t.Fatalf("%v %v", err, rec.Failure)
		}
		return rec
	}
	a, b, c := play("c1", 1), play("c1", 1), play("c1", 2)
	if !reflect.DeepEqual(a.Audible, b.Audible) || !reflect.DeepEqual(a.Episodes, b.Episodes) {
		t.Error("the same conversation and seed gave different output")
	}
	if reflect.DeepEqual(a.Audible, c.Audible) {
		t.Error("another seed gave the same output")
	}
	if len(a.Episodes) == 0 {
		t.Error("random-talk at 20 bursts a minute said nothing in a 17 s conversation")
	}
}

// BenchmarkSilentConversation100s is the harness real-time factor: one 100 s conversation
// (preamble and turns of real speech) played to the silent plugin over real gRPC with the
// real online detector. Target: well under 1 s per op on one core.
func BenchmarkSilentConversation100s(b *testing.B) {
	m, c := startModel(b, "silent", map[string]any{})
	conv := longConversation(b)
	opts := options(b)
	b.ResetTimer()
	cpu0, plugin0 := cpuTime(), procCPU(c.Pid())
	defer func() {
		b.ReportMetric((cpuTime()-cpu0)/float64(b.N), "host-cpu-s/op")
		b.ReportMetric((procCPU(c.Pid())-plugin0)/float64(b.N), "plugin-cpu-s/op")
	}()
	for i := 0; i < b.N; i++ {
		rec, err := session.Run(context.Background(), m, conv, opts)
		if err != nil || rec.Failed() {
			b.Fatal(err, rec.Failure)
		}
		if i == 0 {
			b.ReportMetric(rec.Timeline.Duration, "audio-s/op")
		}
	}
}

// longConversation is 100 s of input with the default protocol values and a silent
// model: a 30 s preamble and 20 turns of 2.5 s (T and an N4 pair among them).
func longConversation(t testing.TB) session.Conversation {
	v, err := speech.Voice(16000)
	if err != nil {
		t.Fatal(err)
	}
	loop := speech.NewLoop(v, 0)
	conv := session.Conversation{ID: "long", Preamble: audio.PCM{Samples: loop.Next(30 * 16000), Rate: 16000}}
	labels := []string{"N1", "N2", "N3", "N1", "N2", "N4_Q", "N4_R", "N3", "N1", "T", "N2", "N3", "N1", "N2", "N3", "N1", "N2", "N3", "N1", "N2"}
	for i, l := range labels {
		conv.Turns = append(conv.Turns, session.Turn{Index: i, Label: l, Speaker: "ABC"[i%3 : i%3+1], Text: "...", Audio: audio.PCM{Samples: loop.Next(40000), Rate: 16000}})
	}
	return conv
}

// cpuTime is the user and system CPU time of this process so far (the host side: the
// scheduler, resampling, the detector, the gRPC client; not the plugin process).
func cpuTime() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// responder is an in-process model that speaks (the flite voice) in reply to frames
// [from, to) and is silent otherwise.
type responder struct {
	from, to int
	voice    []float32
}

func (r *responder) Start(context.Context, sdk.ConversationStart) (sdk.Conversation, error) {
	return &responderConv{r: r, loop: speech.NewLoop(r.voice, 0)}, nil
}

type responderConv struct {
	r    *responder
	loop *speech.Loop
	k    int
}

func (c *responderConv) Format() sdk.Format { return speech.DefaultFormat }
func (c *responderConv) Step(context.Context, []float32) (sdk.Output, error) {
	k := c.k
	c.k++
	if k < c.r.from || k >= c.r.to {
		return sdk.Output{}, nil
	}
	return sdk.Output{Samples: c.loop.Next(speech.FrameOutput(speech.DefaultFormat, k))}, nil
}
func (c *responderConv) Close() error { return nil }

// The endpoint rule of section 3 with the real Silero online detector: a response that
// starts after T and stops is waited for until t_end_silence of silence has been heard.
func TestEndpointWithSilero(t *testing.T) {
	voice, err := speech.Voice(24000)
	if err != nil {
		t.Fatal(err)
	}
	// T ends at 4.0 s (speechConversation). Replies to frames 56..80 play over
	// [4.56, 6.56): a 2 s response starting 0.56 s after T.
	m := &responder{from: 56, to: 81, voice: voice}
	rec, err := session.Run(context.Background(), m, speechConversation(t, "c-resp"), options(t))
	if err != nil || rec.Failed() {
		t.Fatal(err, rec.Failure)
	}
	if len(rec.Episodes) != 1 {
		t.Fatalf("episodes %v, want one", rec.Episodes)
	}
	ep := rec.Episodes[0]
	if ep.Start < 4.5 || ep.Start > 4.7 || ep.End < 6.3 || ep.End > 6.7 {
		t.Errorf("episode %+v, want about [4.56, 6.56)", ep)
	}
	w := rec.TWait
	// Silero's own end of speech plus 2 s of heard silence, at the next 80 ms boundary,
	// give or take one 32 ms window.
	if !w.Onset || w.Ending != record.WaitEndpoint || w.End < ep.End+2 || w.End > ep.End+2+0.08+0.04 {
		t.Errorf("T wait %+v with speech ending at %.3f, want the endpoint about 2 s later", w, ep.End)
	}
	if got := rec.Timeline.Turns[2].Start; got != w.End {
		t.Errorf("the turn after T starts at %.3f, the wait ended at %.3f", got, w.End)
	}
}

// Speech that stops shortly before T ends is not "already speaking": its episode stays
// open for merge_pause, but it ends before tE, so the model is silent at tE and the
// scheduler waits the whole onset window for a fresh onset, as the scorer will judge it.
func TestSpeechEndingBeforeTIsNoOnset(t *testing.T) {
	voice, err := speech.Voice(24000)
	if err != nil {
		t.Fatal(err)
	}
	// T is [3.0, 4.0); replies to frames 19..43 play over [1.6, 3.6).
	m := &responder{from: 19, to: 44, voice: voice}
	opts := options(t)
	rec, err := session.Run(context.Background(), m, speechConversation(t, "c-before"), opts)
	if err != nil || rec.Failed() {
		t.Fatal(err, rec.Failure)
	}
	if len(rec.Episodes) != 1 || rec.Episodes[0].End > 3.8 {
		t.Fatalf("episodes %v, want one ending near 3.6", rec.Episodes)
	}
	// 4.0 + 5 = 9.0 -> the 9.04 boundary.
	if w := rec.TWait; w.Onset || w.Ending != record.WaitNoOnset || math.Abs(w.End-9.04) > 1e-9 {
		t.Errorf("T wait %+v, want no onset, ending at 9.04", w)
	}
	for _, ev := range score.Events(rec.Timeline, rec.Episodes, opts.Params) {
		if ev.T != nil && (ev.T.Presence || ev.T.ActiveAtEnd) {
			t.Errorf("the scorer sees presence %+v; the scheduler and the scorer disagree", ev.T)
		}
	}
}

// procCPU is the user and system CPU time of process pid from /proc (0 if unreadable).
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; the fields after its ')' are plain.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64) // field 14 of the whole line
	stime, _ := strconv.ParseFloat(fields[12], 64) // field 15
	return (utime + stime) / 100                   // USER_HZ is 100 on Linux
}

// A missed per-frame deadline over real gRPC fails the conversation with that reason, and
// the plugin serves the next conversation normally.
func TestFrameDeadlineOverGRPC(t *testing.T) {
	m, c := startModel(t, "silent", map[string]any{})
	opts := options(t)
	opts.FrameDeadline = time.Microsecond
	rec, err := session.Run(context.Background(), m, speechConversation(t, "c-late"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rec.Failure, "exceeded the per-frame deadline of 1µs at frame 0") {
		t.Errorf("failure %q, want a missed deadline at frame 0", rec.Failure)
	}
	// Whether the 1 µs passed before the call left or while the plugin held it depends
	// on the machine's load; in the second case the host killed the plugin as wedged.
	// Restart it as the evaluation loop does (core/evaluate), so the next conversation
	// gets a working plugin either way.
	if c.Exited() {
		if err := c.Restart(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	opts.FrameDeadline = time.Minute
	rec, err = session.Run(context.Background(), m, speechConversation(t, "c-next"), opts)
	if err != nil || rec.Failed() {
		t.Errorf("the next conversation: %v %s", err, rec.Failure)
	}
}

// The timing cue of docs/protocol.md section 3.6 and 9, with the real pause-responder
// plugin and the real detector: in the paper's schedule it answers T with a fresh onset
// (only T and N4_Q are followed by long silence) and keeps the ordinary turns' silence;
// with timing_control every ordinary turn is followed by a request's silence, and it
// answers there too, so its silence preservation falls.
func TestPauseResponderAndTheTimingCue(t *testing.T) {
	m, _ := startModel(t, "pause-responder", map[string]any{})
	for _, control := range []bool{false, true} {
		opts := options(t)
		opts.Params.TimingControl = control
		opts.Seed = 3
		rec, err := session.Run(context.Background(), m, speechConversation(t, "c-pause"), opts)
		if err != nil || rec.Failed() {
			t.Fatal(err, rec.Failure)
		}
		var fresh, silentWindows, windows int
		for _, ev := range score.Events(rec.Timeline, rec.Episodes, opts.Params) {
			if ev.T != nil && ev.T.FreshOnset {
				fresh++
			}
			if ev.Silence != nil {
				windows++
				if ev.Silence.Silent() {
					silentWindows++
				}
			}
		}
		// N1 is followed by a gap: turn_gap, or with the control a request's silence.
		n1, next := rec.Timeline.Turns[0], rec.Timeline.Turns[1]
		gap := next.Start - n1.End
		switch {
		case fresh != 1:
			t.Errorf("control %v: %d fresh onsets on T, want 1 (episodes %v)", control, fresh, rec.Episodes)
		case !control && (gap != 0.5 || silentWindows != windows):
			t.Errorf("paper schedule: N1 gap %.3f, %d of %d windows silent; want 0.5 and all", gap, silentWindows, windows)
		case control && (gap < 3 || silentWindows == windows):
			t.Errorf("timing control: N1 gap %.3f, %d of %d windows silent; want a request's silence and an answer in N1's window", gap, silentWindows, windows)
		}
	}
}
