package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// These tests check the scheduler's arithmetic with in-process models and the real
// online detector's windowing and episodes (vad.NewOnlineFunc), with Silero's
// probability replaced by the loudest sample of each 32 ms window: a model "speaks" at
// probability 0.9 by emitting samples of 0.9, faintly at 0.4 (between the negative
// threshold 0.35 and the threshold 0.5). So every expected time can be worked out by hand
// on the 32 ms window grid. Real Silero and real plugin processes are exercised in
// plugin_test.go and sweep_test.go.

// loudest is the stand-in window probability.
func loudest(w []float32) float32 {
	m := float32(0)
	for _, v := range w {
		m = max(m, v)
	}
	return min(m, 1)
}

func windowListener() (Listener, error) { return vad.NewOnlineFunc(protocol.DefaultVAD(), loudest) }

// scripted is an in-process model whose reply to frame k is reply(k); it records every
// input frame.
type scripted struct {
	format sdk.Format
	reply  func(k int) (sdk.Output, error)
	input  []float32
	frames int
	closed bool
}

func (m *scripted) Start(ctx context.Context, req sdk.ConversationStart) (sdk.Conversation, error) {
	return m, nil
}
func (m *scripted) Format() sdk.Format { return m.format }
func (m *scripted) Step(ctx context.Context, frame []float32) (sdk.Output, error) {
	if len(frame) != m.format.FrameSize {
		return sdk.Output{}, errors.New("wrong frame size")
	}
	m.input = append(m.input, frame...)
	k := m.frames
	m.frames++
	if m.reply == nil {
		return sdk.Output{}, nil
	}
	return m.reply(k)
}
func (m *scripted) Close() error { m.closed = true; return nil }

// hangAt is a model whose Step at frame at blocks until the step's context ends.
type hangAt struct {
	format sdk.Format
	at, k  int
}

func (m *hangAt) Start(context.Context, sdk.ConversationStart) (sdk.Conversation, error) {
	return m, nil
}
func (m *hangAt) Format() sdk.Format { return m.format }
func (m *hangAt) Step(ctx context.Context, _ []float32) (sdk.Output, error) {
	if m.k++; m.k-1 == m.at {
		<-ctx.Done()
		return sdk.Output{}, ctx.Err()
	}
	return sdk.Output{}, nil
}
func (m *hangAt) Close() error { return nil }

// constant makes n samples of value v at rate.
func constant(v float32, rate int, seconds float64) audio.PCM {
	n := int(math.Round(seconds * float64(rate)))
	x := make([]float32, n)
	for i := range x {
		x[i] = v
	}
	return audio.PCM{Samples: x, Rate: rate}
}

// A conversation at 16 kHz whose clips carry a distinct constant value each, so the input
// stream can be checked sample by sample.
type clip struct {
	label string
	value float32
	secs  float64
}

var preambleValue = float32(0.05)

func conversation(rate int, preambleSecs float64, clips []clip) Conversation {
	conv := Conversation{ID: "c1", Preamble: constant(preambleValue, rate, preambleSecs)}
	for i, c := range clips {
		conv.Turns = append(conv.Turns, Turn{Index: i, Label: c.label, Speaker: string(rune('A' + i%3)), Text: "turn", Audio: constant(c.value, rate, c.secs)})
	}
	return conv
}

var sixTurns = []clip{
	{protocol.LabelN1, 0.1, 0.73},
	{protocol.LabelT, 0.2, 1.01},
	{protocol.LabelN2, 0.3, 0.40},
	{protocol.LabelN4Q, 0.4, 0.60},
	{protocol.LabelN4R, 0.5, 0.50},
	{protocol.LabelN3, 0.6, 0.33},
}

func testOptions() Options {
	return Options{
		Params:      protocol.Defaults(),
		NewListener: windowListener,
	}
}

