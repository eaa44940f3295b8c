package stats

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Cluster holds one resampling unit's counts for two models: the successes and the
// denominator each model contributed from this scenario pair. Whole clusters (a scenario
// pair with every event in it, protocol section 6) are resampled together, so events of
// one conversation are never treated as independent.
type Cluster struct {
	AK, AN float64 // model A: successes, denominator
	BK, BN float64 // model B: successes, denominator
}

// Difference is a bootstrap estimate of rate(A) - rate(B), each rate a ratio of sums
// (sum K / sum N over clusters) so conditional measures keep their own denominators.
type Difference struct {
	Estimate   float64 `json:"estimate"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	Resamples  int     `json:"resamples"`
	// Used is how many resamples had a defined difference (both denominators > 0);
	// the interval is the percentile interval over those.
	Used int    `json:"used"`
	Seed uint64 `json:"seed"`
	// OK is false when the estimate itself is undefined (a denominator of 0).
	OK bool `json:"ok"`
}

// BootstrapDifference resamples clusters with replacement (seeded PCG, so the result is
// reproducible) and returns the percentile interval of rate(A) - rate(B).
func BootstrapDifference(clusters []Cluster, resamples int, seed uint64, confidence float64) Difference {
	d := Difference{Confidence: confidence, Resamples: resamples, Seed: seed}
	est, ok := diffOf(clusters, nil)
	if !ok || resamples < 1 {
		return d
	}
	d.Estimate, d.OK = est, true
	rng := rand.New(rand.NewPCG(seed, 0x6475706c65786d70)) // stream constant: "duplexmp"
	draws := make([]float64, 0, resamples)
	pick := make([]int, len(clusters))
	for range resamples {
		for i := range pick {
			pick[i] = rng.IntN(len(clusters))
		}
		if v, ok := diffOf(clusters, pick); ok {
			draws = append(draws, v)
		}
	}
	d.Used = len(draws)
	if len(draws) == 0 {
		d.Lo, d.Hi = est, est
		return d
	}
	sort.Float64s(draws)
	alpha := (1 - confidence) / 2
	d.Lo = quantile(draws, alpha)
	d.Hi = quantile(draws, 1-alpha)
	return d
}

// diffOf computes the ratio-of-sums difference over the clusters picked (all when pick is nil).
func diffOf(c []Cluster, pick []int) (float64, bool) {
	var ak, an, bk, bn float64
	add := func(x Cluster) { ak += x.AK; an += x.AN; bk += x.BK; bn += x.BN }
	if pick == nil {
		for _, x := range c {
			add(x)
		}
	} else {
		for _, i := range pick {
			add(c[i])
		}
	}
	if an == 0 || bn == 0 {
		return 0, false
	}
	return ak/an - bk/bn, true
}

// quantile of sorted data with linear interpolation between order statistics (NumPy's
// default, "linear").
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	frac := pos - float64(lo)
	return sorted[lo] + frac*(sorted[hi]-sorted[lo])
}
