package audio

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

func sine(rate int, freq, amp, seconds float64) []float32 {
	n := int(float64(rate) * seconds)
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return s
}

// BS.1770's calibration: a 997 Hz sine at 0 dBFS peak on one channel reads -3.01 LUFS
// (EBU Tech 3341's mono reference), at any rate.
func TestLoudnessOfReferenceSine(t *testing.T) {
	for _, rate := range []int{16000, 22050, 24000, 48000} {
		l := LoudnessLUFS(PCM{Samples: sine(rate, 997, 1, 5), Rate: rate})
		if math.Abs(l-(-3.01)) > 0.05 {
			t.Errorf("rate %d: %.3f LUFS, want -3.01", rate, l)
		}
		l = LoudnessLUFS(PCM{Samples: sine(rate, 997, 0.1, 5), Rate: rate})
		if math.Abs(l-(-23.01)) > 0.05 {
			t.Errorf("rate %d: -20 dB sine: %.3f LUFS, want -23.01", rate, l)
		}
	}
}

// The gates: 6 s of silence around a 2 s sound leaves its loudness within 1 LU (only the
// blocks straddling its edges count; ungated it would drop 6 LU: the absolute gate), and
// a part 20 dB below the rest is left out (relative gate; ungated, -2.6 LU).
func TestLoudnessGating(t *testing.T) {
	const rate = 16000
	tone := sine(rate, 997, 0.1, 2)
	padded := append(append(make([]float32, 3*rate), tone...), make([]float32, 3*rate)...)
	if a, b := LoudnessLUFS(PCM{Samples: tone, Rate: rate}), LoudnessLUFS(PCM{Samples: padded, Rate: rate}); math.Abs(a-b) > 1 {
		t.Errorf("silence moved the loudness: %.2f vs %.2f", a, b)
	}
	quiet := sine(rate, 997, 0.01, 2)
	mixed := append(append([]float32(nil), tone...), quiet...)
	if a, b := LoudnessLUFS(PCM{Samples: tone, Rate: rate}), LoudnessLUFS(PCM{Samples: mixed, Rate: rate}); math.Abs(a-b) > 0.5 {
		t.Errorf("a part 20 dB down moved the loudness: %.2f vs %.2f", a, b)
	}
	if l := LoudnessLUFS(PCM{Samples: make([]float32, rate), Rate: rate}); !math.IsInf(l, -1) {
		t.Errorf("silence: %v, want -Inf", l)
	}
}

func TestNormalizeLoudness(t *testing.T) {
	const rate = 16000
	p := PCM{Samples: sine(rate, 440, 0.02, 2), Rate: rate}
	out, gain, limited := NormalizeLoudness(p, -23)
	if limited || math.Abs(LoudnessLUFS(out)-(-23)) > 0.01 || gain <= 0 {
		t.Fatalf("gain %.2f dB, limited %v, loudness %.3f", gain, limited, LoudnessLUFS(out))
	}
	// A peaky clip is not clipped: the gain stops at the ceiling.
	spike := PCM{Samples: make([]float32, rate), Rate: rate}
	for i := range spike.Samples {
		spike.Samples[i] = 0.001
	}
	spike.Samples[100] = 0.5
	out, _, limited = NormalizeLoudness(spike, -10)
	if !limited || peakOf(out.Samples) > peakCeiling+1e-6 {
		t.Fatalf("limited %v, peak %.3f", limited, peakOf(out.Samples))
	}
}

func peakOf(x []float32) float64 {
	var p float64
	for _, v := range x {
		p = math.Max(p, math.Abs(float64(v)))
	}
	return p
}

var ffmpegI = regexp.MustCompile(`(?s)Integrated loudness:\s*I:\s*(-?[0-9.]+) LUFS`)

// Against a real implementation: ffmpeg's ebur128 filter, on speech-like signals (noise
// bursts shaped like syllables, with pauses and a quiet stretch) at the rates the TTS
// voices produce. ffmpeg prints one decimal, so they agree within 0.1 LU plus rounding.
func TestLoudnessMatchesFFmpeg(t *testing.T) {
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg is not installed (Debian package ffmpeg): the comparison with its ebur128 filter is skipped")
	}
	rng := rand.New(rand.NewSource(7))
	for _, rate := range []int{16000, 22050, 24000, 48000} {
		for trial := 0; trial < 3; trial++ {
			var s []float32
			for seg := 0; seg < 12; seg++ {
				amp := 0.02 + 0.3*rng.Float64()
				if seg == 5 {
					amp = 0.002
				}
				n := int(float64(rate) * (0.1 + 0.4*rng.Float64()))
				f := 100 + 300*rng.Float64()
				for i := 0; i < n; i++ {
					env := math.Sin(math.Pi * float64(i) / float64(n))
					v := amp * env * (0.6*math.Sin(2*math.Pi*f*float64(i)/float64(rate)) + 0.4*(2*rng.Float64()-1))
					s = append(s, float32(v))
				}
				s = append(s, make([]float32, int(float64(rate)*0.3*rng.Float64()))...)
			}
			p := PCM{Samples: s, Rate: rate}
			path := filepath.Join(t.TempDir(), fmt.Sprintf("x%d.wav", rate))
			if err := WriteWAV(path, p); err != nil {
				t.Fatal(err)
			}
			written, err := ReadWAV(path) // what ffmpeg reads: the 16-bit samples
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd := exec.Command(ff, "-hide_banner", "-nostats", "-i", path, "-af", "ebur128", "-f", "null", "-")
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("ffmpeg: %v: %s", err, stderr.String())
			}
			m := ffmpegI.FindStringSubmatch(stderr.String())
			if m == nil {
				t.Fatalf("no integrated loudness in ffmpeg's output: %s", stderr.String())
			}
			want, _ := strconv.ParseFloat(m[1], 64)
			got := LoudnessLUFS(written)
			if math.Abs(got-want) > 0.15 {
				t.Errorf("rate %d trial %d: %.3f LUFS, ffmpeg ebur128 says %.1f", rate, trial, got, want)
			} else {
				t.Logf("rate %d trial %d: %.3f LUFS, ffmpeg %.1f", rate, trial, got, want)
			}
		}
	}
}
