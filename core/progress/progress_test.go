package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a fake clock that the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func TestMeterRateAndTimeLeft(t *testing.T) {
	c := newClock()
	m := NewMeter(c.now, 40, 10) // 10 reused from the store: done, but not in the rate
	s := m.Read()
	if s.Done != 10 || s.Total != 40 || s.Rate != 0 || s.Known || s.LeftText() != "time left unknown" || s.RateText() != "-" {
		t.Errorf("at start: %+v %q %q", s, s.LeftText(), s.RateText())
	}
	c.advance(10 * time.Second)
	if s := m.Read(); s.Known || s.Elapsed != 10*time.Second {
		t.Errorf("nothing done yet, yet a time left: %+v", s)
	}
	c.advance(50 * time.Second)
	m.Add(3) // 3 in 60 s: 3/min; 27 left: 9 min
	s = m.Read()
	if s.Rate != 0.05 || !s.Known || s.Left != 9*time.Minute {
		t.Errorf("3 done in 60 s: rate %v, left %v (known %v); want 0.05/s, 9m0s", s.Rate, s.Left, s.Known)
	}
	if got := s.Status(); got != "32%, 3.0/min, 9m0s left" {
		t.Errorf("status %q", got)
	}
	c.advance(60 * time.Second)
	m.Add(27) // all 30 in 120 s
	s = m.Read()
	if s.Left != 0 || !s.Known || s.LeftText() != "done" || s.RateText() != "15.0/min" || s.Percent() != 100 {
		t.Errorf("all done: %+v %q %q", s, s.LeftText(), s.RateText())
	}
	fast := NewMeter(c.now, 100, 0)
	c.advance(2 * time.Second)
	fast.Add(5)
	if s := fast.Read(); s.RateText() != "2.5/s" || s.Left != 38*time.Second {
		t.Errorf("fast: %q, %v left", s.RateText(), s.Left)
	}
	slow := NewMeter(c.now, 3, 0)
	c.advance(2 * time.Hour)
	slow.Add(1)
	if s := slow.Read(); s.RateText() != "0.5/h" || s.LeftText() != "4h0m0s left" {
		t.Errorf("slow: %q, %q", s.RateText(), s.LeftText())
	}
	if s := NewMeter(c.now, 0, 0).Read(); s.Percent() != 100 || s.LeftText() != "done" {
		t.Errorf("nothing to do: %+v", s)
	}
}

// Off a terminal a phase writes a line when it starts, at least every 30 s of its clock
// while it runs (whether or not a unit finished), and once at the end.
func TestLogLineAtLeastEvery30s(t *testing.T) {
	c := newClock()
	var out bytes.Buffer
	total := NewMeter(c.now, 4, 1)
	a, b := NewMeter(c.now, 2, 1), NewMeter(c.now, 2, 0)
	l := NewLog(&out, c.now, "playing default", "conversations", total, Part{"silent", a}, Part{"cascade", b})
	lines := func() []string { return strings.Split(strings.TrimSpace(out.String()), "\n") }
	if got := lines(); len(got) != 1 || got[0] != "playing default: 1/4 conversations, 25%, -, time left unknown; silent 1/2, cascade 0/2" {
		t.Fatalf("first line: %q", got)
	}
	c.advance(29 * time.Second)
	l.Tick()
	if n := len(lines()); n != 1 {
		t.Errorf("a line before 30 s: %d lines", n)
	}
	c.advance(time.Second)
	l.Tick()
	l.Tick() // the same moment: no second line
	if got := lines(); len(got) != 2 || got[1] != "playing default: 1/4 conversations, 25%, -, time left unknown; silent 1/2, cascade 0/2" {
		t.Fatalf("at 30 s with nothing done: %q", got)
	}
	c.advance(30 * time.Second)
	a.Add(1)
	total.Add(1) // 1 in 60 s, 2 left
	l.Tick()
	if got := lines(); len(got) != 3 || got[2] != "playing default: 2/4 conversations, 50%, 1.0/min, 2m0s left; silent 2/2, cascade 0/2" {
		t.Fatalf("at 60 s: %q", got)
	}
	c.advance(5 * time.Second)
	b.Add(2)
	total.Add(2)
	l.Finish()
	l.Tick()
	c.advance(time.Minute)
	l.Tick()
	if got := lines(); len(got) != 4 || got[3] != "playing default: 4/4 conversations, 100%, 2.8/min, done; silent 2/2, cascade 2/2" {
		t.Fatalf("the end: %q", got)
	}
}

// A phase whose parts run side by side ends with its slowest part: its time left is the
// longest of theirs, not what its overall rate says.
func TestSumEndsWithItsSlowestPart(t *testing.T) {
	c := newClock()
	fast, slow := NewMeter(c.now, 24, 4), NewMeter(c.now, 24, 0)
	sum := Sum(c.now, fast, slow)
	if s := sum.Read(); s.Done != 4 || s.Total != 48 || s.Known {
		t.Errorf("at start: %+v", s)
	}
	c.advance(time.Minute)
	fast.Add(20) // the fast part is done: 20/min
	slow.Add(2)  // 2/min: 22 left, 11 min
	s := sum.Read()
	// Overall: 22 done in 1 min, 22 left: 1 min at the overall rate; the slow part says 11.
	if s.Done != 26 || s.Rate*60 != 22 || !s.Known || s.Left != 11*time.Minute {
		t.Errorf("sum: %+v, want 26/48 at 22/min with 11m0s left", s)
	}
	unknown := NewMeter(c.now, 5, 0)
	s = Sum(c.now, fast, unknown).Read()
	if s.Known || s.LeftText() != "time left unknown" {
		t.Errorf("nothing worked since the sum started, yet %q", s.LeftText())
	}
	c.advance(10 * time.Minute)
	slow.Add(22)
	if s := sum.Read(); s.Done != 48 || s.Left != 0 || s.LeftText() != "done" {
		t.Errorf("all done: %+v", s)
	}
}
