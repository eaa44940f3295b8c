package vad

import (
	"errors"
	"fmt"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// Online is the streaming detector the scheduler consults while a conversation plays
// (docs/protocol.md section 3.4). It runs the same windows and the same segmenter as the
// offline path, so on the same audio it finds the same episodes, and Heard says what the
// audio so far already decides about them. It is not safe for concurrent use; each
// conversation has its own.
type Online struct {
	prob    func(window []float32) (float32, error)
	release func() // returns the ONNX Runtime session, if any
	g       *segmenter
	pending []float32 // samples of an incomplete window
	done    bool
}

// NewOnline starts a stream with zero state and context. Close it to return its session.
func (d *Detector) NewOnline(s protocol.VAD) (*Online, error) {
	if err := d.checkSettings(s); err != nil {
		return nil, err
	}
	sess, err := d.get()
	if err != nil {
		return nil, err
	}
	sess.reset()
	o := newOnline(s, sess.step)
	o.release = func() { d.put(sess) }
	return o, nil
}

// NewOnlineFunc is an Online whose window probabilities come from prob instead of
// Silero: the same windowing and the same episodes from them. Tests of the scheduler use
// it to place speech exactly. prob sees each Window-sample window (zero-padded at the end).
func NewOnlineFunc(s protocol.VAD, prob func(window []float32) float32) (*Online, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return newOnline(s, func(w []float32) (float32, error) {
		full := make([]float32, Window)
		copy(full, w)
		return prob(full), nil
	}), nil
}

func newOnline(s protocol.VAD, prob func([]float32) (float32, error)) *Online {
	return &Online{prob: prob, g: newSegmenter(s), pending: make([]float32, 0, Window)}
}

var errOnlineDone = errors.New("vad: online detector already finished or closed")

// Push feeds 16 kHz audio of any length; whole windows are run at once, the rest waits
// for the next push.
func (o *Online) Push(pcm16k []float32) error {
	if o.done {
		return errOnlineDone
	}
	if len(o.pending) > 0 {
		n := min(Window-len(o.pending), len(pcm16k))
		o.pending = append(o.pending, pcm16k[:n]...)
		pcm16k = pcm16k[n:]
		if len(o.pending) < Window {
			return nil
		}
		if err := o.step(o.pending); err != nil {
			return err
		}
		o.pending = o.pending[:0]
	}
	for len(pcm16k) >= Window {
		if err := o.step(pcm16k[:Window]); err != nil {
			return err
		}
		pcm16k = pcm16k[Window:]
	}
	o.pending = append(o.pending, pcm16k...)
	return nil
}

func (o *Online) step(w []float32) error {
	p, err := o.prob(w)
	if err != nil {
		return err
	}
	o.g.push(p)
	return nil
}

// Heard is what the audio processed so far says about the final episodes: the closed
// ones, the open one with how far it is known, and where the heard audio ends (see
// timeline.Heard). The episodes are unpadded: with speech_pad > 0 the final ones differ
// by the padding, which depends on what comes next (protocol.VAD.Causal).
func (o *Online) Heard() timeline.Heard { return o.g.heard() }

// Speaking reports an open episode that has already lasted min_speech, so that it is sure
// to be kept: a blip that will be dropped never counts (Heard's OpenKept).
func (o *Online) Speaking() bool { return o.g.openKept() }

// Processed is the duration in seconds of the audio run through the model so far (whole
// windows; up to one window of pushed audio may still be waiting).
func (o *Online) Processed() float64 { return float64(o.g.windows*Window) / SampleRate }

// Episodes returns the episodes closed so far, in seconds from the start of the stream:
// exactly what Segment gives on the audio processed so far, less an episode still open.
// With speech_pad above half of merge_pause, the padded end of the last episode can still
// move when the next one starts (the reference splits gaps shorter than two pads).
func (o *Online) Episodes() []timeline.Episode {
	return o.g.episodes(o.g.windows*Window, false)
}

// Finish runs the buffered partial window (zero-padded, as the offline path does), ends
// the stream and returns all its episodes, the open one included: the same list Episodes
// of the Detector gives for the whole audio. The Online cannot take more audio after it.
func (o *Online) Finish() ([]timeline.Episode, error) {
	if o.done {
		return nil, errOnlineDone
	}
	n := o.g.windows*Window + len(o.pending)
	if len(o.pending) > 0 {
		if err := o.step(o.pending); err != nil {
			return nil, fmt.Errorf("vad: last window: %w", err)
		}
		o.pending = o.pending[:0]
	}
	o.Close()
	return o.g.episodes(n, true), nil
}

// Close returns the session to the detector. Speaking, SilentFor and Episodes still answer
// for the audio processed before.
func (o *Online) Close() {
	if o.release != nil {
		o.release()
		o.release = nil
	}
	o.done = true
}
