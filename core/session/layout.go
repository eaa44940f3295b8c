package session

import (
	"fmt"
	"hash/fnv"
	"math"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// The layout of a conversation (docs/protocol.md section 3.3) is the one statement of
// where the scheduler places every segment of the input stream: the preamble and
// preamble_gap (rule 1), every turn with the silence after it (rule 2: turn_gap, the
// turn's natural gap under gap_profile "natural", or the timing-cue control's pad of
// section 3.6), the closed-loop wait after T (rule 3), n4_gap (rule 4) and the tail
// (rule 5). The scheduler plays it (Run); `plan`, the disk check before playing and
// anything else that needs a conversation's length call it too (core/plan), so the
// length they count is the length played.

// Clip is the length of a stretch of audio: Samples at Rate (Hz).
type Clip struct {
	Samples int64
	Rate    int
}

// ClipOf is the length of p.
func ClipOf(p audio.PCM) Clip { return Clip{Samples: int64(len(p.Samples)), Rate: p.Rate} }

// Shape is what the layout needs of a conversation: its identity (the timing-cue
// control's pads are drawn from it), the preamble's length and each turn's label, clip
// length and natural gap.
type Shape struct {
	ID string
	// PairID is shared by both versions of a scenario pair; empty means ID.
	PairID   string
	Preamble Clip
	Turns    []ShapeTurn
}

// ShapeTurn is one turn of a Shape.
type ShapeTurn struct {
	Label     string
	Clip      Clip
	GapAfterS float64
}

// ShapeOf is the shape of conv.
func ShapeOf(conv Conversation) Shape {
	sh := Shape{ID: conv.ID, PairID: conv.PairID, Preamble: ClipOf(conv.Preamble)}
	for _, t := range conv.Turns {
		sh.Turns = append(sh.Turns, ShapeTurn{Label: t.Label, Clip: ClipOf(t.Audio), GapAfterS: t.GapAfterS})
	}
	return sh
}

// SegmentKind is what a segment of the layout plays.
type SegmentKind int

const (
	// SegClip is a clip: the preamble (Turn -1) or a turn's audio.
	SegClip SegmentKind = iota
	// SegSilence is a fixed silence: preamble_gap, a gap after a turn, n4_gap, the tail.
	SegSilence
	// SegWait is the closed-loop wait after T (section 3.5): it begins where T ends and
	// ends at a frame boundary that the audio heard decides; Samples is its cap
	// (t_wait_cap), the longest it lasts.
	SegWait
)

// Segment is one stretch of the input stream. Samples is its length at the layout's
// rate (for SegWait, its cap). Turn is the position in the conversation's turns of the
// clip, or of the turn the silence or wait follows; -1 for the preamble and its gap,
// and for the tail.
type Segment struct {
	Kind    SegmentKind
	Turn    int
	Samples int64
}

// Layout is a conversation laid out on the input stream of a model whose input rate is
// Rate.
type Layout struct {
	Rate     int
	Segments []Segment
}

// Lay lays out sh for a model of input rate rate under p; seed is the item's seed (the
// timing-cue control draws its pads from it). Every length is an exact sample count
// (round(seconds*rate); a clip at another rate is as long as the scheduler's resampler
// makes it), so every model hears the same conversation whatever its frame size. It is
// a pure function: the scheduler plays what it returns.
func Lay(sh Shape, p protocol.Params, seed int64, rate int) Layout {
	samples := func(sec float64) int64 { return int64(math.Round(sec * float64(rate))) }
	l := Layout{Rate: rate}
	add := func(kind SegmentKind, turn int, n int64) {
		l.Segments = append(l.Segments, Segment{Kind: kind, Turn: turn, Samples: n})
	}
	// Rule 1: fresh state (Start) -> preamble -> preamble_gap.
	add(SegClip, -1, resampledLength(sh.Preamble, rate))
	add(SegSilence, -1, samples(p.PreambleGap))
	last := len(sh.Turns) - 1
	for i, t := range sh.Turns {
		add(SegClip, i, resampledLength(t.Clip, rate))
		switch {
		case t.Label == protocol.LabelT:
			// Rule 3: the closed-loop wait replaces turn_gap.
			add(SegWait, i, samples(p.TWaitCap))
		case i == last:
		case t.Label == protocol.LabelN4Q:
			// Rule 4: exactly n4_gap, then N4_R whatever the model does.
			add(SegSilence, i, samples(p.N4Gap))
		default:
			// Rule 2, or the timing-cue control's pad (section 3.6).
			add(SegSilence, i, samples(ordinaryGap(sh, i, p, seed)))
		}
	}
	// Rule 5: tail, then the end.
	add(SegSilence, -1, samples(p.Tail))
	return l
}

// resampledLength is how many samples c lasts at rate: what the scheduler's resampler
// (audio.Resampler, Process then Flush) makes of it.
func resampledLength(c Clip, rate int) int64 {
	if c.Samples == 0 || c.Rate == rate || c.Rate <= 0 {
		return c.Samples
	}
	return audio.ResampledLength(c.Samples, c.Rate, rate)
}

// ordinaryGap is the silence after ordinary turn i (not T, N4_Q or the last turn):
// turn_gap, under gap_profile "natural" the turn's own recorded gap, or with
// timing_control one of the conversation's request gaps (t_onset_window for its T,
// n4_gap for each N4_Q), drawn from the seed, the pair and the turn's position so that
// both versions of a pair get the same pads (section 3.6).
func ordinaryGap(sh Shape, i int, p protocol.Params, seed int64) float64 {
	if p.Natural() {
		return sh.Turns[i].GapAfterS
	}
	if !p.TimingControl {
		return p.TurnGap
	}
	var gaps []float64
	for _, t := range sh.Turns {
		switch t.Label {
		case protocol.LabelT:
			gaps = append(gaps, p.TOnsetWindow)
		case protocol.LabelN4Q:
			gaps = append(gaps, p.N4Gap)
		}
	}
	if len(gaps) == 0 {
		return p.TurnGap
	}
	pair := sh.PairID
	if pair == "" {
		pair = sh.ID
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "timing-control\x00%d\x00%s\x00%d", seed, pair, i)
	return math.Max(p.TurnGap, gaps[h.Sum64()%uint64(len(gaps))])
}

// Length is how many input samples the scheduler plays of l to a model of frame
// samples per frame when every wait after T lasts to its cap, the longest a
// conversation plays: a wait ends at the first frame boundary at or after its cap
// (decisions are taken only at frame boundaries), and the session ends at the first
// frame boundary at or after the end of the tail. frame 1 (or less) is the length on
// the sample, without frames. A model that does not answer T waits about
// t_onset_window instead; one that answers, until it falls silent, up to the cap.
func (l Layout) Length(frame int) int64 {
	f := int64(max(frame, 1))
	up := func(n int64) int64 { return (n + f - 1) / f * f }
	var at int64
	for _, s := range l.Segments {
		if s.Kind == SegWait {
			at = up(at + s.Samples)
			continue
		}
		at += s.Samples
	}
	return up(at)
}

// Seconds is Length in seconds.
func (l Layout) Seconds(frame int) float64 {
	if l.Rate <= 0 {
		return 0
	}
	return float64(l.Length(frame)) / float64(l.Rate)
}

// SilentPauses is the silence after each turn of conv as the schedule (Lay) plays it to a
// model that never speaks: a gap, n4_gap, or the tail after the last turn, and after T
// the closed-loop wait, which for a silent model ends at t_onset_window (section 3.5).
// It is what a responder that acts on pause length alone hears (`dataset audit`'s pause
// check, core/audit).
func SilentPauses(p protocol.Params, conv Conversation, seed int64) []float64 {
	const rate = 48000
	out := make([]float64, len(conv.Turns))
	l := Lay(ShapeOf(conv), p, seed, rate)
	for i, seg := range l.Segments {
		if seg.Kind != SegClip || seg.Turn < 0 {
			continue
		}
		next := l.Segments[i+1] // every clip is followed by a silence, a wait or the tail
		switch next.Kind {
		case SegWait:
			out[seg.Turn] = p.TOnsetWindow
		default:
			out[seg.Turn] = float64(next.Samples) / rate
		}
	}
	return out
}
