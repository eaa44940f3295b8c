// Package audio is the harness's one representation of sound: mono float32 PCM with its
// sample rate, WAV files in and out, a windowed-sinc resampler, and the small operations
// the scheduler needs (silence, concatenation, mixing, levels).
package audio

import (
	"fmt"
	"math"
)

// PCM is mono audio: samples in [-1, 1] at Rate samples per second.
type PCM struct {
	Samples []float32
	Rate    int
}

// Duration in seconds.
func (p PCM) Duration() float64 {
	if p.Rate <= 0 {
		return 0
	}
	return float64(len(p.Samples)) / float64(p.Rate)
}

// Silence returns seconds of zeros at rate, rounded to the nearest sample.
func Silence(rate int, seconds float64) PCM {
	n := int(math.Round(seconds * float64(rate)))
	if n < 0 {
		n = 0
	}
	return PCM{Samples: make([]float32, n), Rate: rate}
}

// Concat joins parts end to end. All parts must have the same rate.
func Concat(parts ...PCM) (PCM, error) {
	if len(parts) == 0 {
		return PCM{}, fmt.Errorf("audio: concat of nothing")
	}
	n := 0
	for i, p := range parts {
		if p.Rate != parts[0].Rate {
			return PCM{}, fmt.Errorf("audio: concat: part %d is at %d Hz, part 0 at %d Hz; resample first", i, p.Rate, parts[0].Rate)
		}
		n += len(p.Samples)
	}
	out := make([]float32, 0, n)
	for _, p := range parts {
		out = append(out, p.Samples...)
	}
	return PCM{Samples: out, Rate: parts[0].Rate}, nil
}

// Mix adds b to a sample by sample; the result is as long as the longer input. Sums are
// not clipped here (WAV encoding clips), so levels can still be checked after mixing.
func Mix(a, b PCM) (PCM, error) {
	if a.Rate != b.Rate {
		return PCM{}, fmt.Errorf("audio: mix: %d Hz and %d Hz; resample first", a.Rate, b.Rate)
	}
	n := max(len(a.Samples), len(b.Samples))
	out := make([]float32, n)
	copy(out, a.Samples)
	for i, v := range b.Samples {
		out[i] += v
	}
	return PCM{Samples: out, Rate: a.Rate}, nil
}

// RMSdBFS is the root-mean-square level in dB relative to full scale (a full-scale sine
// is -3.01 dBFS); -Inf for silence or no samples.
func (p PCM) RMSdBFS() float64 {
	if len(p.Samples) == 0 {
		return math.Inf(-1)
	}
	var sum float64
	for _, v := range p.Samples {
		sum += float64(v) * float64(v)
	}
	return toDB(math.Sqrt(sum / float64(len(p.Samples))))
}

// PeakdBFS is the largest absolute sample in dBFS; -Inf for silence or no samples.
func (p PCM) PeakdBFS() float64 {
	var peak float64
	for _, v := range p.Samples {
		peak = max(peak, math.Abs(float64(v)))
	}
	return toDB(peak)
}

// Clipped counts samples at or beyond full scale, which a 16-bit WAV cannot represent.
func (p PCM) Clipped() int {
	n := 0
	for _, v := range p.Samples {
		if v >= 1 || v <= -1 {
			n++
		}
	}
	return n
}

func toDB(amplitude float64) float64 {
	if amplitude <= 0 {
		return math.Inf(-1)
	}
	return 20 * math.Log10(amplitude)
}
