// Package session is the scheduler of docs/protocol.md section 3: it plays one
// conversation to one full-duplex model in lockstep on a virtual clock and records what
// happened.
//
// # The clock
//
// Time advances by input samples at the model's declared input rate Ri, never by the wall
// clock. Frame k carries input samples [kF, (k+1)F) (F = the model's frame size), i.e. the
// input interval [k*d, (k+1)*d) with d = F/Ri. Frame k gets exactly one Step.
//
// # When output becomes audible
//
// The model can only reply to frame k once frame k has been fully captured, at time
// (k+1)*d. Its reply is appended to the playback buffer (after discarding the queued,
// unplayed audio when it flushes). The buffer drains at real time: during input interval
// k it plays floor((k+1)*F*Ro/Ri) - floor(k*F*Ro/Ri) samples (Ro = output rate), padded
// with silence when it runs dry, so the audible waveform is aligned sample-exactly with
// the input timeline (audible sample j is at j/Ro seconds). Therefore:
//   - output produced in reply to frame k is audible from (k+1)*d on, at the earliest;
//     the audible interval [0, d) is always silent;
//   - a flush in the reply to frame k discards what would have played from (k+1)*d on;
//     what played during interval k was already heard;
//   - the reply to the last frame would play after the session ends and is not recorded.
//
// # Frame granularity and the schedule
//
// The input stream is laid out sample-exactly: the preamble, preamble_gap, every turn,
// turn_gap and n4_gap are exact sample counts (round(seconds*Ri)), so every model hears
// the same conversation whatever its frame size. A segment may begin mid-frame.
//
// The one exception is the closed-loop wait after T (section 3.5), because its end is a
// decision, and decisions are taken only at frame boundaries with the audio already heard
// (the online detector has heard the audible waveform up to k*d when frame k is
// composed). So:
//   - the wait begins at tE, the exact end of T; the rest of T's last frame is silence;
//   - at the start of each later frame the scheduler asks what the audio heard so far
//     decides about the final episodes (section 3.4, timeline.Heard). Response presence
//     (the scorer's definition, timeline.Presence) known true: the wait goes on until the
//     heard speech has been silent for t_end_silence (the endpoint). Known false and
//     tE + t_onset_window reached: the wait ends. Not known yet (an episode that may
//     still start in the window or cover tE is unresolved): the wait goes on, past the
//     window if need be. tE + t_wait_cap ends it in any case. Each bound is met at the
//     first frame boundary where it holds (up to d late: 80 ms for Moshi, 1 s for
//     MiniCPM-o).
//   - the session ends at the first frame boundary at or after the end of the tail; the
//     last frame is padded with silence, so the tail lasts between tail and tail + d.
//
// What the detector has heard at a boundary: the audible waveform up to it, resampled to
// 16 kHz by a streaming resampler (which holds back its few samples of look-ahead) and
// cut into Silero's 32 ms windows (a partial window waits for the next frame). An episode
// is known to be kept once it is min_speech long, and known to have ended once Silero
// closes it, merge_pause after its pause began; so a decision about the onset window can
// come up to about min_speech + merge_pause + 64 ms after the window's end.
//
// The recorded timeline carries the ACTUAL start and end of every turn and of the
// preamble in seconds (sample index / Ri): that, not the nominal schedule, is what
// scoring uses.
package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Conversation is what the scheduler plays: the spoken duty preamble and the human turns.
type Conversation struct {
	ID string
	// PairID is shared by both versions of a scenario pair: the timing-cue control draws
	// its pads from it (section 3.6), so both versions get the same. Empty means ID.
	PairID   string
	Preamble audio.PCM
	Turns    []Turn
	// Background, when set, is a loop played under the whole input stream from its
	// sample BackgroundAt on (a room's bed, dataset.Background): it is added to every
	// input sample, the preamble, the turns, the gaps and the waits alike.
	Background   audio.PCM
	BackgroundAt int
}