func run(t *testing.T, m sdk.Model, conv Conversation, opts Options) *record.Record {
	t.Helper()
	rec, err := Run(context.Background(), m, conv, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

type span struct{ start, end float64 }

func checkSpans(t *testing.T, tl timeline.Timeline, preamble span, want []span) {
	t.Helper()
	const eps = 1e-9
	if math.Abs(tl.PreambleStart-preamble.start) > eps || math.Abs(tl.PreambleEnd-preamble.end) > eps {
		t.Errorf("preamble [%g, %g), want [%g, %g)", tl.PreambleStart, tl.PreambleEnd, preamble.start, preamble.end)
	}
	if len(tl.Turns) != len(want) {
		t.Fatalf("%d turns on the timeline, want %d", len(tl.Turns), len(want))
	}
	for i, w := range want {
		got := tl.Turns[i]
		if math.Abs(got.Start-w.start) > eps || math.Abs(got.End-w.end) > eps {
			t.Errorf("turn %d (%s) [%.6f, %.6f), want [%.6f, %.6f)", i, got.Label, got.Start, got.End, w.start, w.end)
		}
	}
}

// checkInput rebuilds the expected input stream from the expected spans and compares it
// sample by sample with what the model received.
func checkInput(t *testing.T, got []float32, rate int, preamble span, turns []span, clips []clip) {
	t.Helper()
	want := make([]float32, len(got))
	fill := func(s span, v float32) {
		for i := int(math.Round(s.start * float64(rate))); i < int(math.Round(s.end*float64(rate))); i++ {
			want[i] = v
		}
	}
	fill(preamble, preambleValue)
	for i, s := range turns {
		fill(s, clips[i].value)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("input sample %d (t=%.5f s) = %g, want %g", i, float64(i)/float64(rate), got[i], want[i])
		}
	}
}

// The silent model with 100 ms frames: every fixed gap is exact, the wait after T ends at
// the first frame boundary at or after tE + t_onset_window, and the tail is padded to the
// frame boundary.
func TestScheduleSilentModel(t *testing.T) {
	m := &scripted{format: sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1600}}
	conv := conversation(16000, 0.35, sixTurns)
	rec := run(t, m, conv, testOptions())
	if rec.Failed() {
		t.Fatal(rec.Failure)
	}
	preamble := span{0, 0.35}
	want := []span{
		{0.85, 1.58},  // preamble_gap 0.5
		{2.08, 3.09},  // turn_gap 0.5
		{8.10, 8.50},  // T ended 3.09; no onset; 3.09+5 = 8.09 -> next boundary 8.1
		{9.00, 9.60},  // turn_gap
		{12.60, 13.1}, // exactly n4_gap = 3 s after N4_Q
		{13.60, 13.93},
	}
	checkSpans(t, rec.Timeline, preamble, want)
	// tail: 13.93 + 2 = 15.93 -> 160 frames of 0.1 s
	if rec.Frames != 160 || math.Abs(rec.Timeline.Duration-16.0) > 1e-9 {
		t.Errorf("frames %d duration %g, want 160 and 16 s", rec.Frames, rec.Timeline.Duration)
	}
	if m.frames != rec.Frames || !m.closed {
		t.Errorf("model saw %d frames (closed %v), record says %d", m.frames, m.closed, rec.Frames)
	}
	checkInput(t, m.input, 16000, preamble, want, sixTurns)
	if len(rec.Audible.Samples) != 160*1600 || rec.Audible.Rate != 16000 {
		t.Errorf("audible %d samples at %d Hz, want %d at 16000", len(rec.Audible.Samples), rec.Audible.Rate, 160*1600)
	}
	for i, v := range rec.Audible.Samples {
		if v != 0 {
			t.Fatalf("audible sample %d = %g from a silent model", i, v)
		}
	}
	w := rec.TWait
	if w == nil || w.Onset || w.Ending != record.WaitNoOnset || math.Abs(w.Start-3.09) > 1e-9 || math.Abs(w.End-8.1) > 1e-9 {
		t.Errorf("T wait %+v, want no onset from 3.09 to 8.1", w)
	}
	if rec.Latency.Frames != 160 || rec.Latency.Max < rec.Latency.P95 || rec.Latency.P95 < rec.Latency.P50 {
		t.Errorf("latency summary %+v", rec.Latency)
	}
}

