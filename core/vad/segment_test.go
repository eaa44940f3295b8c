package vad

import (
	"reflect"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// windows builds a probability track from runs of (probability, number of windows).
func windows(runs ...any) []float32 {
	var out []float32
	for i := 0; i < len(runs); i += 2 {
		for range runs[i+1].(int) {
			out = append(out, float32(runs[i].(float64)))
		}
	}
	return out
}

func ep(startWin, endWin float64) timeline.Episode {
	return timeline.Episode{Start: startWin * Window / SampleRate, End: endWin * Window / SampleRate}
}

func TestSegmentRules(t *testing.T) {
	def := protocol.DefaultVAD() // 0.5, neg 0.35, min_speech 120 ms = 3.75 windows, merge 800 ms = 25 windows
	for _, c := range []struct {
		name  string
		probs []float32
		n     int // samples; 0 means len(probs)*Window
		s     protocol.VAD
		want  []timeline.Episode
	}{
		{"nothing", nil, 0, def, []timeline.Episode{}},
		{"silence", windows(0.1, 50), 0, def, []timeline.Episode{}},
		{"one episode", windows(0.0, 10, 0.9, 20, 0.0, 30), 0, def, []timeline.Episode{ep(10, 30)}},
		{"probability exactly at threshold starts speech", windows(0.0, 2, 0.5, 8, 0.0, 30), 0, def, []timeline.Episode{ep(2, 10)}},
		{"short blip dropped", windows(0.0, 10, 0.9, 3, 0.0, 30), 0, def, []timeline.Episode{}},
		{"four windows kept (128 ms)", windows(0.0, 10, 0.9, 4, 0.0, 30), 0, def, []timeline.Episode{ep(10, 14)}},
		// As in the reference, an episode closes on a silent window that starts merge_pause
		// or more after the silence began: 25 silent windows (800 ms) are still merged.
		{"pause of 25 windows merged", windows(0.9, 10, 0.0, 25, 0.9, 10, 0.0, 30), 0, def, []timeline.Episode{ep(0, 45)}},
		{"pause of 26 windows splits", windows(0.9, 10, 0.0, 26, 0.9, 10, 0.0, 30), 0, def, []timeline.Episode{ep(0, 10), ep(36, 46)}},
		{"an episode not closed by the end runs to the last sample", windows(0.9, 10, 0.0, 20), 0, def, []timeline.Episode{ep(0, 30)}},
		// Between the thresholds the episode neither continues nor restarts its silence:
		// the pause counts from the first window below 0.35.
		{"hysteresis", windows(0.9, 10, 0.4, 40, 0.0, 30), 0, def, []timeline.Episode{ep(0, 50)}},
		{"hysteresis keeps the first silent window", windows(0.9, 10, 0.2, 5, 0.4, 20, 0.2, 1), 0, def, []timeline.Episode{ep(0, 10)}},
		// Issue 24: windows between the thresholds cannot hold a pause open. The pause
		// that began at window 10 closes the episode at the first window below threshold
		// 25 windows later (800 ms), faint or not; Silero's reference waits for a window
		// below 0.35 and merged the later speech, or ran the episode to the end of the audio.
		{"faint output cannot hold a pause open", windows(0.9, 10, 0.0, 2, 0.4, 40, 0.9, 5, 0.0, 30), 0, def, []timeline.Episode{ep(0, 10), ep(52, 57)}},
		{"faint output to the end of the audio", windows(0.9, 10, 0.0, 2, 0.4, 40), 0, def, []timeline.Episode{ep(0, 10)}},
		{"speech 25 windows into a faint pause merges", windows(0.9, 10, 0.0, 2, 0.4, 23, 0.9, 5, 0.0, 30), 0, def, []timeline.Episode{ep(0, 40)}},
		{"a faint window 25 windows into the pause closes", windows(0.9, 10, 0.0, 2, 0.4, 24, 0.9, 5, 0.0, 30), 0, def, []timeline.Episode{ep(0, 10), ep(36, 41)}},
		{"open at the end runs to the last sample", windows(0.0, 5, 0.9, 10), 7000, def, []timeline.Episode{{Start: 5 * 512.0 / 16000, End: 7000.0 / 16000}}},
		{"exactly min_speech at the end is kept", windows(0.0, 5, 0.9, 4), 5*512 + 1920, def, []timeline.Episode{{Start: 5 * 512.0 / 16000, End: (5*512 + 1920) / 16000.0}}},
		{"one sample short of min_speech at the end is dropped", windows(0.0, 5, 0.9, 4), 5*512 + 1919, def, []timeline.Episode{}},
		{"explicit negative threshold", windows(0.9, 10, 0.4, 30, 0.9, 4), 0, protocol.VAD{Threshold: 0.5, NegThreshold: 0.45, MinSpeech: 0.12, MergePause: 0.8}, []timeline.Episode{ep(0, 10), ep(40, 44)}},
		{"padding", windows(0.0, 10, 0.9, 10, 0.0, 50, 0.9, 10, 0.0, 30), 0, protocol.VAD{Threshold: 0.5, MinSpeech: 0.12, MergePause: 0.8, SpeechPad: 0.032}, []timeline.Episode{ep(9, 21), ep(69, 81)}},
		{"padding clamps to the audio", windows(0.9, 10, 0.0, 30), 0, protocol.VAD{Threshold: 0.5, MinSpeech: 0.12, MergePause: 0.8, SpeechPad: 10}, []timeline.Episode{ep(0, 40)}},
		{"padding wider than the gap splits it", windows(0.9, 10, 0.0, 30, 0.9, 10), 0, protocol.VAD{Threshold: 0.5, MinSpeech: 0.12, MergePause: 0.8, SpeechPad: 1}, []timeline.Episode{ep(0, 25), ep(25, 50)}},
	} {
		n := c.n
		if n == 0 {
			n = len(c.probs) * Window
		}
		got := Segment(c.probs, n, c.s)
		if len(got) == 0 && len(c.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// For any probability track, the incremental segmenter (what Online runs) agrees with
// Segment on every prefix, and what it says it knows (heard) is what Segment finds on the
// whole track: every question Decide answers as known has that answer on the final
// episodes (docs/protocol.md section 3.4).
func FuzzSegmenterPrefix(f *testing.F) {
	f.Add([]byte{0, 200, 200, 200, 200, 0, 0, 100, 255}, uint8(0), uint8(1))
	f.Add([]byte{255, 10, 255, 10, 255, 10, 255}, uint8(40), uint8(2))
	f.Add([]byte{0, 255, 255, 255, 255, 255, 0, 100, 100, 100, 100, 0, 255, 0, 0, 0, 0}, uint8(0), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, pad, minWin uint8) {
		probs := make([]float32, len(b))
		for i, v := range b {
			probs[i] = float32(v) / 255
		}
		win := float64(Window) / SampleRate
		s := protocol.VAD{Threshold: 0.5, MinSpeech: float64(minWin%6) * win, MergePause: 3 * win, SpeechPad: float64(pad) / 100}
		final := Segment(probs, len(probs)*Window, s)
		g := newSegmenter(s)
		for k, p := range probs {
			g.push(p)
			n := (k + 1) * Window
			prefix := Segment(probs[:k+1], n, s)
			got := g.episodes(n, false)
			if len(got) > len(prefix) || len(prefix)-len(got) > 1 || !reflect.DeepEqual(got, prefix[:len(got)]) {
				t.Fatalf("after %d windows: incremental %v, Segment %v", k+1, got, prefix)
			}
			if s.SpeechPad > 0 {
				continue // padding is not causal: heard is unpadded
			}
			checkHeard(t, g.heard(), final, len(probs), k+1)
		}
		if got := g.episodes(len(probs)*Window, true); !reflect.DeepEqual(got, final) && len(final) > 0 {
			t.Fatalf("final: incremental %v, Segment %v", got, final)
		}
	})
}

// checkHeard asks every question the scheduler asks, on a grid of times, of what was
// heard after k of total windows, and compares the known answers with the final episodes.
func checkHeard(t *testing.T, h timeline.Heard, final []timeline.Episode, total, k int) {
	t.Helper()
	win := float64(Window) / SampleRate
	if want := float64(k*Window) / SampleRate; h.Until != want {
		t.Fatalf("after %d windows: heard until %g, want %g", k, h.Until, want)
	}
	for i := range total + 1 {
		ti := float64(i*Window) / SampleRate
		for _, q := range []struct {
			name string
			f    func([]timeline.Episode) bool
			upTo float64
		}{
			{"active", func(e []timeline.Episode) bool { return timeline.Active(e, ti) }, ti},
			{"presence 3", func(e []timeline.Episode) bool { return timeline.Presence(e, ti, 3*win) }, ti + 3*win},
			{"presence 0", func(e []timeline.Episode) bool { return timeline.Presence(e, ti, 0) }, ti},
			{"overlap", func(e []timeline.Episode) bool { return len(timeline.Overlapping(e, ti, ti+2*win)) > 0 }, ti + 2*win},
		} {
			v, known := h.Decide(q.f, q.upTo)
			if known && v != q.f(final) {
				t.Fatalf("after %d windows (heard %+v): %s(%g) decided %v, the final episodes %v say %v", k, h, q.name, ti, v, final, !v)
			}
			// Once the track is over every question about the heard past is settled,
			// except one about an episode still open.
			if k == total && !known && h.Open == nil && q.upTo < h.Until {
				t.Fatalf("all heard (%+v): %s(%g) still unknown", h, q.name, ti)
			}
		}
	}
	// Current never holds speech the final episodes lack.
	for _, e := range h.Current() {
		if !coveredBy(final, e.Start, 0) || !coveredBy(final, e.End-1e-9, 0) {
			t.Fatalf("after %d windows: heard episode %v is not speech in the final %v", k, e, final)
		}
	}
}
