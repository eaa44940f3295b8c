package stats

import (
	"math"
	"testing"
)

func TestBootstrapIsSeededAndDeterministic(t *testing.T) {
	cl := make([]Cluster, 50)
	for i := range cl {
		cl[i] = Cluster{AK: float64(i % 2), AN: 1, BK: float64(i % 3 / 2), BN: 1}
	}
	a := BootstrapDifference(cl, 2000, 7, 0.95)
	b := BootstrapDifference(cl, 2000, 7, 0.95)
	c := BootstrapDifference(cl, 2000, 8, 0.95)
	if a != b {
		t.Fatalf("same seed gave different results: %+v vs %+v", a, b)
	}
	if a.Lo == c.Lo && a.Hi == c.Hi {
		t.Errorf("different seeds gave the same interval %+v; the seed is not used", a)
	}
	if !(a.Lo <= a.Estimate && a.Estimate <= a.Hi) {
		t.Errorf("interval [%g, %g] does not contain the estimate %g", a.Lo, a.Hi, a.Estimate)
	}
}

// With model B always failing, rate(A) - rate(B) is rate(A), and on 400 independent
// single-event clusters the percentile interval must agree with the normal (Wald)
// interval p +- 1.96 sqrt(p(1-p)/n) to within Monte Carlo error.
func TestBootstrapMatchesNormalTheoryOnIndependentEvents(t *testing.T) {
	const n = 400
	cl := make([]Cluster, n)
	for i := range cl {
		if i%10 < 3 { // p = 0.3
			cl[i].AK = 1
		}
		cl[i].AN, cl[i].BN = 1, 1
	}
	d := BootstrapDifference(cl, 10000, 1, 0.95)
	se := math.Sqrt(0.3 * 0.7 / n)
	if !near(d.Estimate, 0.3, 1e-12) {
		t.Fatalf("estimate %g, want 0.3", d.Estimate)
	}
	if !near(d.Lo, 0.3-1.96*se, 0.006) || !near(d.Hi, 0.3+1.96*se, 0.006) {
		t.Errorf("interval [%g, %g], want about [%g, %g]", d.Lo, d.Hi, 0.3-1.96*se, 0.3+1.96*se)
	}
	if d.Used != 10000 {
		t.Errorf("used %d resamples, want 10000", d.Used)
	}
}

// Resampling whole clusters must widen the interval when events within a scenario are
// correlated: 40 clusters of 10 identical events carry the information of 40 events,
// not 400.
func TestBootstrapResamplesWholeClusters(t *testing.T) {
	var pooled, split []Cluster
	for i := range 40 {
		k := 0.0
		if i%10 < 3 {
			k = 10
		}
		pooled = append(pooled, Cluster{AK: k, AN: 10, BN: 10})
		for range 10 {
			s := Cluster{AN: 1, BN: 1}
			if k > 0 {
				s.AK = 1
			}
			split = append(split, s)
		}
	}
	wc := BootstrapDifference(pooled, 4000, 3, 0.95)
	wi := BootstrapDifference(split, 4000, 3, 0.95)
	if !near(wc.Estimate, wi.Estimate, 1e-12) {
		t.Fatalf("estimates differ: %g vs %g", wc.Estimate, wi.Estimate)
	}
	if ratio := (wc.Hi - wc.Lo) / (wi.Hi - wi.Lo); ratio < 2.5 {
		t.Errorf("cluster interval is only %.2f times the independent one; want about sqrt(10) = 3.16", ratio)
	}
}

func TestBootstrapRatioOfSumsKeepsDenominators(t *testing.T) {
	// A: 3/4 and 1/1 -> 4/5 = 0.8 (not the mean of cluster rates, 0.875); B: 0/2 and 2/2 -> 0.5.
	cl := []Cluster{{AK: 3, AN: 4, BK: 0, BN: 2}, {AK: 1, AN: 1, BK: 2, BN: 2}}
	d := BootstrapDifference(cl, 100, 1, 0.95)
	if !d.OK || !near(d.Estimate, 0.3, 1e-12) {
		t.Fatalf("estimate %+v, want 0.8 - 0.5 = 0.3", d)
	}
	if d := BootstrapDifference([]Cluster{{AK: 1, AN: 1}}, 100, 1, 0.95); d.OK {
		t.Errorf("B has no denominator, yet the difference is reported: %+v", d)
	}
}

// BenchmarkBootstrap2000Pairs is one model comparison at paper scale: 2,000 pairs,
// 10,000 resamples.
func BenchmarkBootstrap2000Pairs(b *testing.B) {
	cl := make([]Cluster, 2000)
	for i := range cl {
		cl[i] = Cluster{AK: float64(i % 2), AN: 1, BK: float64(i % 3 % 2), BN: 1}
	}
	for b.Loop() {
		BootstrapDifference(cl, 10000, 1, 0.95)
	}
}
