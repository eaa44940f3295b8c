package audio

import "math"

// Integrated loudness after ITU-R BS.1770-4 (EBU R128), for mono PCM: K-weighting (the
// high shelf and the RLB high-pass, designed for the clip's rate as libebur128 does),
// 400 ms blocks every 100 ms, the absolute gate at -70 LUFS and the relative gate 10 LU
// below the loudness of the blocks above it. A clip shorter than one block is measured
// as one block of its whole length. Silence gives -Inf.

// LoudnessLUFS is the integrated loudness of p in LUFS (LKFS).
func LoudnessLUFS(p PCM) float64 {
	if p.Rate <= 0 || len(p.Samples) == 0 {
		return math.Inf(-1)
	}
	y := kWeight(p.Samples, float64(p.Rate))
	block := int(math.Round(0.4 * float64(p.Rate)))
	step := int(math.Round(0.1 * float64(p.Rate)))
	// Prefix sums of squares, so each block is one subtraction.
	cum := make([]float64, len(y)+1)
	for i, v := range y {
		cum[i+1] = cum[i] + v*v
	}
	var z []float64
	if len(y) < block {
		z = append(z, cum[len(y)]/float64(len(y)))
	} else {
		for s := 0; s+block <= len(y); s += step {
			z = append(z, (cum[s+block]-cum[s])/float64(block))
		}
	}
	const absGate = -70.0
	mean := func(thresh float64) float64 {
		sum, n := 0.0, 0
		for _, v := range z {
			if blockLoudness(v) > thresh {
				sum += v
				n++
			}
		}
		if n == 0 {
			return 0
		}
		return sum / float64(n)
	}
	m := mean(absGate)
	if m == 0 {
		return math.Inf(-1)
	}
	rel := blockLoudness(m) - 10
	m = mean(math.Max(absGate, rel))
	if m == 0 {
		return math.Inf(-1)
	}
	return blockLoudness(m)
}

func blockLoudness(meanSquare float64) float64 {
	if meanSquare <= 0 {
		return math.Inf(-1)
	}
	return -0.691 + 10*math.Log10(meanSquare)
}

// kWeight filters x through BS.1770's two stages, with coefficients for rate from the
// analogue prototypes (libebur128's design; at 48 kHz they are the standard's table).
func kWeight(x []float32, rate float64) []float64 {
	// Stage 1: high shelf.
	f0, g, q := 1681.974450955533, 3.999843853973347, 0.7071752369554196
	k := math.Tan(math.Pi * f0 / rate)
	vh := math.Pow(10, g/20)
	vb := math.Pow(vh, 0.4996667741545416)
	a0 := 1 + k/q + k*k
	b := [3]float64{(vh + vb*k/q + k*k) / a0, 2 * (k*k - vh) / a0, (vh - vb*k/q + k*k) / a0}
	a := [3]float64{1, 2 * (k*k - 1) / a0, (1 - k/q + k*k) / a0}
	// Stage 2: RLB high-pass.
	f0, q = 38.13547087602444, 0.5003270373238773
	k = math.Tan(math.Pi * f0 / rate)
	rb := [3]float64{1, -2, 1}
	d := 1 + k/q + k*k
	ra := [3]float64{1, 2 * (k*k - 1) / d, (1 - k/q + k*k) / d}

	y := make([]float64, len(x))
	var s1, s2, t1, t2 float64 // direct form II transposed states
	for i, v := range x {
		in := float64(v)
		o := b[0]*in + s1
		s1 = b[1]*in - a[1]*o + s2
		s2 = b[2]*in - a[2]*o
		o2 := rb[0]*o + t1
		t1 = rb[1]*o - ra[1]*o2 + t2
		t2 = rb[2]*o - ra[2]*o2
		y[i] = o2
	}
	return y
}

// NormalizeLoudness scales p to target LUFS and returns the scaled copy and the gain in
// dB applied. When that gain would push a sample past full scale (peak >= 1), the gain
// is lowered so the peak sits at peakCeiling instead, and limited reports it. Silence
// (no block above -70 LUFS) comes back unchanged with gain 0.
func NormalizeLoudness(p PCM, target float64) (out PCM, gainDB float64, limited bool) {
	l := LoudnessLUFS(p)
	if math.IsInf(l, -1) || math.IsNaN(l) {
		return PCM{Samples: append([]float32(nil), p.Samples...), Rate: p.Rate}, 0, false
	}
	gainDB = target - l
	gain := math.Pow(10, gainDB/20)
	var peak float64
	for _, v := range p.Samples {
		peak = math.Max(peak, math.Abs(float64(v)))
	}
	if peak*gain > peakCeiling {
		gain = peakCeiling / peak
		gainDB, limited = 20*math.Log10(gain), true
	}
	s := make([]float32, len(p.Samples))
	for i, v := range p.Samples {
		s[i] = float32(float64(v) * gain)
	}
	return PCM{Samples: s, Rate: p.Rate}, gainDB, limited
}

// peakCeiling is the highest sample peak NormalizeLoudness leaves (-0.1 dBFS would be
// 0.9886; this is -0.5 dBFS, room for 16-bit rounding).
const peakCeiling = 0.944