// One-second frames at 16 kHz in, 24 kHz out (MiniCPM-o's shape): the same conversation
// with the same exact gaps; only the wait after T and the tail are rounded to 1 s frames.
func TestScheduleOneSecondFrames(t *testing.T) {
	m := &scripted{format: sdk.Format{InputRate: 16000, OutputRate: 24000, FrameSize: 16000}}
	conv := conversation(16000, 0.35, sixTurns)
	rec := run(t, m, conv, testOptions())
	if rec.Failed() {
		t.Fatal(rec.Failure)
	}
	preamble := span{0, 0.35}
	want := []span{
		{0.85, 1.58},
		{2.08, 3.09},
		{9.0, 9.4}, // 3.09 + 5 = 8.09 -> next 1 s boundary 9
		{9.9, 10.5},
		{13.5, 14.0},
		{14.5, 14.83},
	}
	checkSpans(t, rec.Timeline, preamble, want)
	if rec.Frames != 17 || len(rec.Audible.Samples) != 17*24000 { // 16.83 -> 17 s
		t.Errorf("frames %d, audible %d samples; want 17 and %d", rec.Frames, len(rec.Audible.Samples), 17*24000)
	}
	checkInput(t, m.input, 16000, preamble, want, sixTurns)
}

// A clip at another rate than the model's input is resampled; the turn's span is its
// resampled length.
func TestScheduleResamplesClips(t *testing.T) {
	m := &scripted{format: sdk.Format{InputRate: 24000, OutputRate: 24000, FrameSize: 1920}}
	conv := conversation(16000, 0.35, []clip{{protocol.LabelN1, 0.1, 0.5}, {protocol.LabelT, 0.2, 1.0}, {protocol.LabelN3, 0.3, 0.25}})
	rec := run(t, m, conv, testOptions())
	if rec.Failed() {
		t.Fatal(rec.Failure)
	}
	checkSpans(t, rec.Timeline, span{0, 0.35}, []span{
		{0.85, 1.35},
		{1.85, 2.85},
		{7.92, 8.17}, // 2.85 + 5 = 7.85 -> next 80 ms boundary 7.92
	})
	// the middle of a resampled constant clip keeps its value
	mid := int(2.35 * 24000)
	if v := m.input[mid]; math.Abs(float64(v)-0.2) > 1e-3 {
		t.Errorf("input at 2.35 s = %g, want about 0.2 (the resampled T clip)", v)
	}
}

// marker is the value of the i-th output sample produced in reply to frame k.
func marker(k, i int) float32 { return float32(k+1)/1000 + float32(i)/1e7 }

func burst(k, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = marker(k, i)
	}
	return x
}

// Output produced in reply to frame k is audible from the end of frame k on, one frame's
// worth per frame; bursts queue; a flush discards what has not played yet.
func TestPlaybackTiming(t *testing.T) {
	const F = 1920 // 80 ms at 24 kHz in; output at 16 kHz: 1280 per frame
	const D = 1280
	m := &scripted{format: sdk.Format{InputRate: 24000, OutputRate: 16000, FrameSize: F}}
	m.reply = func(k int) (sdk.Output, error) {
		switch {
		case k >= 3 && k < 6: // speak one frame's worth at frames 3, 4, 5
			return sdk.Output{Samples: burst(k, D)}, nil
		case k == 10: // a burst of 4 frames' worth at once
			return sdk.Output{Samples: burst(k, 4*D)}, nil
		case k == 20: // 5 frames' worth ...
			return sdk.Output{Samples: burst(k, 5*D)}, nil
		case k == 22: // ... flushed two frames later, replaced by half a frame
			return sdk.Output{Samples: burst(k, D/2), Flush: true}, nil
		}
		return sdk.Output{}, nil
	}
	conv := conversation(16000, 2, []clip{{protocol.LabelN1, 0.1, 0.5}, {protocol.LabelT, 0.2, 0.5}, {protocol.LabelN3, 0.3, 0.5}})
	rec := run(t, m, conv, testOptions())
	if rec.Failed() {
		t.Fatal(rec.Failure)
	}
	want := make([]float32, len(rec.Audible.Samples))
	put := func(at int, x []float32) { copy(want[at:], x) }
	for k := 3; k < 6; k++ {
		put((k+1)*D, burst(k, D)) // reply to frame k plays during interval k+1
	}
	put(11*D, burst(10, 4*D))
	put(21*D, burst(20, 2*D)) // intervals 21 and 22 played before the flush arrived at the end of frame 22
	put(23*D, burst(22, D/2)) // then the half frame, then silence
	for i := range want {
		if rec.Audible.Samples[i] != want[i] {
			t.Fatalf("audible sample %d (interval %d) = %g, want %g", i, i/D, rec.Audible.Samples[i], want[i])
		}
	}
	if got, wantN := len(rec.Audible.Samples), rec.Frames*D; got != wantN {
		t.Errorf("audible length %d, want frames*%d = %d", got, D, wantN)
	}
}

