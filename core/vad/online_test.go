package vad

import (
	"reflect"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// The online detector, fed in uneven chunks, agrees with the offline path after every
// window: its closed episodes are Segment's on the same prefix (less an open episode),
// Speaking is true only inside an episode that offline keeps, and Finish returns exactly
// the offline episodes.
func TestOnlineEqualsOffline(t *testing.T) {
	pcm := readPCM(t, "conversation_16k.wav")
	for _, model := range models {
		d := openDetector(t, model)
		probs, err := d.Probabilities(pcm.Samples)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []protocol.VAD{
			{Model: model, Threshold: 0.5, MinSpeech: 0.12, MergePause: 0.8},
			{Model: model, Threshold: 0.5, MinSpeech: 0.25, MergePause: 0.1, SpeechPad: 0.3},
		} {
			final := Segment(probs, len(pcm.Samples), s)
			o, err := d.NewOnline(s)
			if err != nil {
				t.Fatal(err)
			}
			chunks := []int{100, 512, 1, 2000, 333, 4096}
			rest, speakingWindows := pcm.Samples, 0
			for i := 0; len(rest) > 0; i++ {
				n := min(chunks[i%len(chunks)], len(rest))
				if err := o.Push(rest[:n]); err != nil {
					t.Fatal(err)
				}
				rest = rest[n:]
				w := int(o.Processed()*SampleRate) / Window
				prefix := Segment(probs[:w], w*Window, s)
				got := o.Episodes()
				if len(got) > len(prefix) || (len(got) < len(prefix) && len(got) != len(prefix)-1) || !reflect.DeepEqual(got, prefix[:len(got)]) {
					t.Fatalf("%s %+v after %d windows: online %v, offline on the prefix %v", model, s, w, got, prefix)
				}
				// Speaking holds from min_speech into a final episode until its pause
				// closes it (up to merge_pause and one window after its end).
				now, win := o.Processed(), float64(Window)/SampleRate
				inside := false
				for _, e := range final {
					if s.SpeechPad == 0 && e.Start+s.MinSpeech+win <= now && now <= e.End {
						inside = true
					}
				}
				if o.Speaking() {
					speakingWindows++
					if !coveredBy(final, now-win, s.MergePause+win) || o.SilentFor() != 0 {
						t.Fatalf("%s %+v: speaking at %.3f s (silent for %g) outside the final episodes %v", model, s, now, o.SilentFor(), final)
					}
				} else if inside {
					t.Fatalf("%s %+v: not speaking at %.3f s inside the final episodes %v", model, s, now, final)
				}
			}
			if speakingWindows == 0 {
				t.Errorf("%s %+v: never speaking", model, s)
			}
			got, err := o.Finish()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, final) {
				t.Errorf("%s %+v: Finish %v, offline %v", model, s, got, final)
			}
			if err := o.Push(make([]float32, 10)); err == nil {
				t.Error("Push after Finish succeeded")
			}
		}
	}
}

func coveredBy(eps []timeline.Episode, t, after float64) bool {
	for _, e := range eps {
		if e.Start-1e-9 <= t && t <= e.End+after {
			return true
		}
	}
	return false
}

// SilentFor counts from the end of the last window at or above the negative threshold;
// Speaking waits until an episode has lasted min_speech.
func TestOnlineSilentFor(t *testing.T) {
	d := openDetector(t, protocol.SileroV5)
	pcm := readPCM(t, "conversation_16k.wav")
	s := protocol.DefaultVAD()
	o, err := d.NewOnline(s)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	// 0.7 s of digital silence opens the file.
	if err := o.Push(pcm.Samples[:11200]); err != nil {
		t.Fatal(err)
	}
	if o.Speaking() || o.SilentFor() != o.Processed() {
		t.Errorf("after leading silence: speaking %v, silent for %g of %g s", o.Speaking(), o.SilentFor(), o.Processed())
	}
	probs, err := d.Probabilities(pcm.Samples)
	if err != nil {
		t.Fatal(err)
	}
	var lastLoud, firstSpeech int = 0, -1
	for i, p := range probs {
		if float64(p) >= s.EffectiveNegThreshold() {
			lastLoud = i + 1
		}
		if firstSpeech < 0 && float64(p) >= s.Threshold {
			firstSpeech = i
		}
	}
	if err := o.Push(pcm.Samples[11200 : (firstSpeech+3)*Window]); err != nil {
		t.Fatal(err)
	}
	if o.Speaking() {
		t.Errorf("speaking after 3 windows (96 ms) of speech, below min_speech")
	}
	if err := o.Push(pcm.Samples[(firstSpeech+3)*Window : (firstSpeech+4)*Window]); err != nil {
		t.Fatal(err)
	}
	if !o.Speaking() {
		t.Errorf("not speaking after 4 windows (128 ms) of speech at p %v", probs[firstSpeech:firstSpeech+4])
	}
	whole := (len(pcm.Samples) / Window) * Window
	if err := o.Push(pcm.Samples[(firstSpeech+4)*Window : whole]); err != nil {
		t.Fatal(err)
	}
	want := float64(whole-lastLoud*Window) / SampleRate
	if o.Speaking() || o.SilentFor() != want || want < 1 {
		t.Errorf("at the end: speaking %v, silent for %g, want %g", o.Speaking(), o.SilentFor(), want)
	}
}
