package vad

import (
	"math"
	"sort"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// MergeRegions turns raw speech regions, in seconds, into episodes by exactly the rules
// the detector applies to audio (protocol section 4): the segmenter of Segment and
// Online runs over a speech probability of 1 inside a region and 0 outside, one step per
// 16 kHz sample. So a pause of at most merge_pause is merged and an episode at least
// min_speech long is kept, just as in a recording; times are rounded to the sample. Only
// MinSpeech and MergePause of s matter (no padding). Regions with End <= Start are
// ignored, and the cost is linear in the time the regions span: minutes of
// conversation, not days. It is what `duplexmpe explain` scores hand-written speech with.
func MergeRegions(regions []timeline.Episode, s protocol.VAD) []timeline.Episode {
	var spans []span
	for _, r := range regions {
		a, b := int(math.Round(r.Start*SampleRate)), int(math.Round(r.End*SampleRate))
		if r.End > r.Start && b > a {
			spans = append(spans, span{a, b})
		}
	}
	if len(spans) == 0 {
		return nil
	}
	// The speech signal: the union of the regions.
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	union := spans[:1]
	for _, sp := range spans[1:] {
		if last := &union[len(union)-1]; sp.start <= last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		union = append(union, sp)
	}
	offset := min(union[0].start, 0) // the segmenter's time starts at 0

	// Each push stands for one sample, which the segmenter counts as Window samples:
	// its durations are scaled to match.
	g := newSegmenter(protocol.VAD{
		Threshold:  protocol.DefaultVAD().Threshold,
		MinSpeech:  s.MinSpeech * Window,
		MergePause: s.MergePause * Window,
	})
	// Enough silence after the last region to close every episode.
	total := union[len(union)-1].end - offset + int(math.Ceil(s.MergePause*SampleRate)) + 2
	k := 0
	for i := range total {
		t := i + offset
		for k < len(union) && union[k].end <= t {
			k++
		}
		var p float32
		if k < len(union) && union[k].start <= t {
			p = 1
		}
		g.push(p)
	}
	eps := g.episodes(total*Window, true)
	if len(eps) == 0 {
		return nil
	}
	for i := range eps {
		eps[i].Start = eps[i].Start/Window + float64(offset)/SampleRate
		eps[i].End = eps[i].End/Window + float64(offset)/SampleRate
	}
	return eps
}