// With a drain that is not a whole number of samples per frame (16 kHz in, 160-sample
// frames, 22.05 kHz out: 220.5 samples a frame) the cumulative count stays exact.
func TestPlaybackFractionalDrain(t *testing.T) {
	m := &scripted{format: sdk.Format{InputRate: 16000, OutputRate: 22050, FrameSize: 160}}
	m.reply = func(k int) (sdk.Output, error) { return sdk.Output{Samples: burst(0, 221)}, nil }
	opts := testOptions()
	rec := run(t, m, conversation(16000, 0.01, []clip{{protocol.LabelN1, 0.1, 0.05}}), opts)
	if rec.Failed() {
		t.Fatal(rec.Failure)
	}
	if want := rec.Frames * 160 * 22050 / 16000; len(rec.Audible.Samples) != want {
		t.Errorf("audible %d samples after %d frames, want %d", len(rec.Audible.Samples), rec.Frames, want)
	}
}

// level is a stretch [start, end) of audible output at one sample value.
type level struct {
	start, end float64
	v          float32
}

// speaker emits, in reply to each frame, exactly what plays during the next input
// interval, with the value of the level covering each audible sample (0 elsewhere): the
// audible waveform is the levels, placed sample-exactly on the timeline.
func speaker(f sdk.Format, levels ...level) *scripted {
	m := &scripted{format: f}
	fr, ro, ri := int64(f.FrameSize), int64(f.OutputRate), int64(f.InputRate)
	m.reply = func(k int) (sdk.Output, error) {
		from, to := (int64(k)+1)*fr*ro/ri, (int64(k)+2)*fr*ro/ri
		out := make([]float32, to-from)
		for i := range out {
			t := float64(from+int64(i)) / float64(ro)
			for _, l := range levels {
				if t >= l.start && t < l.end {
					out[i] = l.v
				}
			}
		}
		return sdk.Output{Samples: out}, nil
	}
	return m
}

// speech at probability 0.9, faint output at 0.4.
func speech(start, end float64) level { return level{start, end, 0.9} }
func faint(start, end float64) level  { return level{start, end, 0.4} }

// clicks: 40 ms of speech-level output every second from start to end.
func clicks(start, end float64) []level {
	var out []level
	for t := start; t < end; t++ {
		out = append(out, speech(t, t+0.04))
	}
	return out
}

