package vad

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// Batching. Silero's cost per window falls with the batch size (about 2.5 times less per
// window at 32 rows than at 1 on this CPU), and the rows of a batch do not affect each
// other: every row of every batch size gives, bit for bit, what the same stream gives
// alone at batch 1 (TestBatchRowsEqualBatchOne, v5 and v6). So the streams of a Detector
// share its engine: the windows of streams that step at the same time run as one batch,
// and no result depends on which streams met in a batch, or when.
//
// Online detectors (conversations played in parallel, each feeding its own Online) and
// concurrent Probabilities or Episodes calls are batched this way with nothing to set up:
// whoever brings a window while no runner is free waits, and the next batch takes every
// waiting window (combining). ProbabilitiesMany and EpisodesMany batch stored audio from
// one goroutine, a clip per row.

// DefaultBatchRows is the most windows one model call takes.
const DefaultBatchRows = 32

// engine runs the windows of a Detector's streams on up to maxRunners ONNX Runtime
// sessions of rows rows each.
type engine struct {
	path       string
	data       []byte
	rows       int
	maxRunners int
	silence    *silentPrefix

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*job
	free    []*runner
	runners int
	streams int // sessions handed out and not yet destroyed
	closed  bool
}

// job is the windows of one caller, in one batch.
type job struct {
	streams []*session
	probs   []float32
	taken   bool // in a batch that a caller runs
	done    bool
	err     error
}

func newEngine(path string, data []byte) *engine {
	e := &engine{path: path, data: data, rows: DefaultBatchRows, maxRunners: max(1, runtime.GOMAXPROCS(0))}
	e.cond = sync.NewCond(&e.mu)
	e.silence = newSilentPrefix(e)
	return e
}

// newSession hands out a stream. The first one creates the first runner, so that a model
// ONNX Runtime cannot run fails at Open.
func (e *engine) newSession() (*session, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errClosed
	}
	if e.runners == 0 {
		r, err := newRunner(e.path, e.data, e.rows)
		if err != nil {
			return nil, err
		}
		e.runners++
		e.free = append(e.free, r)
	}
	e.streams++
	return &session{eng: e}, nil
}

// release returns a stream; the runners go when the engine is closed and the last
// stream is released.
func (e *engine) release() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.streams--
	e.freeIfDoneLocked()
}

// close ends the engine once its streams are released (calls still running finish).
func (e *engine) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	e.freeIfDoneLocked()
}

func (e *engine) freeIfDoneLocked() {
	if !e.closed || e.streams > 0 || e.runners > len(e.free) {
		return
	}
	for _, r := range e.free {
		r.destroy()
	}
	e.free, e.runners = nil, 0
}

// run steps each stream by its window (session.win), writing the probabilities to probs,
// in a batch with whatever other windows are waiting. len(streams) <= e.rows.
func (e *engine) run(streams []*session, probs []float32) error {
	if len(streams) > e.rows {
		return fmt.Errorf("vad: %d streams in one call; at most %d", len(streams), e.rows)
	}
	j := &job{streams: streams, probs: probs}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.queue = append(e.queue, j)
	for !j.done {
		if j.taken { // another caller runs it
			e.cond.Wait()
			continue
		}
		r, err := e.runnerLocked()
		if err != nil {
			e.removeLocked(j)
			return err
		}
		if r == nil { // every runner is busy: a leader will take j, or free one
			e.cond.Wait()
			continue
		}
		batch := e.takeLocked() // not empty: j is queued (it may wait for a later batch)
		e.mu.Unlock()
		err = runBatch(r, batch)
		e.mu.Lock()
		for _, b := range batch {
			b.done, b.err = true, err
		}
		e.free = append(e.free, r)
		e.cond.Broadcast()
	}
	return j.err
}

// runnerLocked takes a free runner, or makes one while there are fewer than maxRunners;
// nil when all are busy.
func (e *engine) runnerLocked() (*runner, error) {
	if n := len(e.free); n > 0 {
		r := e.free[n-1]
		e.free = e.free[:n-1]
		return r, nil
	}
	if e.runners >= e.maxRunners {
		return nil, nil
	}
	r, err := newRunner(e.path, e.data, e.rows)
	if err != nil {
		return nil, err
	}
	e.runners++
	return r, nil
}

// takeLocked takes waiting jobs, oldest first, up to rows windows.
func (e *engine) takeLocked() []*job {
	n, k := 0, 0
	for k < len(e.queue) && n+len(e.queue[k].streams) <= e.rows {
		n += len(e.queue[k].streams)
		k++
	}
	batch := append([]*job(nil), e.queue[:k]...)
	for _, j := range batch {
		j.taken = true
	}
	e.queue = append(e.queue[:0], e.queue[k:]...)
	return batch
}