// Turn is one human turn with its audio.
type Turn struct {
	Index     int
	Label     string
	Speaker   string
	Text      string
	Addressee string
	Audio     audio.PCM
	// GapAfterS is the turn's natural gap (dataset gap_after_s), played after it under
	// gap_profile "natural" (section 3.3).
	GapAfterS float64
}

// Listener is the online speech detector the scheduler consults: it hears the audible
// waveform at 16 kHz as it plays (section 3.4). *vad.Online satisfies it.
type Listener interface {
	Push(pcm16k []float32) error
	// Heard says what the audio pushed so far decides about the final episodes.
	Heard() timeline.Heard
	// Finish ends the stream and returns every episode, the open one included: the
	// same episodes the offline detector finds on the whole audible waveform.
	Finish() ([]timeline.Episode, error)
	Close()
}

// Options configure one session.
type Options struct {
	Params protocol.Params
	VAD    protocol.VAD
	// Detector opens the online detector (Detector.NewOnline(VAD)).
	Detector *vad.Detector
	// NewListener, when set, replaces Detector as the source of the online detector.
	NewListener func() (Listener, error)
	Seed        int64
	Instruction string // optional text instruction; empty unless configured
	// FrameDeadline bounds the wall time of one Step; 0 means no bound.
	FrameDeadline time.Duration
	// StartDeadline bounds the wall time of Start; 0 means no bound.
	StartDeadline time.Duration
	// WallTime bounds the wall time of the whole conversation (docs/protocol.md section
	// 3.7): past it the conversation fails (record.FailWallTime). 0 means
	// protocol.DefaultConversationWallTime; negative, no bound.
	WallTime time.Duration
}

// ListenerRate is the rate the online detector hears (Silero runs at 16 kHz).
const ListenerRate = 16000

// maxQueued bounds the playback buffer: a model that queues more than this many seconds
// of unplayed audio is out of protocol (it would otherwise exhaust memory).
const maxQueued = 600.0

// Run plays conv to model and records it. A model failure (an error from Start or Step,
// a dead plugin process, a missed deadline, a reply out of protocol) is not an error of
// Run: it returns the partial Record with Failure set. Run returns an error only when the
// inputs are unusable or ctx is cancelled.
func Run(ctx context.Context, model sdk.Model, conv Conversation, opts Options) (*record.Record, error) {
	if err := opts.Params.Validate(); err != nil {
		return nil, err
	}
	if err := checkConversation(conv); err != nil {
		return nil, err
	}
	newListener := opts.NewListener
	if newListener == nil {
		if opts.Detector == nil {
			return nil, errors.New("session: no online detector: set Options.Detector (vad.Open)")
		}
		if err := opts.VAD.Validate(); err != nil {
			return nil, err
		}
		newListener = func() (Listener, error) { return opts.Detector.NewOnline(opts.VAD) }
	}

	rec := &record.Record{ConversationID: conv.ID}
	began := time.Now()
	startCtx, cancel := withDeadline(ctx, opts.StartDeadline)
	c, err := model.Start(startCtx, sdk.ConversationStart{ID: conv.ID, Seed: opts.Seed, Instruction: opts.Instruction})
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rec.Failure, rec.FailureKind = fmt.Sprintf("model failed to start the conversation: %v", err), record.FailStart
		return rec, nil
	}
	defer c.Close()
	f := c.Format()
	rec.Format = f
	if err := checkFormat(f); err != nil {
		rec.Failure, rec.FailureKind = err.Error(), record.FailFormat
		return rec, nil
	}

	lis, err := newListener()
	if err != nil {
		return nil, fmt.Errorf("session: opening the online detector: %w", err)
	}
	defer lis.Close()

	s := &scheduler{
		opts:  opts,
		f:     f,
		conv:  conv,
		lis:   lis,
		toVAD: newResampler(f.OutputRate, ListenerRate),
		began: began,
	}
	s.plan()
	if err := s.loop(ctx, c, rec); err != nil || rec.Failed() {
		return rec, err
	}
	// The rest of the audible waveform still inside the resampler, then the last
	// partial window.
	if err := lis.Push(s.toVAD.flush()); err != nil {
		return nil, fmt.Errorf("session: online detector: %w", err)
	}
	if rec.Episodes, err = lis.Finish(); err != nil {
		return nil, fmt.Errorf("session: online detector: %w", err)
	}
	return rec, nil
}

func withDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

func checkConversation(conv Conversation) error {
	if conv.Preamble.Rate <= 0 && len(conv.Preamble.Samples) > 0 {
		return fmt.Errorf("session: conversation %s: preamble has sample rate %d", conv.ID, conv.Preamble.Rate)
	}
	if len(conv.Turns) == 0 {
		return fmt.Errorf("session: conversation %s has no turns", conv.ID)
	}
	for i, t := range conv.Turns {
		if t.Audio.Rate <= 0 {
			return fmt.Errorf("session: conversation %s turn %d: audio has sample rate %d", conv.ID, t.Index, t.Audio.Rate)
		}
		if len(t.Audio.Samples) == 0 {
			return fmt.Errorf("session: conversation %s turn %d (position %d): audio is empty; re-synthesise the dataset", conv.ID, t.Index, i)
		}
		if bad := badSample(t.Audio.Samples); bad >= 0 {
			return fmt.Errorf("session: conversation %s turn %d: sample %d is not a finite number; re-synthesise the clip", conv.ID, t.Index, bad)
		}
	}
	if bad := badSample(conv.Preamble.Samples); bad >= 0 {
		return fmt.Errorf("session: conversation %s: preamble sample %d is not a finite number; re-synthesise the preamble", conv.ID, bad)
	}
	return nil
}

// maxFrameSeconds bounds a declared frame: nothing sensible uses frames longer than this.
const maxFrameSeconds = 10

func checkFormat(f sdk.Format) error {
	if f.InputRate < 8000 || f.InputRate > 192000 || f.OutputRate < 8000 || f.OutputRate > 192000 {
		return fmt.Errorf("model declared input rate %d Hz and output rate %d Hz; both must be between 8000 and 192000", f.InputRate, f.OutputRate)
	}
	if f.FrameSize <= 0 || f.FrameSize > maxFrameSeconds*f.InputRate || float64(f.FrameSize) < protocol.MinFrameSeconds*float64(f.InputRate) {
		return fmt.Errorf("model declared a frame of %d samples at %d Hz; it must be between %g ms and %d s (docs/protocol.md section 3.1)",
			f.FrameSize, f.InputRate, protocol.MinFrameSeconds*1000, maxFrameSeconds)
	}
	return nil
}

// segment kinds of the input schedule.
const (
	segAudio = iota
	segSilence
	segWaitAfterT
)

type segment struct {
	kind    int
	samples []float32 // segAudio, at the input rate
	n       int64     // segSilence: length in samples
	turn    int       // segAudio: position in conv.Turns, or -1 for the preamble
}

type scheduler struct {
	opts  Options
	f     sdk.Format
	conv  Conversation
	lis   Listener
	toVAD *resampler
	began time.Time // when the conversation started, for Options.WallTime

	segs []segment
	cur  int   // current segment
	off  int64 // samples of the current segment already played

	bed   []float32 // the background loop at the input rate, or nil
	bedAt int64     // the loop's sample under input sample 0

	tl       timeline.Timeline
	playback []float32
	audible  []float32

	// the wait after T
	wait      *record.TWait
	waitStart int64 // sample where T ended
	onset     bool  // response presence is known (section 3.5)
}

// seconds converts a duration to input samples (section 8 values are seconds).
func (s *scheduler) samples(sec float64) int64 {
	return int64(math.Round(sec * float64(s.f.InputRate)))
}

func (s *scheduler) toInput(p audio.PCM) []float32 {
	if p.Rate == s.f.InputRate {
		return p.Samples
	}
	r := audio.NewResampler(p.Rate, s.f.InputRate)
	out := r.Process(p.Samples)
	return append(out, r.Flush()...)
}