// Rule 3 (section 3.5) with 100 ms frames. The conversation: preamble 0.35 s, N1 0.73 s,
// T 1.01 s, N3: T spans [2.08, 3.09), so tE = 3.09 and the onset window ends at 8.09.
// Windows are 32 ms: window i is [0.032 i, 0.032 (i+1)); an episode starts at the window
// where speech starts and its pause at the first window without it. At a decision at
// boundary b the detector has heard whole windows up to b. The endpoint needs 2 s of
// heard silence after the end of the speech as it stands.
func TestWaitAfterT(t *testing.T) {
	f := sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1600}
	clips := []clip{{protocol.LabelN1, 0.1, 0.73}, {protocol.LabelT, 0.2, 1.01}, {protocol.LabelN3, 0.3, 0.5}}
	cases := []struct {
		name   string
		out    []level
		cap    float64
		next   float64 // start of the turn after T
		onset  bool
		ending string
	}{
		// Episode [3.2, 4.704) (its pause starts at window 147); 2 s later is 6.704; the
		// first boundary that has heard it: 6.8 (heard up to window 212, 6.784).
		{"fresh onset, endpoint", []level{speech(3.2, 4.7)}, 60, 6.8, true, record.WaitEndpoint},
		// Episode [2.496, 4.0): speaking through tE; silent from 4.0, heard 2 s of it at 6.1.
		{"already speaking", []level{speech(2.5, 4.0)}, 60, 6.1, true, record.WaitEndpoint},
		// Speaks for ever: the cap (7 s after 3.09 = 10.09 -> 10.1) ends the wait.
		{"cap", []level{speech(3.2, 1000)}, 7, 10.1, true, record.WaitCap},
		// 60 ms of speech spans windows 112..114, 96 ms < min_speech: dropped, no onset.
		{"blip", []level{speech(3.6, 3.66)}, 60, 8.1, false, record.WaitNoOnset},
		// An onset at 8.096 (window 253) is after 8.09: outside the window, as the scorer
		// sees it, so the window closes at 8.1 with the onset under the next turn.
		{"onset after the window", []level{speech(8.1, 9.0)}, 60, 8.1, false, record.WaitNoOnset},
		// Audible from 8.05, an episode from 8.032 <= 8.09: a fresh onset for the scorer.
		// At the 8.1 decision it is 64 ms long, not yet sure to be kept, so the wait goes
		// on; at 8.2 it is kept, and the wait follows it: pause at 9.024, + 2 s -> 11.1.
		// (Deciding at 8.1 put the next turn on top of a counted onset.)
		{"onset at the window end is waited for", []level{speech(8.05, 9.0)}, 60, 11.1, true, record.WaitEndpoint},
		// Audible from 7.9 (episode from 7.872), kept at the 8.1 decision: same endpoint.
		{"onset caught at the window end", []level{speech(7.9, 9.0)}, 60, 11.1, true, record.WaitEndpoint},
		// Section 3.5: clicks shorter than min_speech every second after the answer are
		// no episode and do not hold the endpoint (they used to run the wait to the cap).
		{"clicks after the answer", append([]level{speech(3.2, 4.7)}, clicks(6, 200)...), 60, 6.8, true, record.WaitEndpoint},
		// Faint output (between the thresholds) after the answer's episode closed is no
		// speech either.
		{"faint output after the answer", []level{speech(3.2, 4.7), faint(6.0, 200)}, 60, 6.8, true, record.WaitEndpoint},
		// Faint output right after speech continues the episode (Silero's hysteresis): the
		// scorer counts it as speech, and the wait follows it. Pause at 5.504 -> 7.6.
		{"faint output glued to the answer", []level{speech(3.2, 4.7), faint(4.7, 5.5)}, 60, 7.6, true, record.WaitEndpoint},
		// Speech that ended before tE (episode [2.176, 2.912)) followed by a faint stretch
		// over tE: the faint windows neither end nor extend the pause, the episode closes
		// at 2.912 (when a silent window comes, 4.512), so the model is silent at tE and the
		// onset window runs its course.
		{"faint tail over tE", []level{speech(2.2, 2.9), faint(3.0, 4.5)}, 60, 8.1, false, record.WaitNoOnset},
		// ... and a fresh onset later in the window is waited for: episode [6.976, 7.52),
		// endpoint 9.52 -> 9.6. (The faint tail used to end the window at 6.6.)
		{"faint tail over tE, then an answer", []level{speech(2.2, 2.9), faint(3.0, 4.5), speech(7.0, 7.5)}, 60, 9.6, true, record.WaitEndpoint},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := testOptions()
			opts.Params.TWaitCap = c.cap
			rec := run(t, speaker(f, c.out...), conversation(16000, 0.35, clips), opts)
			if rec.Failed() {
				t.Fatal(rec.Failure)
			}
			got := rec.Timeline.Turns[2].Start
			if math.Abs(got-c.next) > 1e-9 {
				t.Errorf("turn after T starts at %.4f, want %.4f (episodes %v)", got, c.next, rec.Episodes)
			}
			w := rec.TWait
			if w == nil || w.Onset != c.onset || w.Ending != c.ending || math.Abs(w.End-got) > 1e-9 || math.Abs(w.Start-3.09) > 1e-9 {
				t.Errorf("T wait %+v, want onset %v ending %s from 3.09 to %.4f", w, c.onset, c.ending, got)
			}
			// What the scheduler waited for is what the scorer counts.
			for _, ev := range score.Events(rec.Timeline, rec.Episodes, opts.Params) {
				if ev.T != nil && ev.T.Presence != w.Onset {
					t.Errorf("scorer: presence %v (episodes %v); scheduler: onset %v", ev.T.Presence, rec.Episodes, w.Onset)
				}
			}
		})
	}
}

