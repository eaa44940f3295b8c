package vad

import (
	"reflect"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// The online detector, fed in uneven chunks, agrees with the offline path after every
// window: its closed episodes are Segment's on the same prefix (less an open episode),
// what Heard says is known is what the offline episodes of the whole audio say, and
// Finish returns exactly the offline episodes.
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
				if s.SpeechPad == 0 {
					checkHeard(t, o.Heard(), final, len(probs), w)
					if o.Heard().OpenKept {
						speakingWindows++
					}
				}
			}
			if s.SpeechPad == 0 && speakingWindows == 0 {
				t.Errorf("%s %+v: never heard a kept episode open", model, s)
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

// Heard on real speech: nothing open in leading silence; an episode open but not yet
// kept before min_speech; kept from min_speech on; at the end, the last episode closed at
// the start of its pause.
func TestOnlineHeard(t *testing.T) {
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
	if h := o.Heard(); h.Open != nil || len(h.Closed) != 0 || h.Until != o.Processed() {
		t.Errorf("after leading silence: heard %+v", h)
	}
	probs, err := d.Probabilities(pcm.Samples)
	if err != nil {
		t.Fatal(err)
	}
	firstSpeech := -1
	for i, p := range probs {
		if float64(p) >= s.Threshold {
			firstSpeech = i
			break
		}
	}
	if err := o.Push(pcm.Samples[11200 : (firstSpeech+3)*Window]); err != nil {
		t.Fatal(err)
	}
	start := float64(firstSpeech*Window) / SampleRate
	if h := o.Heard(); h.Open == nil || h.Open.Start != start || h.OpenKept {
		t.Errorf("after 3 windows (96 ms) of speech, below min_speech: heard %+v, want open from %g, not kept", h, start)
	}
	if err := o.Push(pcm.Samples[(firstSpeech+3)*Window : (firstSpeech+4)*Window]); err != nil {
		t.Fatal(err)
	}
	if h := o.Heard(); h.Open == nil || !h.OpenKept {
		t.Errorf("after 4 windows (128 ms) of speech at p %v: heard %+v, want it kept", probs[firstSpeech:firstSpeech+4], h)
	}
	whole := (len(pcm.Samples) / Window) * Window
	if err := o.Push(pcm.Samples[(firstSpeech+4)*Window : whole]); err != nil {
		t.Fatal(err)
	}
	final := Segment(probs, len(pcm.Samples), s)
	h := o.Heard()
	if h.Open != nil || len(h.Closed) != len(final) || h.Closed[len(final)-1] != final[len(final)-1] {
		t.Errorf("at the end: heard %+v, offline %v", h, final)
	}
}
