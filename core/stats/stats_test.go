package stats

import (
	"math"
	"testing"
)

// Reference values below were produced with SciPy 1.17.1 and statsmodels 0.15.0
// (Python 3.11, a throwaway venv outside the repo):
//
//	statsmodels.stats.contingency_tables.mcnemar([[0, b], [c, 0]], exact=True).pvalue
//	statsmodels.stats.proportion.proportion_confint(k, n, alpha=1-conf, method="wilson")
//	scipy.stats.spearmanr(x, y).statistic

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestMcNemarExactMatchesStatsmodels(t *testing.T) {
	cases := []struct {
		b, c int
		want float64
	}{
		{90, 78, 0.3961333413963789}, // the paper check of protocol section 6: p = 0.396
		{0, 0, 1},                    // b + c = 0: p = 1 by definition
		{0, 5, 0.0625},
		{3, 12, 0.03515625},
		{1, 1, 1},
		{10, 0, 0.001953125},
		{7, 7, 1},
		{400, 450, 0.09276544997048893},
		{1500, 1650, 0.007925667810472187},
	}
	for _, tc := range cases {
		got := McNemarExact(tc.b, tc.c)
		if !near(got, tc.want, 1e-9) {
			t.Errorf("McNemarExact(%d, %d) = %.12g, want %.12g", tc.b, tc.c, got, tc.want)
		}
		if sym := McNemarExact(tc.c, tc.b); sym != got {
			t.Errorf("McNemarExact is not symmetric for (%d, %d): %g vs %g", tc.b, tc.c, got, sym)
		}
	}
	if got := McNemarExact(90, 78); math.Round(got*1000)/1000 != 0.396 {
		t.Errorf("paper check: b=90, c=78 gives %.3f, want 0.396", got)
	}
}

func TestWilsonMatchesStatsmodels(t *testing.T) {
	cases := []struct {
		k, n   int
		conf   float64
		lo, hi float64
	}{
		{0, 10, 0.95, 0.0, 0.2775327998628892},
		{10, 10, 0.95, 0.7224672001371107, 1},
		{3, 10, 0.95, 0.10779126740630099, 0.6032218525388546},
		{1633, 2000, 0.95, 0.7989346277970811, 0.8328518812738858},
		{1, 1, 0.95, 0.20654931437723745, 1.0},
		{50, 100, 0.99, 0.37527962504483986, 0.6247203749551602},
		{7, 30, 0.90, 0.13176024453803759, 0.3790260531286821},
	}
	for _, tc := range cases {
		lo, hi := Wilson(tc.k, tc.n, tc.conf)
		if !near(lo, tc.lo, 1e-9) || !near(hi, tc.hi, 1e-9) {
			t.Errorf("Wilson(%d, %d, %g) = [%.12g, %.12g], want [%.12g, %.12g]", tc.k, tc.n, tc.conf, lo, hi, tc.lo, tc.hi)
		}
	}
	if lo, hi := Wilson(0, 0, 0.95); lo != 0 || hi != 1 {
		t.Errorf("Wilson with n = 0 = [%g, %g], want [0, 1]", lo, hi)
	}
	for _, conf := range []float64{0, 1, -1, math.NaN()} {
		if lo, hi := Wilson(3, 10, conf); lo != 0 || hi != 1 {
			t.Errorf("Wilson at confidence %g = [%g, %g], want [0, 1]", conf, lo, hi)
		}
	}
	// Counts outside [0, n] are clamped.
	if lo, hi := Wilson(12, 10, 0.95); !near(lo, 0.7224672001371107, 1e-12) || hi != 1 {
		t.Errorf("Wilson(12, 10) = [%g, %g], want the 10/10 interval", lo, hi)
	}
}

func TestSpearmanMatchesSciPy(t *testing.T) {
	cases := []struct {
		x, y []float64
		want float64
	}{
		// presence vs fresh onset of the five published models (protocol section 8)
		{[]float64{0.955, 0.816, 0.951, 0.652, 0.996}, []float64{0.950, 0.634, 0.538, 0.647, 0.253}, -0.39999999999999997},
		// ties in x
		{[]float64{1, 2, 2, 3, 4, 4, 4, 5}, []float64{3, 1, 4, 1, 5, 9, 2, 6}, 0.5495502618648208},
		// ties in both
		{[]float64{0.1, 0.5, 0.5, 0.9}, []float64{1, 1, 2, 0}, -0.5000000000000001},
	}
	for _, tc := range cases {
		got, ok := Spearman(tc.x, tc.y)
		if !ok || !near(got, tc.want, 1e-12) {
			t.Errorf("Spearman(%v, %v) = %v (ok %v), want %v", tc.x, tc.y, got, ok, tc.want)
		}
	}
	for _, bad := range [][2][]float64{{{1}, {2}}, {{1, 2}, {1}}, {{1, 1, 1}, {1, 2, 3}}} {
		if _, ok := Spearman(bad[0], bad[1]); ok {
			t.Errorf("Spearman(%v, %v) should be undefined", bad[0], bad[1])
		}
	}
}

func TestRanksAverageTies(t *testing.T) {
	got := Ranks([]float64{10, 20, 20, 5})
	want := []float64{2, 3.5, 3.5, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Ranks = %v, want %v", got, want)
		}
	}
}

func TestBonferroni(t *testing.T) {
	got := Bonferroni([]float64{0.01, 0.2, 0.5})
	want := []float64{0.03, 0.6, 1}
	for i := range want {
		if !near(got[i], want[i], 1e-15) {
			t.Fatalf("Bonferroni = %v, want %v", got, want)
		}
	}
}