// A response short enough to start and end between two decisions (1 s frames) is still
// an onset: the closed episode ends after T, so the wait ends at its endpoint, not at the
// end of the onset window.
func TestWaitSeesAShortResponseBetweenDecisions(t *testing.T) {
	f := sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 16000}
	clips := []clip{{protocol.LabelN1, 0.1, 0.73}, {protocol.LabelT, 0.2, 1.01}, {protocol.LabelN3, 0.3, 0.5}}
	rec := run(t, speaker(f, speech(4.0, 4.5)), conversation(16000, 0.35, clips), testOptions())
	// T ends 3.09; episode [4.0, 4.512); 2 s of silence heard by 6.512 -> the 7.0 boundary.
	if w := rec.TWait; !w.Onset || w.Ending != record.WaitEndpoint || math.Abs(w.End-7.0) > 1e-9 {
		t.Errorf("T wait %+v, want onset, endpoint, end 7.0", w)
	}
}

// Section 3.6: with timing_control every ordinary turn (N1, N2, N4_R here; not T, N4_Q
// or the last turn) is followed by one of the conversation's request gaps (t_onset_window
// 5 s for its T, n4_gap 3 s for its N4_Q), the same for both versions of a pair; the draw
// depends on the seed.
func TestTimingControlPadsOrdinaryTurns(t *testing.T) {
	f := sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1600}
	gaps := func(id, pair string, seed int64) []float64 {
		opts := testOptions()
		opts.Params.TimingControl, opts.Seed = true, seed
		conv := conversation(16000, 0.35, sixTurns)
		conv.ID, conv.PairID = id, pair
		rec := run(t, &scripted{format: f}, conv, opts)
		tl := rec.Timeline.Turns
		var out []float64
		for _, i := range []int{0, 2, 4} { // N1, N2, N4_R
			out = append(out, math.Round((tl[i+1].Start-tl[i].End)*1000)/1000)
		}
		if q := tl[4].Start - tl[3].End; math.Abs(q-3) > 1e-9 {
			t.Errorf("N4_Q gap %.3f, want n4_gap 3 exactly", q)
		}
		return out
	}
	seen := map[float64]int{}
	differ := false
	for i := range 20 {
		pair := fmt.Sprintf("p%02d", i)
		ex, im := gaps(pair+"-explicit", pair, 1), gaps(pair+"-implicit", pair, 1)
		if !reflect.DeepEqual(ex, im) {
			t.Errorf("pair %s: explicit gaps %v, implicit %v; want the same", pair, ex, im)
		}
		for _, g := range ex {
			if g != 5 && g != 3 {
				t.Errorf("pair %s: gap %g, want 5 or 3", pair, g)
			}
			seen[g]++
		}
		differ = differ || !reflect.DeepEqual(ex, gaps(pair+"-explicit", pair, 2))
	}
	if seen[5] == 0 || seen[3] == 0 || !differ {
		t.Errorf("gaps drawn %v (another seed changes them: %v); want both request gaps, seeded", seen, differ)
	}
}

