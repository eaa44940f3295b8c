// Package stats holds the statistics of protocol section 6: the exact McNemar test for
// paired explicit/implicit (and model-vs-model) comparisons, Wilson intervals for every
// rate, a seeded cluster bootstrap for differences between models, the Bonferroni
// correction and Spearman's rank correlation. Everything is deterministic given its inputs.
package stats

import (
	"math"
	"sort"
)

// McNemarExact is the exact (binomial) McNemar test of protocol section 6:
// p = min(1, 2 * P(X <= min(b, c))) with X ~ Binomial(b + c, 1/2), and p = 1 when
// b + c = 0. b and c are the discordant counts (b: success only in the first version,
// c: success only in the second). Negative counts are treated as 0.
func McNemarExact(b, c int) float64 {
	b, c = max(b, 0), max(c, 0)
	n := b + c
	if n == 0 {
		return 1
	}
	return math.Min(1, 2*binomCDFHalf(min(b, c), n))
}

// binomCDFHalf is P(X <= k) for X ~ Binomial(n, 1/2), summed in log space so that large n
// (thousands of discordant pairs) neither overflows nor underflows.
func binomCDFHalf(k, n int) float64 {
	if k >= n {
		return 1
	}
	lnHalfN := float64(n) * math.Log(0.5)
	lgN1, _ := math.Lgamma(float64(n + 1))
	// log-sum-exp over the terms log C(n, i) + n log(1/2), i = 0..k.
	terms := make([]float64, k+1)
	top := math.Inf(-1)
	for i := 0; i <= k; i++ {
		a, _ := math.Lgamma(float64(i + 1))
		b, _ := math.Lgamma(float64(n - i + 1))
		terms[i] = lgN1 - a - b + lnHalfN
		top = math.Max(top, terms[i])
	}
	sum := 0.0
	for _, t := range terms {
		sum += math.Exp(t - top)
	}
	return math.Min(1, math.Exp(top+math.Log(sum)))
}

// NormalQuantile is the inverse of the standard normal CDF (0 < q < 1).
func NormalQuantile(q float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*q-1)
}

// Wilson is the Wilson score interval for successes out of n at the given two-sided
// confidence (0.95 for the 95% interval of protocol section 6). With n = 0 nothing is
// known and the interval is [0, 1]; so it is for a confidence outside (0, 1). Counts
// outside [0, n] are clamped.
func Wilson(successes, n int, confidence float64) (lo, hi float64) {
	if n <= 0 || !(confidence > 0 && confidence < 1) {
		return 0, 1
	}
	k := min(max(successes, 0), n)
	z := NormalQuantile(1 - (1-confidence)/2)
	nf := float64(n)
	phat := float64(k) / nf
	z2 := z * z
	denom := 1 + z2/nf
	centre := (phat + z2/(2*nf)) / denom
	half := z * math.Sqrt(phat*(1-phat)/nf+z2/(4*nf*nf)) / denom
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	// At the boundaries the formula is exact in theory but not in floating point.
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi
}

// Bonferroni multiplies each p-value by the number of comparisons, capped at 1.
func Bonferroni(p []float64) []float64 {
	out := make([]float64, len(p))
	m := float64(len(p))
	for i, v := range p {
		out[i] = math.Min(1, v*m)
	}
	return out
}

// Ranks returns the 1-based ranks of x, ties sharing the average of their ranks.
func Ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}

// Spearman is the Spearman rank correlation of x and y (the Pearson correlation of their
// average ranks, so ties are handled as SciPy does). ok is false when it is undefined:
// different lengths, fewer than two points, or a constant series.
func Spearman(x, y []float64) (rho float64, ok bool) {
	if len(x) != len(y) || len(x) < 2 {
		return 0, false
	}
	return Pearson(Ranks(x), Ranks(y))
}

// Pearson is the correlation of two equal-length series; false when either is flat.
func Pearson(x, y []float64) (float64, bool) {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0, false
	}
	return sxy / math.Sqrt(sxx*syy), true
}
