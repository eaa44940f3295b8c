package construct

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Lapses: without a share every gap is NaturalGap's (open v1's stored gaps cannot move);
// with one, about that share of ordinary turns get 3-8 s, uniformly, and the others keep
// their NaturalGap; the draw is a pure function of seed, pair and turn.
func TestLapses(t *testing.T) {
	const share = 0.2
	off, on := CompileSpec{GapSeed: 1}, CompileSpec{GapSeed: 1, LapseShare: share}
	n, lapses, over5 := 0, 0, 0
	for p := 0; p < 500; p++ {
		pair := fmt.Sprintf("p%03d", p)
		for i := 0; i < 12; i++ {
			n++
			if off.Gap(pair, i) != NaturalGap(1, pair, i) {
				t.Fatalf("%s turn %d: no lapse share, but the gap is not NaturalGap's", pair, i)
			}
			g := on.Gap(pair, i)
			if g != on.Gap(pair, i) {
				t.Fatal("not deterministic")
			}
			if g > NaturalLongMax {
				if g < NaturalLapseMin || g > NaturalLapseMax {
					t.Fatalf("lapse %g outside [%g, %g]", g, NaturalLapseMin, NaturalLapseMax)
				}
				lapses++
				if g > 5.5 {
					over5++
				}
			} else if g != NaturalGap(1, pair, i) {
				t.Fatalf("%s turn %d: not a lapse, yet not NaturalGap's gap", pair, i)
			}
		}
	}
	if got := float64(lapses) / float64(n); math.Abs(got-share) > 0.025 {
		t.Errorf("lapse share %.3f, want about %g", got, share)
	}
	// Uniform in [3, 8]: half of them over 5.5 s.
	if got := float64(over5) / float64(lapses); math.Abs(got-0.5) > 0.08 {
		t.Errorf("share of lapses over 5.5 s %.3f, want about 0.5", got)
	}
}

// A release spec's lapse_share is a share: 1 or more, or negative, is refused by name.
func TestReleaseSpecLapseShare(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		share string
		ok    bool
	}{{"0.15", true}, {"1", false}, {"-0.1", false}} {
		p := filepath.Join(dir, "release.json")
		spec := `{"name":"x","version":"1","licence":"CC0","gap_seed":1,"lapse_share":` + c.share + `,"sources":["a.jsonl"],"dev":"dev.txt","out":"."}`
		if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadReleaseSpec(p)
		if c.ok != (err == nil) {
			t.Fatalf("lapse_share %s: err %v", c.share, err)
		}
		if err != nil && !strings.Contains(err.Error(), "lapse_share") {
			t.Errorf("error %q does not name lapse_share", err)
		}
		if c.ok && s.LapseShare != 0.15 {
			t.Errorf("lapse share read as %g", s.LapseShare)
		}
	}
}
