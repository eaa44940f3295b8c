package main

import (
	"context"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/plugins/moshi-ws/oggopus"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// pluginBinary builds the plugin once: the tests run the real process over real gRPC.
func pluginBinary(t *testing.T) string {
	t.Helper()
	return plugintest.BuildGo(t, ".")
}

func TestMain(m *testing.M) {
	code := m.Run()
	plugintest.RemoveBuilt()
	if hubDir != "" {
		os.RemoveAll(hubDir)
	}
	os.Exit(code)
}

// speech synthesises at least seconds of real speech with flite, at 24 kHz.
func speech(t *testing.T, seconds float64) []float32 {
	t.Helper()
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("flite is not installed (scripts/install-apt.sh installs it)")
	}
	wav := filepath.Join(t.TempDir(), "speech.wav")
	text := "Aria, could you tell us when the next train to the city leaves? " +
		"We were thinking about going tomorrow morning, but nobody remembers the timetable. " +
		"Also, is there a cafe near the station where we could wait?"
	if out, err := exec.Command("flite", "-voice", "slt", "-t", text, "-o", wav).CombinedOutput(); err != nil {
		t.Fatalf("flite: %v\n%s", err, out)
	}
	pcm, err := audio.ReadWAV(wav)
	if err != nil {
		t.Fatal(err)
	}
	x := audio.Resample(pcm, rate).Samples
	for float64(len(x)) < seconds*rate {
		x = append(x, x...)
	}
	return x
}

func startPlugin(t *testing.T, config map[string]any) (*pluginhost.Client, sdk.Model) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "moshi-ws", Source: pluginBinary(t)}, nil)
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
	return c, m
}

// correlation is the normalised correlation of a[i] with b[i+lag], best over lags in [lo, hi].
func correlation(a, b []float32, lo, hi int) (best float64, at int) {
	for lag := lo; lag <= hi; lag++ {
		var ab, aa, bb float64
		for i := max(0, -lag); i < len(a) && i+lag < len(b); i++ {
			x, y := float64(a[i]), float64(b[i+lag])
			ab, aa, bb = ab+x*y, aa+x*x, bb+y*y
		}
		if c := ab / math.Sqrt(aa*bb+1e-12); c > best {
			best, at = c, lag
		}
	}
	return best, at
}

// envelope is the RMS of each 20 ms block.
func envelope(x []float32) []float32 {
	const block = rate / 50
	var e []float32
	for i := 0; i+block <= len(x); i += block {
		e = append(e, float32(rms(x[i:i+block])))
	}
	return e
}

func rms(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(max(len(x), 1)))
}

