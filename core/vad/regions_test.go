package vad

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// Hand-written regions follow the detector's own rules: a pause shorter than the merge
// edge (832 ms with 32 ms windows at merge_pause 800 ms) is merged, one of the edge is
// not (issue 24: pauses between 0.8 s and 0.832 s were split, though a recording merges
// them); an episode of exactly min_speech is kept, one a sample shorter dropped.
func TestMergeRegionsBoundaries(t *testing.T) {
	s := protocol.DefaultVAD() // merge_pause 0.8, min_speech 0.12
	sample := 1.0 / SampleRate
	for _, tc := range []struct {
		name string
		in   []timeline.Episode
		want []timeline.Episode
	}{
		{"pause of merge_pause merges", []timeline.Episode{{Start: 5, End: 6}, {Start: 6.8, End: 8}}, []timeline.Episode{{Start: 5, End: 8}}},
		{"pause of 0.82 s merges", []timeline.Episode{{Start: 5, End: 6}, {Start: 6.82, End: 8}}, []timeline.Episode{{Start: 5, End: 8}}},
		{"pause a sample short of the edge merges", []timeline.Episode{{Start: 5, End: 6}, {Start: 6.832 - sample, End: 8}}, []timeline.Episode{{Start: 5, End: 8}}},
		{"pause of the edge splits", []timeline.Episode{{Start: 5, End: 6}, {Start: 6.832, End: 8}},
			[]timeline.Episode{{Start: 5, End: 6}, {Start: 6.832, End: 8}}},
		{"min_speech kept", []timeline.Episode{{Start: 1, End: 1.12}}, []timeline.Episode{{Start: 1, End: 1.12}}},
		{"shorter dropped", []timeline.Episode{{Start: 1, End: 1.12 - sample}}, nil},
		{"overlapping and unsorted", []timeline.Episode{{Start: 3, End: 4}, {Start: 1, End: 2.5}, {Start: 2, End: 2.2}}, []timeline.Episode{{Start: 1, End: 4}}},
		{"empty regions ignored", []timeline.Episode{{Start: 2, End: 2}, {Start: 3, End: 1}}, nil},
	} {
		if got := MergeRegions(tc.in, s); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v -> %v; want %v", tc.name, tc.in, got, tc.want)
		}
	}
}

// The edge for other merge_pause values: one whole window more than merge_pause needs.
func TestMergeEdge(t *testing.T) {
	for _, c := range []struct{ mp, want float64 }{{0.8, 0.832}, {0.2, 0.256}, {0.81, 0.864}, {0.032, 0.064}, {0, 0.032}} {
		if got := MergeEdge(c.mp); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("MergeEdge(%g) = %g, want %g", c.mp, got, c.want)
		}
	}
}

// On regions aligned to the detector's 32 ms windows, MergeRegions gives exactly the
// episodes Segment finds in the corresponding probabilities.
func TestMergeRegionsAgreesWithSegment(t *testing.T) {
	s := protocol.DefaultVAD()
	s.SpeechPad = 0
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		var regions []timeline.Episode
		var probs []float32
		w := 0
		for range 1 + rng.IntN(8) {
			w += rng.IntN(40) // silence, up to 1.28 s: around merge_pause
			n := 1 + rng.IntN(12)
			regions = append(regions, timeline.Episode{Start: float64(w*Window) / SampleRate, End: float64((w+n)*Window) / SampleRate})
			for len(probs) < w {
				probs = append(probs, 0.05)
			}
			for range n {
				probs = append(probs, 0.9)
			}
			w += n
		}
		for range 40 { // let the last episode close
			probs = append(probs, 0.05)
		}
		want := Segment(probs, len(probs)*Window, s)
		if len(want) == 0 {
			want = nil
		}
		if got := MergeRegions(regions, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: regions %v: MergeRegions %v, Segment %v", trial, regions, got, want)
		}
	}
}
