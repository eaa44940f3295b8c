package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// tone is n frames of a chirp with a slow amplitude contour: an echo of it can be found
// at one lag only.
func tone(n int) [][]float32 {
	frames := make([][]float32, n)
	for k := range frames {
		f := make([]float32, frameSize)
		for i := range f {
			t := float64(k*frameSize+i) / rate
			f[i] = float32(0.3 * math.Sin(2*math.Pi*(220*t+40*t*t)) * (0.6 + 0.4*math.Sin(2*math.Pi*0.9*t)))
		}
		frames[k] = f
	}
	return frames
}

// converse plays frames in this process and returns what each step gave, stopping at the
// first error.
func converse(t *testing.T, p *plugin, frames [][]float32) (outs []sdk.Output, err error) {
	t.Helper()
	conv, err := p.Start(context.Background(), sdk.ConversationStart{ID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	for _, f := range frames {
		o, err := conv.Step(context.Background(), f)
		if err != nil {
			return outs, err
		}
		outs = append(outs, o)
	}
	return outs, nil
}

func joined(outs []sdk.Output) (samples []float32, text string) {
	for _, o := range outs {
		samples = append(samples, o.Samples...)
		text += o.Text
	}
	return samples, text
}

// The real servers declare 80 ms of pre-skip for a 6.5 ms codec delay. Dropping the real
// delay (the default) gives the server's audio back where it put it; trusting the
// declaration (codec_delay_ms = -1) loses its first 1764 samples and moves the rest
// 73.5 ms early.
func TestCodecDelayNotTheDeclaredPreSkip(t *testing.T) {
	const delayFrames = 2
	frames := tone(40)
	var x []float32
	for _, f := range frames {
		x = append(x, f...)
	}
	lag := func(codecDelay float64) int {
		srv := newStubServer(t, &stubServer{delayFrames: delayFrames, declaredPreSkip: 3840})
		outs, err := converse(t, inProcess(t, map[string]any{"url": srv.url(), "pace": false, "codec_delay_ms": codecDelay}), frames)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := joined(outs)
		c, at := correlation(x, got, 0, 6000)
		if c < 0.7 {
			t.Fatalf("codec_delay_ms %v: the echo correlates %.3f", codecDelay, c)
		}
		return at
	}
	want := delayFrames * frameSize
	if real := lag(6.5); real < want-40 || real > want+10 {
		t.Errorf("dropping the real delay: echo at lag %d, want %d", real, want)
	}
	if declared := lag(-1); declared < want-1800 || declared > want-1700 {
		t.Errorf("trusting the declared pre-skip: echo at lag %d, want about %d", declared, want-1764)
	}
}

// A server slower than real time (150 ms per answer for 80 ms frames) is waited for:
// every step returns its frame's answer, nothing is late, nothing is lost.
func TestSlowServerIsWaitedFor(t *testing.T) {
	srv := newStubServer(t, &stubServer{delayFrames: 1, answerDelay: 150 * time.Millisecond})
	frames := tone(25)
	outs, err := converse(t, inProcess(t, map[string]any{"url": srv.url()}), frames)
	if err != nil {
		t.Fatal(err)
	}
	for k, o := range outs {
		if want := lockstepSamples(k); len(o.Samples) != want {
			t.Errorf("step %d returned %d samples, want %d", k, len(o.Samples), want)
		}
	}
	if sess := srv.lastSession(t); sess.answers != len(frames)-1 {
		t.Errorf("the server answered %d frames of %d", sess.answers, len(frames))
	}
}

// behindError parses the numbers out of a fell-behind error and checks they agree.
func behindError(t *testing.T, err error) (frame, answered, due, behind int) {
	t.Helper()
	msg := err.Error()
	i := strings.Index(msg, "after frame ")
	var secs float64
	if i < 0 {
		t.Fatalf("not a fell-behind error: %v", err)
	}
	if _, perr := fmt.Sscanf(msg[i:], "after frame %d it had answered %d of the %d frames due (%d frames, %f s behind",
		&frame, &answered, &due, &behind, &secs); perr != nil {
		t.Fatalf("cannot read %q: %v", msg, perr)
	}
	if due-answered != behind || math.Abs(secs-float64(behind)*0.08) > 0.006 {
		t.Errorf("inconsistent numbers in %q", msg)
	}
	return frame, answered, due, behind
}

// A server that stops answering (starved: it still reads) fails the conversation with
// how far behind it was, instead of being scored as a model that went quiet.
func TestStarvedServerFailsTheConversation(t *testing.T) {
	const stall = 10
	srv := newStubServer(t, &stubServer{delayFrames: 0, stallAfter: stall})
	p := inProcess(t, map[string]any{"url": srv.url(), "pace": false, "step_wait_ms": 1000.0, "max_behind_frames": 3.0})
	outs, err := converse(t, p, tone(60))
	if err == nil {
		t.Fatal("60 frames to a server that stopped answering after 10, and no step failed")
	}
	frame, answered, due, behind := behindError(t, err)
	if answered > stall || answered < stall-1 || behind != 4 || due != frame || frame != len(outs) {
		t.Errorf("failed at frame %d (answered %d of %d, %d behind) after %d steps; want the first frame 4 behind",
			frame, answered, due, behind, len(outs))
	}
	if !strings.Contains(err.Error(), srv.url()) || !strings.Contains(err.Error(), "on_behind") {
		t.Errorf("the error does not name the server and what to do: %v", err)
	}
}

// With on_behind = "mark" the conversation goes on; the text channel says where the
// server fell behind, once per stretch behind.
func TestStarvedServerMarked(t *testing.T) {
	srv := newStubServer(t, &stubServer{delayFrames: 0, stallAfter: 10})
	p := inProcess(t, map[string]any{"url": srv.url(), "pace": false, "step_wait_ms": 1000.0, "max_behind_frames": 3.0, "on_behind": "mark"})
	outs, err := converse(t, p, tone(40))
	if err != nil {
		t.Fatal(err)
	}
	_, text := joined(outs)
	if n := strings.Count(text, "[moshi-ws: the server is "); n != 1 || !strings.Contains(text, "frames (") {
		t.Errorf("text %q: want one mark saying how far behind", text)
	}
}

// The end of a conversation waits for the answers still due (here from a slow server
// that nobody waited for during the conversation), up to drain_ms, before closing.
func TestCloseDrainsWhatTheServerOwes(t *testing.T) {
	const n = 20
	srv := newStubServer(t, &stubServer{delayFrames: 0, answerDelay: 300 * time.Millisecond})
	p := inProcess(t, map[string]any{"url": srv.url(), "pace": false, "step_wait_ms": 0.0,
		"max_behind_frames": 1000.0, "drain_ms": 30000.0})
	if _, err := converse(t, p, tone(n)); err != nil {
		t.Fatal(err)
	}
	if sess := srv.lastSession(t); sess.answers != n-1 {
		t.Errorf("the server got to answer %d of the %d frames due before the websocket closed", sess.answers, n-1)
	}
}
