package vad

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// reference.json holds what the reference Python implementation computed on the test
// audio (see testdata/reference.py for how it was produced).
type reference struct {
	Files map[string]map[string]json.RawMessage `json:"files"`
}

type refModel struct {
	Probs []float64 `json:"probs"`
	Runs  []struct {
		Settings struct {
			Threshold  float64 `json:"threshold"`
			MinSpeech  float64 `json:"min_speech"`
			MergePause float64 `json:"merge_pause"`
			SpeechPad  float64 `json:"speech_pad"`
		} `json:"settings"`
		Episodes [][2]int `json:"episodes"`
	} `json:"runs"`
}

func loadReference(t testing.TB, file, model string) (refModel, int) {
	t.Helper()
	b, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	var m refModel
	var n int
	if err := json.Unmarshal(r.Files[file][model], &m); err != nil {
		t.Fatalf("reference %s %s: %v", file, model, err)
	}
	if err := json.Unmarshal(r.Files[file]["num_samples"], &n); err != nil {
		t.Fatal(err)
	}
	return m, n
}

func (m refModel) settings(i int, model string) protocol.VAD {
	s := m.Runs[i].Settings
	return protocol.VAD{Model: model, Threshold: s.Threshold, MinSpeech: s.MinSpeech, MergePause: s.MergePause, SpeechPad: s.SpeechPad}
}

func (m refModel) episodes(i int) []timeline.Episode {
	out := []timeline.Episode{}
	for _, e := range m.Runs[i].Episodes {
		out = append(out, timeline.Episode{Start: float64(e[0]) / SampleRate, End: float64(e[1]) / SampleRate})
	}
	return out
}

var (
	detectorsMu sync.Mutex
	detectors   = map[string]*Detector{}
)

// openDetector opens the model from the cache that `make deps` fills; the tests need the
// real ONNX Runtime and Silero model.
func openDetector(t testing.TB, model string) *Detector {
	t.Helper()
	detectorsMu.Lock()
	defer detectorsMu.Unlock()
	if d, ok := detectors[model]; ok {
		return d
	}
	d, err := Open(Options{Model: model})
	if err != nil {
		t.Fatalf("%v\n(the VAD tests run the real model: run `make deps` first)", err)
	}
	detectors[model] = d
	return d
}