func (e *engine) removeLocked(j *job) {
	for i, q := range e.queue {
		if q == j {
			e.queue = append(e.queue[:i], e.queue[i+1:]...)
			return
		}
	}
}

func runBatch(r *runner, batch []*job) error {
	if len(batch) == 1 {
		return r.run(batch[0].streams, batch[0].probs)
	}
	var streams []*session
	for _, j := range batch {
		streams = append(streams, j.streams...)
	}
	probs := make([]float32, len(streams))
	if err := r.run(streams, probs); err != nil {
		return err
	}
	for _, j := range batch {
		n := copy(j.probs, probs)
		probs = probs[n:]
	}
	return nil
}

// ProbabilitiesMany is Probabilities for several clips of 16 kHz audio at once, each an
// independent stream: up to DefaultBatchRows of them step together, one window each per
// model call, and a finished clip's row goes to the next clip. The result for each clip is
// bit for bit what Probabilities gives for it alone.
func (d *Detector) ProbabilitiesMany(clips [][]float32) ([][]float32, error) {
	out := make([][]float32, len(clips))
	next := 0 // the next clip to start
	// start puts the next non-empty clip on l; false when there is none.
	start := func(l *lane) bool {
		for ; next < len(clips); next++ {
			if len(clips[next]) == 0 {
				out[next] = []float32{}
				continue
			}
			l.clip, l.off = next, 0
			l.s.reset()
			out[next] = make([]float32, 0, (len(clips[next])+Window-1)/Window)
			next++
			return true
		}
		l.clip = -1
		return false
	}
	var lanes []*lane
	defer func() {
		for _, l := range lanes {
			d.put(l.s)
		}
	}()
	for len(lanes) < d.eng.rows && next < len(clips) {
		s, err := d.get()
		if err != nil {
			return nil, err
		}
		l := &lane{s: s}
		lanes = append(lanes, l)
		if !start(l) {
			break
		}
	}
	// advance records p for l's window and moves l on, to the next clip after its last.
	advance := func(l *lane, p float32) {
		out[l.clip] = append(out[l.clip], p)
		if l.off += Window; l.off >= len(clips[l.clip]) {
			start(l)
		}
	}
	batch := make([]*session, 0, len(lanes))
	owner := make([]*lane, 0, len(lanes))
	probs := make([]float32, len(lanes))
	for {
		batch, owner = batch[:0], owner[:0]
		for _, l := range lanes {
			if l.clip < 0 {
				continue
			}
			w := clips[l.clip][l.off:min(l.off+Window, len(clips[l.clip]))]
			p, silent, err := l.s.prepare(w)
			if err != nil {
				return nil, err
			}
			if silent {
				advance(l, p)
				continue
			}
			batch, owner = append(batch, l.s), append(owner, l)
		}
		if len(batch) == 0 {
			if allDone(lanes) {
				return out, nil
			}
			continue // every lane answered from the silent prefix this round
		}
		if err := d.eng.run(batch, probs[:len(batch)]); err != nil {
			return nil, err
		}
		for i, l := range owner {
			advance(l, probs[i])
		}
	}
}

// lane is one row of ProbabilitiesMany: a stream and where it is in its clip.
type lane struct {
	s         *session
	clip, off int // clip < 0: no clip left for this lane
}

func allDone(lanes []*lane) bool {
	for _, l := range lanes {
		if l.clip >= 0 {
			return false
		}
	}
	return true
}

// EpisodesMany is Episodes for several clips at once (any sample rates), batched as
// ProbabilitiesMany; the result for each clip is what Episodes gives for it alone.
func (d *Detector) EpisodesMany(clips []audio.PCM, s protocol.VAD) ([][]timeline.Episode, error) {
	if err := d.checkSettings(s); err != nil {
		return nil, err
	}
	p16 := make([][]float32, len(clips))
	for i, p := range clips {
		if p.Rate < 1 {
			return nil, fmt.Errorf("vad: clip %d has sample rate %d", i, p.Rate)
		}
		p16[i] = audio.Resample(p, SampleRate).Samples
	}
	probs, err := d.ProbabilitiesMany(p16)
	if err != nil {
		return nil, err
	}
	out := make([][]timeline.Episode, len(clips))
	for i := range clips {
		out[i] = Segment(probs[i], len(p16[i]), s)
	}
	return out, nil
}
