package progress

import (
	"io"
	"strings"
	"sync"
	"time"
)

// Counter is the one progress counter of the program: the domain (core/construct,
// core/evaluate, core/app) reports a phase of counted work into it, a Printer shows
// it. The domain only counts; whether that becomes a bar on a terminal, a few lines in
// a log or nothing at all is the printer's business, and the printer is the command's
// (core/cli). A nil *Counter counts nothing, so the domain calls it unconditionally.
//
// A phase is started once, with one total (Start) or with named parts that run side by
// side (StartParts: a model's conversations each); units are counted as they finish
// (Add, AddTo), and whoever made the counter ends it (Finish). Its methods are safe for
// concurrent use.
type Counter struct {
	// Verb, Name and Unit say what is counted: "synthesising", "open-v1", "clips".
	Verb, Name, Unit string

	printer Printer
	now     func() time.Time

	mu       sync.Mutex
	total    *Meter
	parts    []Part
	byName   map[string]*Meter
	display  Display
	finished bool
}

// Printer shows counters; the CLI's draws bars on a terminal and writes Lines
// elsewhere.
type Printer interface {
	// Show is called once, when c starts (its Total and Parts are set); it returns the
	// display c then keeps up to date.
	Show(c *Counter) Display
}

// Display is one counter as a printer shows it.
type Display interface {
	// Update is called after units were counted, from any goroutine, never at once.
	Update()
	// Finish ends the display; ok is false when the work stopped early.
	Finish(ok bool)
}

// New is a counter of verb name's units shown by p (nil: counted, not shown). Its
// rates are read from the wall clock: nothing a run produces depends on them.
func New(p Printer, verb, name, unit string) *Counter {
	return &Counter{Verb: verb, Name: name, Unit: unit, printer: p, now: time.Now}
}

// Share is a named part of a phase as it starts: its units, and how many of them are
// done already (reused from a store: done, but not in the rates).
type Share struct {
	Name          string
	Total, Reused int
}

// Start starts a phase of total units, none done.
func (c *Counter) Start(total int) {
	c.start(func() { c.total = NewMeter(c.now, total, 0) })
}

// StartParts starts a phase made of parts that run side by side; the phase's total is
// their Sum.
func (c *Counter) StartParts(shares ...Share) {
	c.start(func() {
		c.byName = map[string]*Meter{}
		var meters []*Meter
		for _, s := range shares {
			m := NewMeter(c.now, s.Total, s.Reused)
			c.parts = append(c.parts, Part{Name: s.Name, Meter: m})
			c.byName[s.Name] = m
			meters = append(meters, m)
		}
		c.total = Sum(c.now, meters...)
	})
}

// start sets the meters with set and shows the phase, once.
func (c *Counter) start(set func()) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total != nil {
		return
	}
	set()
	if c.printer != nil {
		c.display = c.printer.Show(c)
	}
}

// Add counts n more units done, in a phase started with Start.
func (c *Counter) Add(n int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total == nil || c.parts != nil {
		return
	}
	c.total.Add(n)
	c.updateLocked()
}

// AddTo counts n more units of the named part done, in a phase started with
// StartParts.
func (c *Counter) AddTo(part string, n int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.byName[part]
	if m == nil {
		return
	}
	m.Add(n)
	c.updateLocked()
}

func (c *Counter) updateLocked() {
	if c.display != nil && !c.finished {
		c.display.Update()
	}
}

// Finish ends the phase (ok: it ran to its end); a counter never started shows
// nothing, and a second Finish does nothing.
func (c *Counter) Finish(ok bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return
	}
	c.finished = true
	if c.display != nil {
		c.display.Finish(ok)
	}
}

// Label is what a display calls the phase: "synthesising open-v1", or the verb alone
// when there is no name.
func (c *Counter) Label() string {
	return strings.TrimSpace(c.Verb + " " + c.Name)
}

// Total is the phase's meter (the Sum of its parts when it has some). It is for the
// printer: set when the phase starts, before Show, and never changed after.
func (c *Counter) Total() *Meter { return c.total }

// Parts are the named parts of a phase started with StartParts, in their order; for
// the printer, like Total.
func (c *Counter) Parts() []Part { return c.parts }

// Lines is the plain-text printer, for a log file, a pipe or CI: a line when a phase
// starts, at least every LogEvery while it runs, and one at the end (see Log).
func Lines(w io.Writer) Printer { return linesPrinter{w} }

type linesPrinter struct{ w io.Writer }

func (p linesPrinter) Show(c *Counter) Display {
	log := NewLog(p.w, c.now, c.Label(), c.Unit, c.total, c.parts...)
	return &lines{log: log, stop: Ticking(time.Second, log.Tick)}
}

type lines struct {
	log  *Log
	stop func() // the ticker's
}

func (l *lines) Update() { l.log.Tick() }

func (l *lines) Finish(bool) {
	l.stop()
	l.log.Finish()
}
