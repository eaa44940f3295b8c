package vad

import (
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// Segment turns per-window speech probabilities (one per Window samples at 16 kHz, as
// Probabilities returns them) of numSamples samples of audio into speech episodes in
// seconds, by docs/protocol.md section 4.2. It is get_speech_timestamps of the reference
// silero-vad with min_silence_duration = merge_pause, min_speech_duration = min_speech,
// speech_pad = speech_pad, neg_threshold = s.EffectiveNegThreshold() (Silero's
// max(threshold - 0.15, 0.01) by default) and no maximum speech duration, with two
// deliberate differences: an episode exactly min_speech long is kept (the protocol drops
// only shorter ones; the reference drops it too), and a pause closes the episode at the
// first window merge_pause or more after it began that is below threshold, not only at
// one below neg_threshold (windows between the thresholds cannot hold a pause open, so
// an episode's end is final merge_pause after its pause began). Settings are taken as
// given: check them with s.Validate first.
func Segment(probs []float32, numSamples int, s protocol.VAD) []timeline.Episode {
	sg := newSegmenter(s)
	for _, p := range probs {
		sg.push(p)
	}
	return sg.episodes(numSamples, true)
}

// span is an episode in samples at 16 kHz, [start, end).
type span struct{ start, end int }

// segmenter is the state machine shared by Segment and Online, so that both give the same
// episodes by construction. It sees one probability per window.
type segmenter struct {
	threshold, neg        float64
	minSpeech, minSilence float64 // samples
	pad                   float64 // samples

	windows   int  // windows seen
	triggered bool // an episode is open
	start     int  // its start
	tempEnd   int  // where the current pause (first window below neg) began; -1 if none
	closed    []span
}

func newSegmenter(s protocol.VAD) *segmenter {
	return &segmenter{
		threshold:  s.Threshold,
		neg:        s.EffectiveNegThreshold(),
		minSpeech:  s.MinSpeech * SampleRate,
		minSilence: s.MergePause * SampleRate,
		pad:        s.SpeechPad * SampleRate,
		tempEnd:    -1,
	}
}

func (g *segmenter) push(prob float32) {
	p := float64(prob)
	pos := g.windows * Window
	g.windows++
	if p >= g.threshold {
		g.tempEnd = -1
		if !g.triggered {
			g.triggered, g.start = true, pos
		}
		return
	}
	if !g.triggered {
		return
	}
	if p < g.neg && g.tempEnd < 0 {
		g.tempEnd = pos // a pause begins
	}
	// A window between the thresholds neither begins nor ends a pause, but one that comes
	// merge_pause or more after the pause began closes the episode like a window below
	// neg (docs/protocol.md section 4.2; Silero waits for a window below neg). Otherwise
	// faint output held the pause open for ever, and a later loud window, or the end of
	// the audio, extended the episode backwards over decisions already taken (issue 24).
	if g.tempEnd < 0 || float64(pos-g.tempEnd) < g.minSilence {
		return
	}
	if float64(g.tempEnd-g.start) >= g.minSpeech {
		g.closed = append(g.closed, span{g.start, g.tempEnd})
	}
	g.triggered, g.tempEnd = false, -1
}

// heard is what the windows so far say about the final episodes (docs/protocol.md
// section 3.4), without padding. An open episode ends no earlier than the start of its
// pause, or than the audio processed when it is not in one: closing it takes a window
// below threshold merge_pause after the pause began (so a pause is resolved by then),
// and the end of the audio gives it the audio's length. It is kept for certain once it is min_speech long up to there.
func (g *segmenter) heard() timeline.Heard {
	sec := func(n int) float64 { return float64(n) / SampleRate }
	h := timeline.Heard{Until: sec(g.windows * Window)}
	for _, sp := range g.closed {
		h.Closed = append(h.Closed, timeline.Episode{Start: sec(sp.start), End: sec(sp.end)})
	}
	if g.triggered {
		h.Open = &timeline.Episode{Start: sec(g.start), End: sec(g.openEnd())}
		h.OpenKept = g.openKept()
	}
	return h
}

// openEnd is where the open episode stands: the start of its pause, or the audio's end.
func (g *segmenter) openEnd() int {
	if g.tempEnd >= 0 {
		return g.tempEnd
	}
	return g.windows * Window
}

// openKept reports an open episode that is min_speech long up to where it stands.
func (g *segmenter) openKept() bool {
	return g.triggered && float64(g.openEnd()-g.start) >= g.minSpeech
}

// episodes pads and converts the closed episodes, plus, if withOpen, the open one ended at
// numSamples (the end of the audio). Padding follows the reference: the first start moves
// back by pad, neighbours closer than 2*pad split the gap, every other end moves forward
// by pad, all clamped to [0, numSamples]. Without withOpen the result is still what the
// offline segmenter gives for the closed episodes: an open episode is padded against but
// not returned.
func (g *segmenter) episodes(numSamples int, withOpen bool) []timeline.Episode {
	spans := append([]span(nil), g.closed...)
	open := g.triggered && float64(numSamples-g.start) >= g.minSpeech
	if open {
		spans = append(spans, span{g.start, numSamples})
	}
	padSpans(spans, numSamples, g.pad)
	if open && !withOpen {
		spans = spans[:len(spans)-1]
	}
	out := make([]timeline.Episode, len(spans))
	for i, sp := range spans {
		out[i] = timeline.Episode{Start: float64(sp.start) / SampleRate, End: float64(sp.end) / SampleRate}
	}
	return out
}

func padSpans(s []span, numSamples int, pad float64) {
	if pad <= 0 {
		return
	}
	for i := range s {
		if i == 0 {
			s[i].start = int(max(0, float64(s[i].start)-pad))
		}
		if i == len(s)-1 {
			s[i].end = int(min(float64(numSamples), float64(s[i].end)+pad))
			continue
		}
		gap := s[i+1].start - s[i].end
		if float64(gap) < 2*pad {
			s[i].end += gap / 2
			s[i+1].start = max(0, s[i+1].start-gap/2)
		} else {
			s[i].end = int(min(float64(numSamples), float64(s[i].end)+pad))
			s[i+1].start = int(max(0, float64(s[i+1].start)-pad))
		}
	}
}
