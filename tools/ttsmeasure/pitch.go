package main

import (
	"math"
	"sort"
)

// pitchTrack estimates F0 every 10 ms with YIN (de Cheveigné and Kawahara 2002: the
// cumulative-mean-normalised difference, absolute threshold 0.15, parabolic
// interpolation) over 60-450 Hz, on frames whose level is within 30 dB of the clip's
// loudest frame. Unvoiced frames are left out.
func pitchTrack(x []float32, rate int) []float64 {
	const fmin, fmax, thresh = 60.0, 450.0, 0.15
	win := int(0.04 * float64(rate))
	hop := int(0.01 * float64(rate))
	tmin, tmax := int(float64(rate)/fmax), int(float64(rate)/fmin)
	if len(x) < win+tmax {
		return nil
	}
	var loudest float64
	energy := func(s int) float64 {
		e := 0.0
		for _, v := range x[s : s+win] {
			e += float64(v) * float64(v)
		}
		return e / float64(win)
	}
	for s := 0; s+win+tmax <= len(x); s += hop {
		loudest = math.Max(loudest, energy(s))
	}
	d := make([]float64, tmax+1)
	var out []float64
	for s := 0; s+win+tmax <= len(x); s += hop {
		if energy(s) < loudest*1e-3 {
			continue
		}
		for tau := 1; tau <= tmax; tau++ {
			sum := 0.0
			for j := 0; j < win; j++ {
				diff := float64(x[s+j]) - float64(x[s+j+tau])
				sum += diff * diff
			}
			d[tau] = sum
		}
		// Cumulative mean normalisation.
		run := 0.0
		cm := make([]float64, tmax+1)
		cm[0] = 1
		for tau := 1; tau <= tmax; tau++ {
			run += d[tau]
			if run == 0 {
				cm[tau] = 1
			} else {
				cm[tau] = d[tau] * float64(tau) / run
			}
		}
		best := -1
		for tau := tmin; tau <= tmax; tau++ {
			if cm[tau] < thresh {
				for tau+1 <= tmax && cm[tau+1] < cm[tau] {
					tau++
				}
				best = tau
				break
			}
		}
		if best < 0 {
			continue
		}
		t := float64(best)
		if best > 1 && best < tmax {
			a, b, c := cm[best-1], cm[best], cm[best+1]
			if den := a - 2*b + c; den != 0 {
				t += 0.5 * (a - c) / den
			}
		}
		out = append(out, float64(rate)/t)
	}
	return out
}

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := q * float64(len(s)-1)
	lo := int(math.Floor(i))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(i-float64(lo))
}
