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

// SilentFor follows the scorer's episodes (docs/protocol.md section 3.5): closed episodes
// are speech; an open episode sure to be kept is speech that has not ended; one not yet
// sure to be kept (a click shorter than min_speech) is nothing, voicing or not (issue 24:
// a click voicing at every decision of 1 s frames held the endpoint to the cap).
func TestHeardSilentFor(t *testing.T) {
	answer := Episode{Start: 1, End: 2}
	for _, c := range []struct {
		name string
		h    Heard
		want bool
	}{
		{"2 s after the answer", Heard{Closed: []Episode{answer}, Until: 4}, true},
		{"less than 2 s after it", Heard{Closed: []Episode{answer}, Until: 3.99}, false},
		{"a click voicing at the decision", Heard{Closed: []Episode{answer}, Open: &Episode{Start: 4.9, End: 5}, Until: 5}, true},
		{"a click in its pause", Heard{Closed: []Episode{answer}, Open: &Episode{Start: 4.8, End: 4.9}, Until: 5}, true},
		{"kept speech voicing", Heard{Closed: []Episode{answer}, Open: &Episode{Start: 4.8, End: 5}, OpenKept: true, Until: 5}, false},
		{"kept speech in a pause not yet resolved", Heard{Open: &Episode{Start: 1, End: 2}, OpenKept: true, Until: 4.5}, false},
	} {
		if got := c.h.SilentFor(2); got != c.want {
			t.Errorf("%s: SilentFor(2) = %v, want %v", c.name, got, c.want)
		}
	}
}
