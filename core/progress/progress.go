// Package progress counts work for the people waiting on it: the Counter the domain
// reports each phase into (clips synthesised, conversations played or scored), the
// arithmetic of its display (done of total, the rate at which the work done now goes,
// the time left at that rate, read from a clock: the wall clock in the commands, a fake
// one in tests) and its plain-text form (Lines). Bars on a terminal are the CLI's
// (core/cli), the only package that knows whether there is one; nothing here draws or
// asks. Nothing a run produces depends on this package.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Meter counts the units of one phase (clips synthesised, conversations played or
// scored). Units already done before it started (reused from a store) count as done but
// not in the rate, which is of the work done since Start. It is safe for concurrent use.
type Meter struct {
	now func() time.Time

	mu      sync.Mutex
	total   int
	done    int // units done, reused included
	reused  int // units done before Start
	started time.Time
	parts   []*Meter // a Sum's
}

// NewMeter is a meter of total units, reused of them already done, started now.
func NewMeter(now func() time.Time, total, reused int) *Meter {
	return &Meter{now: now, total: total, done: reused, reused: reused, started: now()}
}

// Sum is the meter of parts that run side by side (a model's conversations each): its
// counts are theirs added up, and its time left is the longest of the time left at its
// own rate and theirs, since the phase ends with its slowest part (a fast part done
// early would otherwise make the whole look nearly done). Add is not used on it.
func Sum(now func() time.Time, parts ...*Meter) *Meter {
	return &Meter{now: now, started: now(), parts: parts}
}

// Add counts n more units done.
func (m *Meter) Add(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done += n
}

// Snapshot is a meter read at one moment.
type Snapshot struct {
	Done, Total int
	Elapsed     time.Duration // since Start
	// Rate is units per second done since Start; 0 until one is.
	Rate float64
	// Left is the time the units not done yet take at Rate; Known is false until one
	// unit was done since Start (no rate to go by) and true (Left 0) once all are done.
	Left  time.Duration
	Known bool
}

// Read reads the meter now.
func (m *Meter) Read() Snapshot {
	s, _ := m.snapshot(m.now())
	return s
}

// snapshot reads the meter at now, with how many of its done units were reused. A Sum
// reads each part once, at the same moment, for both its counts and its time left.
func (m *Meter) snapshot(now time.Time) (Snapshot, int) {
	if m.parts == nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		return read(m.done, m.total, m.reused, now.Sub(m.started)), m.reused
	}
	var done, total, reused int
	var left time.Duration
	for _, p := range m.parts {
		ps, r := p.snapshot(now)
		done, total, reused = done+ps.Done, total+ps.Total, reused+r
		if ps.Known {
			left = max(left, ps.Left)
		}
	}
	s := read(done, total, reused, now.Sub(m.started))
	if s.Known {
		s.Left = max(s.Left, left)
	}
	return s, reused
}

func read(done, total, reused int, elapsed time.Duration) Snapshot {
	s := Snapshot{Done: done, Total: total, Elapsed: elapsed}
	worked := done - reused
	if s.Elapsed > 0 && worked > 0 {
		s.Rate = float64(worked) / s.Elapsed.Seconds()
	}
	switch rest := total - done; {
	case rest <= 0:
		s.Known = true
	case s.Rate > 0:
		s.Left, s.Known = time.Duration(float64(rest)/s.Rate*float64(time.Second)), true
	}
	return s
}

// RateText formats the rate in units per second, or per minute or hour when slower.
func (s Snapshot) RateText() string {
	switch r := s.Rate; {
	case r == 0:
		return "-"
	case r >= 1:
		return fmt.Sprintf("%.1f/s", r)
	case r*60 >= 1:
		return fmt.Sprintf("%.1f/min", r*60)
	default:
		return fmt.Sprintf("%.1f/h", r*3600)
	}
}

// LeftText is the time left, rounded to the second: "4m10s left", "done" when nothing is
// left, "time left unknown" before anything was done.
func (s Snapshot) LeftText() string {
	switch {
	case s.Done >= s.Total:
		return "done"
	case !s.Known:
		return "time left unknown"
	}
	return s.Left.Round(time.Second).String() + " left"
}

// Percent is the share done, rounded down (100 when there is nothing to do).
func (s Snapshot) Percent() int {
	if s.Total <= 0 {
		return 100
	}
	return 100 * s.Done / s.Total
}

// Status is what follows the counts: "30%, 0.8/min, 4m10s left".
func (s Snapshot) Status() string {
	return fmt.Sprintf("%d%%, %s, %s", s.Percent(), s.RateText(), s.LeftText())
}

// LogEvery is how often a Log writes a line while its phase runs.
const LogEvery = 30 * time.Second

// Log writes a phase's progress as plain lines, for a log file or CI: one when it
// starts, one at least every LogEvery while it runs (Tick), one at the end (Finish). Its
// line is the meters it is given, the first the phase's total:
//
//	playing default: 30/120 conversations, 25%, 1.2/min, 1h15m0s left; silent 24/24, cascade 6/24
type Log struct {
	w      io.Writer
	prefix string // "playing default"
	unit   string // "conversations"
	total  *Meter
	parts  []Part
	now    func() time.Time

	mu   sync.Mutex
	last time.Time
	done bool
}

// Part is a named share of a phase (a model's conversations).
type Part struct {
	Name  string
	Meter *Meter
}

// NewLog writes its first line at once.
func NewLog(w io.Writer, now func() time.Time, prefix, unit string, total *Meter, parts ...Part) *Log {
	l := &Log{w: w, prefix: prefix, unit: unit, total: total, parts: parts, now: now}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writeLocked()
	return l
}

// Tick writes a line when LogEvery has passed since the last one; callers call it often
// (every second, and as units finish).
func (l *Log) Tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done && l.now().Sub(l.last) >= LogEvery {
		l.writeLocked()
	}
}

// Finish writes the last line; Tick writes nothing after it.
func (l *Log) Finish() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.writeLocked()
		l.done = true
	}
}

func (l *Log) writeLocked() {
	l.last = l.now()
	s := l.total.Read()
	line := fmt.Sprintf("%s: %d/%d %s, %s", l.prefix, s.Done, s.Total, l.unit, s.Status())
	if len(l.parts) > 0 {
		var parts []string
		for _, p := range l.parts {
			ps := p.Meter.Read()
			parts = append(parts, fmt.Sprintf("%s %d/%d", p.Name, ps.Done, ps.Total))
		}
		line += "; " + strings.Join(parts, ", ")
	}
	fmt.Fprintln(l.w, line)
}

// Ticking calls tick every period until the returned stop is called (which waits for
// the last call to end). The commands use it with Log.Tick on the wall clock.
func Ticking(period time.Duration, tick func()) (stop func()) {
	t := time.NewTicker(period)
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-t.C:
				tick()
			case <-quit:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.Stop()
			close(quit)
			<-ended
		})
	}
}