// plan turns the conversation's layout (Lay: section 3.3 rules 1 to 5) into the segments
// the scheduler plays, with each clip's audio at the input rate.
func (s *scheduler) plan() {
	l := Lay(ShapeOf(s.conv), s.opts.Params, s.opts.Seed, s.f.InputRate)
	for _, seg := range l.Segments {
		switch seg.Kind {
		case SegClip:
			var pcm []float32
			if seg.Turn < 0 {
				pcm = preambles.get(s.conv.Preamble, s.f.InputRate, s.toInput)
			} else {
				pcm = s.toInput(s.conv.Turns[seg.Turn].Audio)
			}
			s.segs = append(s.segs, segment{kind: segAudio, samples: pcm, turn: seg.Turn})
		case SegSilence:
			s.segs = append(s.segs, segment{kind: segSilence, n: seg.Samples})
		case SegWait:
			s.segs = append(s.segs, segment{kind: segWaitAfterT})
		}
	}
	s.tl.Turns = make([]timeline.Turn, 0, len(s.conv.Turns))
	if bg := s.conv.Background; len(bg.Samples) > 0 {
		s.bed = beds.get(bg, s.f.InputRate, s.toInput)
		s.bedAt = audio.AtRate(int64(s.conv.BackgroundAt), bg.Rate, s.f.InputRate)
	}
}

// mixBed adds the background loop under frame, which starts at input sample start.
func (s *scheduler) mixBed(start int64, frame []float32) {
	n := int64(len(s.bed))
	if n == 0 {
		return
	}
	j := (s.bedAt + start) % n
	for i := range frame {
		frame[i] += s.bed[j]
		if j++; j == n {
			j = 0
		}
	}
}

// compose fills frame (the input of frame k, starting at sample start) from the schedule.
// It returns false when the schedule was already complete at start: there is no frame k.
func (s *scheduler) compose(start int64, frame []float32) bool {
	pos := 0
	for pos < len(frame) {
		if s.cur == len(s.segs) {
			if pos == 0 {
				return false
			}
			clear(frame[pos:]) // the last frame is padded with silence
			return true
		}
		seg := &s.segs[s.cur]
		at := start + int64(pos)
		switch seg.kind {
		case segAudio:
			if s.off == 0 {
				s.begin(seg, at)
			}
			n := copy(frame[pos:], seg.samples[s.off:])
			pos += n
			s.off += int64(n)
			if s.off == int64(len(seg.samples)) {
				s.end(seg, start+int64(pos))
				s.next()
			}
		case segSilence:
			n := min(int64(len(frame)-pos), seg.n-s.off)
			clear(frame[pos : pos+int(n)])
			pos += int(n)
			s.off += n
			if s.off == seg.n {
				s.next()
			}
		case segWaitAfterT:
			if pos == 0 && s.waitOver(start) {
				s.next()
				continue
			}
			// The wait goes on at least to the next frame boundary: decisions are taken
			// only there, with the audio heard so far.
			clear(frame[pos:])
			pos = len(frame)
		}
	}
	return true
}

func (s *scheduler) next() {
	s.cur++
	s.off = 0
}

func (s *scheduler) sec(sample int64) float64 { return float64(sample) / float64(s.f.InputRate) }

func (s *scheduler) begin(seg *segment, at int64) {
	if seg.turn < 0 {
		s.tl.PreambleStart = s.sec(at)
		return
	}
	t := s.conv.Turns[seg.turn]
	s.tl.Turns = append(s.tl.Turns, timeline.Turn{
		Index: t.Index, Label: t.Label, Speaker: t.Speaker, Text: t.Text, Addressee: t.Addressee,
		Start: s.sec(at), End: s.sec(at),
	})
}