func readPCM(t testing.TB, name string) audio.PCM {
	t.Helper()
	p, err := audio.ReadWAV(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var models = []string{protocol.SileroV5, protocol.SileroV6}

// Window by window, the Go detector gives the reference OnnxWrapper's probabilities.
func TestProbabilitiesMatchReference(t *testing.T) {
	for _, file := range []string{"conversation_16k.wav", "speech_24k_sox16k.wav"} {
		pcm := readPCM(t, file)
		for _, model := range models {
			ref, n := loadReference(t, file, model)
			if n != len(pcm.Samples) {
				t.Fatalf("%s: reference has %d samples, file %d", file, n, len(pcm.Samples))
			}
			got, err := openDetector(t, model).Probabilities(pcm.Samples)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(ref.Probs) {
				t.Fatalf("%s %s: %d windows, reference %d", file, model, len(got), len(ref.Probs))
			}
			var worst float64
			for i, p := range got {
				worst = max(worst, math.Abs(float64(p)-ref.Probs[i]))
			}
			// Measured: 0 (bit-identical) with ONNX Runtime 1.30 here and 1.32 in Python.
			if worst > 1e-5 {
				t.Errorf("%s %s: probabilities differ from the reference by up to %.2g", file, model, worst)
			}
		}
	}
}

// The episodes are the reference get_speech_timestamps episodes, for the protocol
// defaults (end to end: audio -> Episodes) and for the reference's settings variations
// (Segment on the same probabilities).
func TestEpisodesMatchReference(t *testing.T) {
	for _, file := range []string{"conversation_16k.wav", "speech_24k_sox16k.wav"} {
		pcm := readPCM(t, file)
		for _, model := range models {
			d := openDetector(t, model)
			ref, _ := loadReference(t, file, model)
			got, err := d.Episodes(pcm, ref.settings(0, model))
			if err != nil {
				t.Fatal(err)
			}
			if want := ref.episodes(0); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s defaults:\n got %v\nwant %v", file, model, got, want)
			}
			probs, err := d.Probabilities(pcm.Samples)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < len(ref.Runs); i++ {
				s := ref.settings(i, model)
				if got, want := Segment(probs, len(pcm.Samples), s), ref.episodes(i); !reflect.DeepEqual(got, want) {
					t.Errorf("%s %s %+v:\n got %v\nwant %v", file, model, s, got, want)
				}
			}
		}
	}
}

// The test audio holds three flite utterances (the first two 0.4 s apart), noise and a
// tone: with the protocol defaults only the speech is found, the first two merged.
func TestEpisodesOnTestAudio(t *testing.T) {
	pcm := readPCM(t, "conversation_16k.wav")
	for _, model := range models {
		s := protocol.DefaultVAD()
		s.Model = model
		eps, err := openDetector(t, model).Episodes(pcm, s)
		if err != nil {
			t.Fatal(err)
		}
		// Speech is at 0.7-7.5 s and 12.3-13.5 s; noise at 9.0-10.0 s, tone at 10.5-11.5 s.
		if len(eps) != 2 || math.Abs(eps[0].Start-0.7) > 0.3 || math.Abs(eps[1].End-13.4) > 0.3 {
			t.Errorf("%s: episodes %v", model, eps)
		}
	}
}

// Audio at 24 kHz and 44.1 kHz gives the episodes of the same audio converted to 16 kHz
// by sox, within one window.
func TestEpisodesAnyRate(t *testing.T) {
	d := openDetector(t, protocol.SileroV5)
	for _, c := range [][2]string{{"speech_24k.wav", "speech_24k_sox16k.wav"}, {"speech_44k.wav", "speech_44k_sox16k.wav"}} {
		hi, lo := readPCM(t, c[0]), readPCM(t, c[1])
		s := protocol.DefaultVAD()
		s.MergePause = 0.1 // more episodes, more boundaries to compare
		a, err := d.Episodes(hi, s)
		if err != nil {
			t.Fatal(err)
		}
		b, err := d.Episodes(lo, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) || len(a) < 2 {
			t.Fatalf("%s: %v vs sox 16 kHz %v", c[0], a, b)
		}
		for i := range a {
			if math.Abs(a[i].Start-b[i].Start) > 0.032 || math.Abs(a[i].End-b[i].End) > 0.032 {
				t.Errorf("%s episode %d: %v vs sox 16 kHz %v", c[0], i, a[i], b[i])
			}
		}
	}
}

// Several conversations scored at once share one Detector.
func TestConcurrentUse(t *testing.T) {
	d := openDetector(t, protocol.SileroV6)
	pcm := readPCM(t, "speech_44k_sox16k.wav")
	want, err := d.Probabilities(pcm.Samples)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for range 4 {
		wg.Go(func() {
			got, err := d.Probabilities(pcm.Samples)
			if err != nil || !reflect.DeepEqual(got, want) {
				errs <- "concurrent Probabilities differ from a single call"
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestOpenErrors(t *testing.T) {
	openDetector(t, protocol.SileroV5) // the environment is loaded from the cache
	dir := t.TempDir()
	notModel := filepath.Join(dir, "x.onnx")
	os.WriteFile(notModel, []byte("not a model"), 0o644)
	wav, _ := filepath.Abs("testdata/speech_24k.wav")
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Model: "silero-v4"}, `model "silero-v4": want "silero-v5" or "silero-v6"`},
		{Options{ModelPath: filepath.Join(dir, "missing.onnx")}, "missing.onnx: no such file or directory; run `make deps`"},
		{Options{ModelPath: notModel}, "x.onnx is not a loadable ONNX model"},
		{Options{ModelPath: wav}, "speech_24k.wav is not a loadable ONNX model"},
		{Options{LibraryPath: filepath.Join(dir, "libother.so")}, "ONNX Runtime is already loaded from"},
	} {
		d, err := Open(c.opts)
		if err == nil {
			d.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%+v): %v, want an error containing %q", c.opts, err, c.want)
		}
	}
	d := openDetector(t, protocol.SileroV5)
	if _, err := d.Episodes(audio.Silence(16000, 1), protocol.VAD{Model: protocol.SileroV6, Threshold: 0.5}); err == nil || !strings.Contains(err.Error(), "this detector runs silero-v5") {
		t.Errorf("model mismatch: %v", err)
	}
	if _, err := d.Episodes(audio.Silence(16000, 1), protocol.VAD{Threshold: 1.5}); err == nil || !strings.Contains(err.Error(), "threshold = 1.5") {
		t.Errorf("bad threshold: %v", err)
	}
}

func TestClosedDetector(t *testing.T) {
	d, err := Open(Options{Model: protocol.SileroV6})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Probabilities(make([]float32, 1000)); err != errClosed {
		t.Errorf("Probabilities after Close: %v", err)
	}
}

func TestShortAudio(t *testing.T) {
	d := openDetector(t, protocol.SileroV5)
	for _, n := range []int{0, 1, 511, 512, 513} {
		probs, err := d.Probabilities(make([]float32, n))
		if err != nil || len(probs) != (n+Window-1)/Window {
			t.Errorf("%d samples: %d probabilities, %v", n, len(probs), err)
		}
		for _, p := range probs {
			if p > 0.1 {
				t.Errorf("%d samples of silence: probability %g", n, p)
			}
		}
		eps, err := d.Episodes(audio.PCM{Samples: make([]float32, n), Rate: 44100}, protocol.DefaultVAD())
		if err != nil || len(eps) != 0 {
			t.Errorf("%d samples at 44.1 kHz: %v, %v", n, eps, err)
		}
	}
	if _, err := d.Episodes(audio.PCM{Samples: make([]float32, 10)}, protocol.DefaultVAD()); err == nil {
		t.Error("audio without a sample rate was accepted")
	}
}
