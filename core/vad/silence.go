package vad

import "sync"

// Digital silence. Much of what the detector hears is exact zeros: a model that has said
// nothing yet (every conversation's preamble), or ever (the silent baseline). Silero does
// not reach a fixed point on zeros: from the zero state, 30,000 zero windows (16 minutes)
// never repeat a state bit for bit, v5 or v6, and states reached after speech never meet
// the zero state's trajectory (TestSilenceHasNoFixedPoint records this). So the shortcut
// is exact only from the zero state: the trajectory S_0 = 0, S_k+1 = model(zero window,
// S_k) and its probabilities P_k are the same for every stream that has heard only zeros
// since it started, and the engine computes them once, when the first such stream needs
// them (at the cost of running that stream), for all the streams of the process.
//
// A stream that has heard k zero windows takes P_k from the table; at its first other
// window it needs S_k, which is recomputed from the checkpoint at or below k (at most
// silenceCheckpoint-1 model calls). TestSilentPrefixExact checks streams that leave the
// silence at various k against the bare runtime, bit for bit.

const (
	// silenceCheckpoint: the state is kept every this many windows.
	silenceCheckpoint = 16
	// maxSilentWindows bounds the table: 2^16 windows are 35 minutes (4.5 MB); a longer
	// silence runs the model.
	maxSilentWindows = 1 << 16
)

type silentPrefix struct {
	eng *engine

	mu    sync.Mutex
	probs []float32           // P_0 .. P_n-1
	marks [][stateLen]float32 // marks[j] = S_(j*silenceCheckpoint), j <= n/silenceCheckpoint
	head  *session            // a stream at S_n (zero context)
	err   error               // a model failure while extending: reported to every caller
}

func newSilentPrefix(e *engine) *silentPrefix {
	return &silentPrefix{eng: e, marks: make([][stateLen]float32, 1)}
}

// prob is P_k, computing the table up to k if needed; ok is false beyond the table's bound.
func (t *silentPrefix) prob(k int) (p float32, ok bool, err error) {
	if k >= maxSilentWindows {
		return 0, false, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.probs) <= k {
		if err := t.extendLocked(); err != nil {
			return 0, false, err
		}
	}
	return t.probs[k], true, nil
}

func (t *silentPrefix) extendLocked() error {
	if t.err != nil {
		return t.err
	}
	if t.head == nil {
		// A stream of the engine's own, not counted as a caller's (it lives as long as
		// the engine and holds no runner).
		t.head = &session{eng: t.eng, zeros: -1}
	}
	clear(t.head.win[:])
	var p [1]float32
	if err := t.eng.run([]*session{t.head}, p[:]); err != nil {
		t.err = err
		return err
	}
	t.probs = append(t.probs, p[0])
	if len(t.probs)%silenceCheckpoint == 0 {
		t.marks = append(t.marks, t.head.st)
	}
	return nil
}

// state writes S_k to st. The table must already hold P_0 .. P_k-1 (the stream took them).
func (t *silentPrefix) state(k int, st *[stateLen]float32) error {
	t.mu.Lock()
	j := k / silenceCheckpoint
	*st = t.marks[j]
	t.mu.Unlock()
	s := &session{eng: t.eng, st: *st, zeros: -1}
	var p [1]float32
	for range k - j*silenceCheckpoint {
		if err := t.eng.run([]*session{s}, p[:]); err != nil {
			return err
		}
	}
	*st = s.st
	return nil
}