func (s *scheduler) end(seg *segment, at int64) {
	if seg.turn < 0 {
		s.tl.PreambleEnd = s.sec(at)
		return
	}
	s.tl.Turns[len(s.tl.Turns)-1].End = s.sec(at)
	if s.conv.Turns[seg.turn].Label == protocol.LabelT {
		s.waitStart = at
		s.wait = &record.TWait{Start: s.sec(at), End: s.sec(at), Ending: record.WaitCut}
	}
}

// waitOver applies section 3.5 at a frame boundary, with the audio heard up to it.
func (s *scheduler) waitOver(at int64) bool {
	p := s.opts.Params
	elapsed := at - s.waitStart
	h := s.lis.Heard()
	tE := s.sec(s.waitStart)
	presence, known := s.onset, s.onset
	if !s.onset {
		// The scorer's own definition, on what the final episodes can still be.
		presence, known = h.Decide(func(eps []timeline.Episode) bool {
			return timeline.Presence(eps, tE, p.TOnsetWindow)
		}, tE+p.TOnsetWindow)
		s.onset = known && presence
	}
	ending := ""
	switch {
	case known && !presence && elapsed >= s.samples(p.TOnsetWindow):
		ending = record.WaitNoOnset
	case elapsed >= s.samples(p.TWaitCap):
		ending = record.WaitCap
	case s.onset && h.SilentFor(p.TEndSilence):
		ending = record.WaitEndpoint
	}
	if ending == "" {
		return false
	}
	s.wait.End, s.wait.Onset, s.wait.Ending = s.sec(at), s.onset, ending
	return true
}

// drainCount is how many output samples play during input interval k.
func (s *scheduler) drainCount(k int64) int {
	fr, ro, ri := int64(s.f.FrameSize), int64(s.f.OutputRate), int64(s.f.InputRate)
	return int((k+1)*fr*ro/ri - k*fr*ro/ri)
}

// play drains interval k of the playback buffer into the audible waveform and lets the
// online detector hear it.
func (s *scheduler) play(k int64) error {
	n := s.drainCount(k)
	from := len(s.audible)
	m := min(n, len(s.playback))
	s.audible = append(s.audible, s.playback[:m]...)
	s.audible = append(s.audible, make([]float32, n-m)...)
	s.playback = s.playback[m:]
	if len(s.playback) == 0 {
		s.playback = nil // let the backing array go
	}
	return s.lis.Push(s.toVAD.process(s.audible[from:]))
}

func (s *scheduler) loop(ctx context.Context, c sdk.Conversation, rec *record.Record) error {
	frame := make([]float32, s.f.FrameSize)
	var lat []time.Duration
	defer func() {
		rec.Frames = len(lat)
		rec.Latency = summarise(lat)
		s.tl.Duration = s.sec(int64(rec.Frames) * int64(s.f.FrameSize))
		rec.Timeline = s.tl
		rec.Audible = audio.PCM{Samples: s.audible, Rate: s.f.OutputRate}
		rec.TWait = s.wait
	}()
	frameSec := s.sec(int64(s.f.FrameSize))
	for k := int64(0); ; k++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !s.compose(k*int64(s.f.FrameSize), frame) {
			return nil
		}
		s.mixBed(k*int64(s.f.FrameSize), frame)
		if err := s.play(k); err != nil {
			return fmt.Errorf("session: online detector: %w", err)
		}
		stepCtx, cancel := withDeadline(ctx, s.opts.FrameDeadline)
		t0 := time.Now()
		out, err := c.Step(stepCtx, frame)
		took := time.Since(t0)
		// Over gRPC a missed deadline comes back as a status, not context.DeadlineExceeded.
		missed := errors.Is(stepCtx.Err(), context.DeadlineExceeded)
		cancel()
		lat = append(lat, took)
		// Formatted only when a failure needs it: this loop runs once per frame.
		at := func() string { return fmt.Sprintf("frame %d (t=%.3f s)", k, float64(k)*frameSec) }
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err == nil && s.pastWallTime():
			rec.Failure = fmt.Sprintf("the conversation ran past its wall-time bound of %s at %s (the project's bound, docs/protocol.md section 3.7); raise conversation_timeout in the model's plugin block if it needs longer",
				s.wallTime(), at())
			rec.FailureKind = record.FailWallTime
			return nil
		case s.opts.FrameDeadline > 0 && (took > s.opts.FrameDeadline || missed):
			rec.Failure = fmt.Sprintf("model exceeded the per-frame deadline of %s at %s: the step took %s", s.opts.FrameDeadline, at(), took.Round(time.Millisecond))
			rec.FailureKind = record.FailDeadline
			return nil
		case err != nil:
			rec.Failure, rec.FailureKind = fmt.Sprintf("model failed at %s: %v", at(), err), record.FailStep
			if errors.Is(err, context.DeadlineExceeded) {
				rec.FailureKind = record.FailDeadline // the plugin's own frame_timeout
			}
			return nil
		}
		if bad := badSample(out.Samples); bad >= 0 {
			rec.Failure = fmt.Sprintf("model replied to %s with a non-finite sample at index %d", at(), bad)
			rec.FailureKind = record.FailAudio
			return nil
		}
		if out.Flush {
			s.playback = nil
		}
		s.playback = append(s.playback, out.Samples...)
		if float64(len(s.playback)) > maxQueued*float64(s.f.OutputRate) {
			rec.Failure = fmt.Sprintf("model queued more than %g s of unplayed audio by %s", maxQueued, at())
			rec.FailureKind = record.FailQueue
			return nil
		}
		if out.Text != "" {
			rec.Text = append(rec.Text, record.TextPiece{Frame: int(k), Time: float64(k+1) * frameSec, Text: out.Text})
		}
	}
}

