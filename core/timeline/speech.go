package timeline

import "math"

// The definitions of docs/protocol.md section 4.3, in one place: the scorer applies them
// to the final episodes, the scheduler to what it has heard so far (Heard.Decide), so
// both read "the model is speaking" the same way.

// FirstOnset is the first episode start s with lo < s <= hi (an onset is an episode
// start). eps must be sorted by start.
func FirstOnset(eps []Episode, lo, hi float64) (float64, bool) {
	for _, e := range eps {
		if e.Start > lo && e.Start <= hi {
			return e.Start, true
		}
	}
	return 0, false
}

// Overlapping clips every episode that overlaps [a, b) to it.
func Overlapping(eps []Episode, a, b float64) []Episode {
	var out []Episode
	for _, e := range eps {
		if e.Start < b && e.End > a {
			out = append(out, Episode{Start: math.Max(e.Start, a), End: math.Min(e.End, b)})
		}
	}
	return out
}

// Presence is response presence on a T turn that ended at tE (section 5.2): active(tE),
// or an onset in the onset window after tE (score.OnsetWindowRule states it). It looks at
// no episode starting after tE + window.
func Presence(eps []Episode, tE, window float64) bool {
	if Active(eps, tE) {
		return true
	}
	_, ok := FirstOnset(eps, tE, tE+window)
	return ok
}

// Heard is what the audio heard so far says about the final episodes of a stream
// (section 3.4). Closed episodes are final. Open, when set, is an episode that has begun
// and not ended: its Start is final; its End is where it stands, the start of its current
// pause or Until; its final end is End or later, and unless OpenKept it may still be
// dropped (shorter than min_speech). Every episode not yet begun starts at Until or later.
type Heard struct {
	Closed   []Episode
	Open     *Episode
	OpenKept bool
	// Until is the end of the audio heard, in seconds.
	Until float64
}

// Current is the speech heard so far as it stands: the closed episodes and the open one
// if it will be kept, ended where it stands.
func (h Heard) Current() []Episode {
	out := append([]Episode(nil), h.Closed...)
	if h.Open != nil && h.OpenKept {
		out = append(out, *h.Open)
	}
	return out
}

// Voicing reports an open episode that is not in a pause: its last window reached the
// lower threshold, so it reaches the end of the audio heard.
func (h Heard) Voicing() bool { return h.Open != nil && h.Open.End >= h.Until }

// SilentFor reports t_end_silence with no episode (section 3.5): the speech heard ended at
// least d before the end of the audio heard. It follows the scorer's episodes: the closed
// ones, which are final. An open episode already sure to be kept is speech that has not
// ended (voicing, or in a pause that may still merge with what follows: a pause is
// resolved merge_pause after it began, so this holds the endpoint only when d is shorter
// than that). An open episode not yet sure to be kept is no speech, voicing or not:
// clicks shorter than min_speech are dropped by the scorer, so they never hold the
// endpoint (issue 24: with 1 s frames, a click still voicing at every decision ran the wait
// to the cap). Speech that began less than min_speech before the decision is therefore
// not known to be speech yet, and may begin under the next turn.
func (h Heard) SilentFor(d float64) bool {
	if h.Open != nil && h.OpenKept {
		return false
	}
	return len(Overlapping(h.Closed, h.Until-d+1e-9, math.Inf(1))) == 0
}

// Decide evaluates q, a question about the final episodes, on what has been heard, and
// says whether the answer is already certain. q must be monotone (adding an episode, or
// moving an episode's end later, never turns true into false) and must not look at
// episodes that start after upTo. Then the answer is known true when q holds for the
// least the final episodes can be (Current), known false when it fails for the most they
// can be (the open episode never ending) and no episode can still begin at or before upTo.
func (h Heard) Decide(q func([]Episode) bool, upTo float64) (value, known bool) {
	if q(h.Current()) {
		return true, true
	}
	if upTo >= h.Until {
		return false, false
	}
	most := append([]Episode(nil), h.Closed...)
	if h.Open != nil {
		most = append(most, Episode{Start: h.Open.Start, End: math.Inf(1)})
	}
	if q(most) {
		return false, false
	}
	return false, true
}