// Section 3.3, gap profile "natural": each ordinary turn is followed by its own recorded
// gap (N1, N2, N4_R here), exactly, to the sample; N4_Q keeps n4_gap and T its wait; the
// paper's profile ignores the recorded gaps.
func TestNaturalGapsFollowTheDataset(t *testing.T) {
	f := sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1600}
	want := map[int]float64{0: 1.731, 2: 0.212, 4: 2.4}
	for _, profile := range []string{protocol.GapNatural, protocol.GapPaper} {
		opts := testOptions()
		opts.Params.GapProfile = profile
		conv := conversation(16000, 0.35, sixTurns)
		for i, g := range want {
			conv.Turns[i].GapAfterS = g
		}
		rec := run(t, &scripted{format: f}, conv, opts)
		tl := rec.Timeline.Turns
		for i, g := range want {
			got := tl[i+1].Start - tl[i].End
			exp := g
			if profile == protocol.GapPaper {
				exp = opts.Params.TurnGap
			}
			if math.Abs(got-exp) > 1e-9 {
				t.Errorf("%s: gap after turn %d is %.4f s, want %.4f", profile, i, got, exp)
			}
		}
		if q := tl[4].Start - tl[3].End; math.Abs(q-opts.Params.N4Gap) > 1e-9 {
			t.Errorf("%s: N4_Q gap %.3f, want n4_gap", profile, q)
		}
	}
}

// Rule 4: N4_R follows N4_Q after exactly n4_gap even while the model is speaking.
func TestN4GapIgnoresTheModel(t *testing.T) {
	f := sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1600}
	clips := []clip{{protocol.LabelN4Q, 0.1, 0.77}, {protocol.LabelN4R, 0.2, 0.5}, {protocol.LabelT, 0.3, 0.5}, {protocol.LabelN1, 0.4, 0.5}}
	rec := run(t, speaker(f, speech(1.1, 6.1)), conversation(16000, 0.35, clips), testOptions())
	if rec.Failed() {
		t.Fatal(rec.Failure)
	}
	q, r := rec.Timeline.Turns[0], rec.Timeline.Turns[1]
	if math.Abs(q.End-1.62) > 1e-9 || math.Abs(r.Start-4.62) > 1e-9 {
		t.Errorf("N4_Q ends %.4f, N4_R starts %.4f; want 1.62 and 4.62", q.End, r.Start)
	}
}

type failing struct {
	scripted
	startErr error
}

func (m *failing) Start(ctx context.Context, req sdk.ConversationStart) (sdk.Conversation, error) {
	if m.startErr != nil {
		return nil, m.startErr
	}
	return &m.scripted, nil
}

func TestModelFailures(t *testing.T) {
	f := sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1600}
	conv := conversation(16000, 0.35, []clip{{protocol.LabelN1, 0.1, 0.5}, {protocol.LabelT, 0.2, 0.5}, {protocol.LabelN3, 0.3, 0.5}})
	cases := []struct {
		name  string
		model sdk.Model
		opts  func(*Options)
		want  string
	}{
		{"start error", &failing{startErr: errors.New("out of memory")}, nil, "failed to start the conversation: out of memory"},
		{"step error", &scripted{format: f, reply: func(k int) (sdk.Output, error) {
			if k == 7 {
				return sdk.Output{}, errors.New("plugin process exited")
			}
			return sdk.Output{}, nil
		}}, nil, "model failed at frame 7 (t=0.700 s): plugin process exited"},
		// Frame 3 hangs until its deadline; the deadline is generous, so that no other
		// frame can miss it on a loaded machine.
		{"deadline", &hangAt{format: f, at: 3}, func(o *Options) { o.FrameDeadline = 2 * time.Second }, "exceeded the per-frame deadline of 2s at frame 3"},
		{"nan", &scripted{format: f, reply: func(k int) (sdk.Output, error) {
			if k == 2 {
				return sdk.Output{Samples: []float32{0, float32(math.NaN())}}, nil
			}
			return sdk.Output{}, nil
		}}, nil, "frame 2 (t=0.200 s) with a non-finite sample at index 1"},
		{"bad format", &scripted{format: sdk.Format{InputRate: 16000, OutputRate: 0, FrameSize: 1600}}, nil, "output rate 0 Hz"},
		{"zero frame", &scripted{format: sdk.Format{InputRate: 16000, OutputRate: 16000}}, nil, "a frame of 0 samples"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := testOptions()
			if c.opts != nil {
				c.opts(&opts)
			}
			rec, err := Run(context.Background(), c.model, conv, opts)
			if err != nil {
				t.Fatalf("a model failure is not an error of Run: %v", err)
			}
			if !strings.Contains(rec.Failure, c.want) {
				t.Errorf("failure %q, want it to contain %q", rec.Failure, c.want)
			}
		})
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := &scripted{format: sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1600}}
	m.reply = func(k int) (sdk.Output, error) {
		if k == 5 {
			cancel()
		}
		return sdk.Output{}, nil
	}
	_, err := Run(ctx, m, conversation(16000, 0.35, sixTurns), testOptions())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if m.frames != 6 {
		t.Errorf("model saw %d frames after cancelling at frame 5", m.frames)
	}
}