func (s *scheduler) wallTime() time.Duration {
	if s.opts.WallTime == 0 {
		return protocol.DefaultConversationWallTime
	}
	return s.opts.WallTime
}

// pastWallTime reports whether the conversation has run past Options.WallTime.
func (s *scheduler) pastWallTime() bool {
	w := s.wallTime()
	return w > 0 && time.Since(s.began) > w
}

func badSample(x []float32) int {
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return i
		}
	}
	return -1
}

func summarise(lat []time.Duration) record.Latency {
	if len(lat) == 0 {
		return record.Latency{}
	}
	s := make([]float64, len(lat))
	sum := 0.0
	for i, d := range lat {
		s[i] = d.Seconds()
		sum += s[i]
	}
	sort.Float64s(s)
	rank := func(q float64) float64 { // nearest rank
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return s[max(i, 0)]
	}
	return record.Latency{Frames: len(s), Mean: sum / float64(len(s)), P50: rank(0.5), P95: rank(0.95), Max: s[len(s)-1]}
}

// resampler feeds the detector; the identity when the rates agree.
type resampler struct{ r *audio.Resampler }

func newResampler(from, to int) *resampler {
	if from == to {
		return &resampler{}
	}
	return &resampler{r: audio.NewResampler(from, to)}
}

func (r *resampler) process(x []float32) []float32 {
	if r.r == nil {
		return x
	}
	return r.r.Process(x)
}

func (r *resampler) flush() []float32 {
	if r.r == nil {
		return nil
	}
	return r.r.Flush()
}

// preambles keeps the resampled preamble: every conversation of a run starts with the
// same ~30 s clip (the same backing array), and resampling it is a sizeable share of a
// session's CPU time. beds does the same for a room's background loop.
var preambles, beds = &resampledCache{}, &resampledCache{}

type resampledCache struct {
	mu      sync.Mutex
	src     *float32
	n, rate int
	out     []float32
}

func (c *resampledCache) get(p audio.PCM, rate int, resample func(audio.PCM) []float32) []float32 {
	if len(p.Samples) == 0 || p.Rate == rate {
		return p.Samples
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.src == &p.Samples[0] && c.n == len(p.Samples) && c.rate == rate {
		return c.out
	}
	out := resample(p)
	c.src, c.n, c.rate, c.out = &p.Samples[0], len(p.Samples), rate, out
	return out
}
