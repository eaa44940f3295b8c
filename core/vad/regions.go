package vad

import (
	"math"
	"sort"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// MergeEdge is the shortest pause, in seconds, that can close an episode in a recording
// (docs/protocol.md section 4.4): the segmenter closes an episode at a window below the
// threshold that starts merge_pause or more after the pause began, so with 32 ms windows
// the pause must hold ceil(merge_pause / 32 ms) + 1 whole windows: 832 ms at the default
// 800 ms. A pause shorter than that is always merged; one of at least that splits when it
// holds that many whole windows (always, from one window more: 864 ms).
func MergeEdge(mergePause float64) float64 {
	return float64(mergeEdgeSamples(mergePause)) / SampleRate
}

// mergeEdgeSamples is MergeEdge in 16 kHz samples, computed with the segmenter's own
// comparison.
func mergeEdgeSamples(mergePause float64) int {
	minSilence := mergePause * SampleRate
	k := max(0, int(math.Ceil(minSilence/Window))-1)
	for float64(k*Window) < minSilence {
		k++
	}
	return (k + 1) * Window
}

// MergeRegions turns raw speech regions, in seconds, into episodes by the rules the
// detector applies to audio (protocol section 4): the segmenter of Segment and Online
// runs over a speech probability of 1 inside a region and 0 outside, one step per 16 kHz
// sample, with the detector's merge edge: a pause shorter than MergeEdge (832 ms at the
// default merge_pause) is merged, as in any recording, and a longer one splits, as when
// the pause is aligned to the 32 ms windows (issue 24: explain used to split pauses
// between merge_pause and the edge, which a recording merges). An episode at least
// min_speech long is kept; times are rounded to the sample. Only MinSpeech and MergePause
// of s matter (no padding). Regions with End <= Start are ignored, and the cost is linear
// in the time the regions span: minutes of conversation, not days. It is what `duplexmpe
// explain` scores hand-written speech with.
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
	// its durations are scaled to match. Stepping per sample, it closes an episode at a
	// silent sample merge_pause or more after the pause began, so a pause of edge samples
	// splits when merge_pause is edge - 1 samples.
	edge := mergeEdgeSamples(s.MergePause)
	g := newSegmenter(protocol.VAD{
		Threshold:  protocol.DefaultVAD().Threshold,
		MinSpeech:  s.MinSpeech * Window,
		MergePause: float64(edge-1) / SampleRate * Window,
	})
	// Enough silence after the last region to close every episode.
	total := union[len(union)-1].end - offset + edge + 2
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
