package audio

import (
	"math"
	"strings"
	"testing"
)

func TestSilenceConcatMix(t *testing.T) {
	s := Silence(16000, 0.25)
	if len(s.Samples) != 4000 || s.Duration() != 0.25 || !math.IsInf(s.RMSdBFS(), -1) || !math.IsInf(s.PeakdBFS(), -1) {
		t.Errorf("silence: %d samples, %g s, %g / %g dBFS", len(s.Samples), s.Duration(), s.RMSdBFS(), s.PeakdBFS())
	}
	if n := len(Silence(22050, 0.1).Samples); n != 2205 {
		t.Errorf("0.1 s at 22050 Hz: %d samples", n)
	}
	if n := len(Silence(16000, -1).Samples); n != 0 {
		t.Errorf("negative duration: %d samples", n)
	}
	a := PCM{Samples: []float32{0.5, 0.5}, Rate: 8000}
	b := PCM{Samples: []float32{0.25, 0.25, 0.25}, Rate: 8000}
	c, err := Concat(a, b, a)
	if err != nil || len(c.Samples) != 7 || c.Samples[2] != 0.25 || c.Samples[5] != 0.5 || c.Rate != 8000 {
		t.Errorf("concat: %v, %v", c, err)
	}
	m, err := Mix(a, b)
	if err != nil || len(m.Samples) != 3 || m.Samples[0] != 0.75 || m.Samples[2] != 0.25 {
		t.Errorf("mix: %v, %v", m, err)
	}
	if a.Samples[0] != 0.5 {
		t.Error("mix changed its input")
	}
	if _, err := Concat(a, PCM{Rate: 16000}); err == nil || !strings.Contains(err.Error(), "part 1 is at 16000 Hz") {
		t.Errorf("concat of different rates: %v", err)
	}
	if _, err := Mix(a, PCM{Rate: 16000}); err == nil {
		t.Error("mix of different rates succeeded")
	}
	if _, err := Concat(); err == nil {
		t.Error("concat of nothing succeeded")
	}
}

func TestLevels(t *testing.T) {
	sine := Silence(48000, 1)
	for i := range sine.Samples {
		sine.Samples[i] = float32(0.5 * math.Sin(2*math.Pi*1000*float64(i)/48000))
	}
	if got := sine.RMSdBFS(); math.Abs(got-(-9.03)) > 0.01 {
		t.Errorf("RMS of a 0.5 sine: %.3f dBFS, want -9.03", got)
	}
	if got := sine.PeakdBFS(); math.Abs(got-(-6.02)) > 0.01 {
		t.Errorf("peak of a 0.5 sine: %.3f dBFS, want -6.02", got)
	}
	loud := PCM{Samples: []float32{1, -1.2, 0.99, 0}, Rate: 8000}
	if loud.Clipped() != 2 || loud.PeakdBFS() <= 0 {
		t.Errorf("clipped %d, peak %g", loud.Clipped(), loud.PeakdBFS())
	}
}