func TestTextChannel(t *testing.T) {
	m := &scripted{format: sdk.Format{InputRate: 24000, OutputRate: 24000, FrameSize: 1920}}
	m.reply = func(k int) (sdk.Output, error) {
		if k == 4 || k == 9 {
			return sdk.Output{Text: strings.Repeat("x", k)}, nil
		}
		return sdk.Output{}, nil
	}
	rec := run(t, m, conversation(16000, 0.35, []clip{{protocol.LabelN1, 0.1, 0.5}}), testOptions())
	if len(rec.Text) != 2 || rec.Text[0].Frame != 4 || math.Abs(rec.Text[0].Time-0.4) > 1e-9 || rec.Text[1].Text != "xxxxxxxxx" || math.Abs(rec.Text[1].Time-0.8) > 1e-9 {
		t.Errorf("text pieces %+v, want frame 4 at 0.4 s and frame 9 at 0.8 s", rec.Text)
	}
}

func TestBadConversation(t *testing.T) {
	m := &scripted{format: sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1600}}
	conv := conversation(16000, 0.35, []clip{{protocol.LabelN1, 0.1, 0.5}, {protocol.LabelT, 0.2, 0}})
	_, err := Run(context.Background(), m, conv, testOptions())
	if err == nil || !strings.Contains(err.Error(), "conversation c1 turn 1") {
		t.Errorf("err = %v, want it to name conversation c1 turn 1", err)
	}
	if m.frames != 0 {
		t.Error("the model was driven despite bad input")
	}
	conv = conversation(16000, 0.35, []clip{{protocol.LabelN1, 0.1, 0.5}})
	conv.Preamble.Samples[7] = float32(math.Inf(1))
	if _, err := Run(context.Background(), m, conv, testOptions()); err == nil || !strings.Contains(err.Error(), "preamble sample 7") {
		t.Errorf("err = %v, want it to name preamble sample 7", err)
	}
}

// SilentPauses is the schedule itself: the silences a silent model hears between the
// turns of a played session are the ones it lists (the wait after T up to one frame late,
// section 3.3), under each gap profile and the timing-cue control.
func TestSilentPausesAreWhatTheSchedulePlays(t *testing.T) {
	f := sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1600}
	for _, mode := range []string{protocol.GapPaper, protocol.GapNatural, "timing-control"} {
		opts := testOptions()
		opts.Seed = 7
		if mode == "timing-control" {
			opts.Params.TimingControl = true
		} else {
			opts.Params.GapProfile = mode
		}
		conv := conversation(16000, 0.35, sixTurns)
		conv.PairID = "p1"
		for i, g := range []float64{1.731, 0, 0.212, 0, 6.4, 0} {
			conv.Turns[i].GapAfterS = g
		}
		want := SilentPauses(opts.Params, conv, opts.Seed)
		if want[1] != opts.Params.TOnsetWindow || want[3] != opts.Params.N4Gap || want[5] != opts.Params.Tail {
			t.Errorf("%s: pauses %v: want t_onset_window after T, n4_gap after N4_Q, tail last", mode, want)
		}
		rec := run(t, &scripted{format: f}, conv, opts)
		tl := rec.Timeline.Turns
		for i := 0; i+1 < len(tl); i++ {
			got := tl[i+1].Start - tl[i].End
			late := 0.0
			if conv.Turns[i].Label == protocol.LabelT {
				late = 0.1 // the wait ends at a frame boundary: up to one frame late
			}
			if got < want[i]-1e-9 || got > want[i]+late+1e-9 {
				t.Errorf("%s: after turn %d (%s) the schedule played %.4f s, SilentPauses says %.4f", mode, i, conv.Turns[i].Label, got, want[i])
			}
		}
	}
}
