package timeline

import "testing"

// Episodes are half-open [s, e): active at s, not at e (protocol section 4).
func TestActiveIsHalfOpen(t *testing.T) {
	eps := []Episode{{Start: 1, End: 2}, {Start: 3.5, End: 4}}
	for _, c := range []struct {
		t    float64
		want bool
	}{{0.99, false}, {1, true}, {1.5, true}, {2, false}, {3, false}, {3.5, true}, {3.99, true}, {4, false}} {
		if got := Active(eps, c.t); got != c.want {
			t.Errorf("Active(%g) = %v, want %v", c.t, got, c.want)
		}
	}
	if Active(nil, 0) {
		t.Error("no episodes is active")
	}
	if d := (Episode{Start: 1.25, End: 2}).Duration(); d != 0.75 {
		t.Errorf("Duration = %g", d)
	}
}
