package vad

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// TestMergeEdgeSensitivity measures how the audio front end moves the merge edge on noisy
// speech (issue 24, docs/vad.md "Sensitivity at the merge edge"): two stretches of speech
// (1.4 s each, cut from testdata/speech_24k.wav) with a pause between them swept across
// the 832 ms edge, white noise over the whole clip at three levels (SNR 30, 20, 10 dB), at 24 kHz, brought to
// 16 kHz three ways: the project's resampler (core/audio, what the scheduler and the
// scorer use), sox (`sox -D`, float output), and 16-bit quantisation of the 24 kHz
// samples before the project's resampler (what a stored or re-read 16-bit WAV gives).
// For each model, noise level and path it reports the pauses where the paths disagree on
// merged vs split, and the largest boundary shift between matched episodes. It is a
// measurement, not a check: it runs sox, so it runs only with DUPLEXMPE_VAD_MERGE_EDGE=1
// (`make vad-merge-edge`).
func TestMergeEdgeSensitivity(t *testing.T) {
	if ok, _ := strconv.ParseBool(os.Getenv("DUPLEXMPE_VAD_MERGE_EDGE")); !ok {
		t.Skip("a measurement that runs sox: DUPLEXMPE_VAD_MERGE_EDGE=1 (make vad-merge-edge)")
	}
	if _, err := exec.LookPath("sox"); err != nil {
		t.Skip("sox is not installed")
	}
	src, err := audio.ReadWAV("testdata/speech_24k.wav")
	if err != nil {
		t.Fatal(err)
	}
	const rate = 24000
	cut := func(a, b float64) []float32 { return src.Samples[int(a*rate):int(b*rate)] }
	partA, partB := cut(1.0, 2.4), cut(3.0, 4.4)
	rms := 0.0
	for _, x := range partA {
		rms += float64(x) * float64(x)
	}
	rms = math.Sqrt(rms / float64(len(partA)))

	var pauses []float64
	for p := 0.700; p <= 1.0001; p += 0.004 {
		pauses = append(pauses, p)
	}
	dir := t.TempDir()
	type path struct {
		name string
		to16 func(i int, x []float32) []float32
	}
	paths := []path{
		{"resampler", func(_ int, x []float32) []float32 {
			return audio.Resample(audio.PCM{Samples: x, Rate: rate}, SampleRate).Samples
		}},
		{"sox", func(i int, x []float32) []float32 {
			in, out := filepath.Join(dir, fmt.Sprintf("in%d.wav", i)), filepath.Join(dir, fmt.Sprintf("out%d.wav", i))
			if err := audio.WriteWAVAs(in, audio.PCM{Samples: x, Rate: rate}, audio.Float32); err != nil {
				t.Fatal(err)
			}
			if b, err := exec.Command("sox", "-D", in, "-r", "16000", "-e", "floating-point", "-b", "32", out).CombinedOutput(); err != nil {
				t.Fatalf("sox: %v: %s", err, b)
			}
			p, err := audio.ReadWAV(out)
			if err != nil {
				t.Fatal(err)
			}
			return p.Samples
		}},
		{"16-bit", func(_ int, x []float32) []float32 {
			q := make([]float32, len(x))
			for j, v := range x {
				q[j] = float32(math.Round(float64(max(-1, min(1, v)))*32767) / 32767)
			}
			return audio.Resample(audio.PCM{Samples: q, Rate: rate}, SampleRate).Samples
		}},
	}
	s := protocol.DefaultVAD()
	for _, model := range []string{protocol.SileroV5, protocol.SileroV6} {
		det, err := Open(Options{Model: model})
		if err != nil {
			t.Fatal(err)
		}
		for _, snr := range []float64{30, 20, 10} {
			rng := rand.New(rand.NewPCG(24, uint64(snr)))
			sigma := rms / math.Pow(10, snr/20)
			// One clip per pause: 0.5 s of noise, A, the pause, B, 1.5 s of noise.
			var clips [][]float32
			for _, p := range pauses {
				n := int(0.5*rate) + len(partA) + int(math.Round(p*rate)) + len(partB) + int(1.5*rate)
				x := make([]float32, n)
				copy(x[int(0.5*rate):], partA)
				copy(x[int(0.5*rate)+len(partA)+int(math.Round(p*rate)):], partB)
				for j := range x {
					x[j] += float32(rng.NormFloat64() * sigma)
				}
				clips = append(clips, x)
			}
			eps := make([][][]timeline.Episode, len(paths)) // path, pause
			for pi, pa := range paths {
				var in [][]float32
				for i, x := range clips {
					in = append(in, pa.to16(i, x))
				}
				probs, err := det.ProbabilitiesMany(in)
				if err != nil {
					t.Fatal(err)
				}
				for i := range in {
					eps[pi] = append(eps[pi], Segment(probs[i], len(in[i]), s))
				}
			}
			// The resampler is the reference: where does it split, and where do the
			// others disagree with it?
			for pi := 1; pi < len(paths); pi++ {
				var flips []string
				shift := 0.0
				for i, p := range pauses {
					a, b := eps[0][i], eps[pi][i]
					if len(a) != len(b) {
						flips = append(flips, fmt.Sprintf("%.3f (%d vs %d)", p, len(a), len(b)))
						continue
					}
					for k := range a {
						shift = math.Max(shift, math.Max(math.Abs(a[k].Start-b[k].Start), math.Abs(a[k].End-b[k].End)))
					}
				}
				t.Logf("%s, SNR %g dB, %s vs resampler: %d of %d pauses differ in episode count %v; largest boundary shift otherwise %.0f ms",
					model, snr, paths[pi].name, len(flips), len(pauses), flips, shift*1000)
			}
			for pi, pa := range paths {
				var counts []int
				firstSplit, lastMerged := math.Inf(1), math.Inf(-1)
				for i, p := range pauses {
					counts = append(counts, len(eps[pi][i]))
					if len(eps[pi][i]) > 1 {
						firstSplit = math.Min(firstSplit, p)
					} else {
						lastMerged = math.Max(lastMerged, p)
					}
				}
				t.Logf("%s, SNR %g dB, %s: shortest pause split %.3f s, longest merged %.3f s; episodes per pause %.3f..%.3f s in 4 ms steps: %v",
					model, snr, pa.name, firstSplit, lastMerged, pauses[0], pauses[len(pauses)-1], counts)
			}
		}
		det.Close()
	}
}