// The done criterion: more than 10 s of flite speech through the real plugin process,
// real Ogg/Opus both ways, paced to real time, against the stand-in server; the test
// checks what the server heard, what came back, the text pieces and the frame counts.
// The stand-in's stream declares 80 ms of pre-skip for its 6.5 ms codec delay, as the
// real servers' do: the echo must still come back where it was sent.
func TestStreamsSpeechBothWays(t *testing.T) {
	const delayFrames = 3
	srv := newStubServer(t, &stubServer{delayFrames: delayFrames, textEvery: 25, declaredPreSkip: 3840})
	client, m := startPlugin(t, map[string]any{"url": srv.url()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	x := speech(t, 10.5)
	frames := len(x) / frameSize
	x = x[:frames*frameSize]
	conv, err := m.Start(ctx, sdk.ConversationStart{ID: "speech"})
	if err != nil {
		t.Fatal(err)
	}
	if f := conv.Format(); f != (sdk.Format{InputRate: 24000, OutputRate: 24000, FrameSize: 1920}) {
		t.Fatalf("format %+v", f)
	}
	var out []float32
	var text strings.Builder
	var perStep []int
	began := time.Now()
	quiet := make([]float32, frameSize)
	tail := delayFrames + 5 // silence to flush the echo and the codecs' delays
	for k := 0; k < frames+tail; k++ {
		in := quiet
		if k < frames {
			in = x[k*frameSize : (k+1)*frameSize]
		}
		o, err := conv.Step(ctx, in)
		if err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		out = append(out, o.Samples...)
		text.WriteString(o.Text)
		perStep = append(perStep, len(o.Samples))
	}
	elapsed := time.Since(began)
	if err := conv.Close(); err != nil {
		t.Fatal(err)
	}
	sess := srv.lastSession(t)
	steps := frames + tail

	// Input: the server received every frame, paced, and heard the speech.
	if len(sess.arrivals) != steps {
		t.Errorf("the server got %d audio messages for %d steps", len(sess.arrivals), steps)
	}
	// Frame k goes out no earlier than k frames after the first Step began: the last
	// arrival bounds the pacing from below, however late a loaded machine delivers the
	// first.
	if span, want := sess.arrivals[len(sess.arrivals)-1].Sub(began), time.Duration(steps-1)*frameTime; span < want {
		t.Errorf("%d frames arrived within %v of the first Step: not paced to real time (want >= %v)", steps, span, want)
	}
	if sess.frames < steps-2 {
		t.Errorf("the server decoded %d whole frames of %d sent", sess.frames, steps)
	}
	heard, lag := correlation(x, sess.input, -100, 400)
	if heard < 0.9 {
		t.Errorf("the server's decode correlates %.3f with the speech (lag %d), want >= 0.9", heard, lag)
	}

	// Output: the echo came back through Opus, delayed, at the level it went in, where the
	// stand-in put it (two Opus passes and a 48 -> 24 kHz resampler move it by 17 samples,
	// 0.7 ms; trusting the declared pre-skip would move it 1764 samples early).
	delay := delayFrames * frameSize
	back, backLag := correlation(x, out, delay-2000, delay+800)
	if backLag < delay-40 || backLag > delay+10 {
		t.Errorf("the echo came back at lag %d, want %d within a few samples", backLag, delay)
	}
	// Two lossy Opus passes keep the waveform only roughly; the loudness contour (per
	// 20 ms) must survive almost exactly.
	if back < 0.7 {
		t.Errorf("the returned audio correlates %.3f with the speech (lag %d), want >= 0.7", back, backLag)
	}
	contour, _ := correlation(envelope(x), envelope(out[backLag:]), 0, 0)
	if contour < 0.95 {
		t.Errorf("the returned loudness contour correlates %.3f with the speech's, want >= 0.95", contour)
	}
	if len(out) < len(x) || len(out) > steps*frameSize {
		t.Errorf("%d samples came back for %d sent (%d steps)", len(out), len(x), steps)
	}
	inLevel, outLevel := rms(x), rms(out[backLag:min(len(out), backLag+len(x))])
	if db := 20 * math.Log10(outLevel/inLevel); math.Abs(db) > 2 {
		t.Errorf("echo level %.1f dB off the input level", db)
	}
	// Lockstep: step k returns the server's answer to frame k-1, one frame of audio (the
	// first answer less the codec delay).
	maxStep := 0
	for k, n := range perStep {
		maxStep = max(maxStep, n)
		if want := lockstepSamples(k); n != want {
			t.Errorf("step %d returned %d samples, want %d", k, n, want)
		}
	}

	// Text: every piece, in order, exactly once.
	if want := strings.Join(sess.texts, ""); text.String() != want || len(sess.texts) < frames/25 {
		t.Errorf("text %q, the server sent %q", text.String(), want)
	}
	info, err := client.Describe(ctx)
	if _, ok := info.Identity["url"]; err != nil || ok { // the URL is transport
		t.Errorf("identity %v, err %v", info.Identity, err)
	}
	t.Logf("%d frames (%.1f s) in %v; server heard corr %.3f; echo corr %.3f at lag %d (delay %d), contour corr %.3f; %d samples back; max %d per step; %d text pieces",
		steps, float64(steps*frameSize)/rate, elapsed.Round(time.Millisecond), heard, back, backLag, delay, contour, len(out), maxStep, len(sess.texts))
}

// lockstepSamples is what step k returns from a server that answers each frame with one
// frame, a frame later: nothing, then its first answer less the 6.5 ms codec delay, then
// one frame per step.
func lockstepSamples(k int) int {
	switch k {
	case 0:
		return 0
	case 1:
		return frameSize - oggopus.PreSkip/2
	}
	return frameSize
}

// The conformance suite, against the real binary and the stand-in server (unpaced:
// the suite's quiet frames need no real time).
func TestConformance(t *testing.T) {
	srv := newStubServer(t, &stubServer{delayFrames: 1, textEvery: 4})
	plugintest.Run(t, pluginhost.Spec{Name: "moshi-ws", Source: pluginBinary(t)}, plugintest.Options{
		Config: map[string]any{"url": srv.url(), "pace": false, "connect_timeout": 10.0, "write_timeout": 10.0, "step_wait_ms": 20.0},
	})
}

// A server that is not running fails Start with an error naming the url, through the
// real process.
func TestServerDownAtStart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "ws://" + l.Addr().String() + "/api/chat"
	l.Close()
	_, m := startPlugin(t, map[string]any{"url": url, "connect_timeout": 5.0})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conv, err := m.Start(ctx, sdk.ConversationStart{ID: "down"})
	if err == nil {
		conv.Close()
		t.Fatal("Start succeeded with no server")
	}
	if !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), "cannot connect") {
		t.Errorf("error does not name the url: %v", err)
	}
}

// A server that hangs up mid-conversation makes Step fail promptly, naming the url,
// after handing over what arrived before the close.
func TestServerClosesMidConversation(t *testing.T) {
	srv := newStubServer(t, &stubServer{delayFrames: 0, closeAfter: 5})
	_, m := startPlugin(t, map[string]any{"url": srv.url(), "pace": false})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conv, err := m.Start(ctx, sdk.ConversationStart{ID: "closing"})
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	frame := make([]float32, frameSize)
	got := 0
	// Polled until the close is seen, for at most 20 s: a bound on a hang, not a measure.
	for k, deadline := 0, time.Now().Add(20*time.Second); time.Now().Before(deadline); k++ {
		o, err := conv.Step(ctx, frame)
		got += len(o.Samples)
		if err != nil {
			if !strings.Contains(err.Error(), srv.url()) || !strings.Contains(err.Error(), "closed") {
				t.Errorf("step %d error does not say what happened: %v", k, err)
			}
			if got == 0 {
				t.Error("no audio arrived before the close")
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("20 s after the server closed, Step still succeeds")
}
