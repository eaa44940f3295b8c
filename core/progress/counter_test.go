package progress

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a printer that writes down what it is told.
type recorder struct {
	shown  []string // each Show: the label, unit and parts
	events []string
}

func (r *recorder) Show(c *Counter) Display {
	s := c.Label() + " (" + c.Unit + ")"
	for _, p := range c.Parts() {
		s += " " + p.Name
	}
	r.shown = append(r.shown, s)
	return recorded{r, c}
}

type recorded struct {
	r *recorder
	c *Counter
}

func (d recorded) Update() {
	s := d.c.Total().Read()
	d.r.events = append(d.r.events, fmt.Sprintf("update %d/%d", s.Done, s.Total))
}

func (d recorded) Finish(ok bool) {
	if ok {
		d.r.events = append(d.r.events, "finish ok")
	} else {
		d.r.events = append(d.r.events, "finish stopped")
	}
}

// The domain starts a phase with named parts, counts into them, and its maker ends it:
// the printer is shown it once, told of each count and of the end once.
func TestCounterTellsItsPrinter(t *testing.T) {
	c := newClock()
	var r recorder
	ctr := New(&r, "playing", "default", "conversations")
	ctr.now = c.now
	ctr.Add(1) // before Start: nothing to count into
	ctr.StartParts(Share{Name: "silent", Total: 2, Reused: 1}, Share{Name: "cascade", Total: 3})
	ctr.Start(9) // a second start changes nothing
	if len(r.shown) != 1 || r.shown[0] != "playing default (conversations) silent cascade" {
		t.Fatalf("shown %q", r.shown)
	}
	c.advance(time.Minute)
	ctr.AddTo("cascade", 2)
	ctr.AddTo("nosuch", 1) // no such part: not counted
	ctr.Add(1)             // a phase of parts counts by part
	ctr.AddTo("silent", 1)
	ctr.Finish(false)
	// Reused units are done but not in the rate: 3 worked in the minute.
	if s := ctr.Total().Read(); s.Done != 4 || s.RateText() != "3.0/min" {
		t.Errorf("total at the end: %d done at %s, want 4 at 3.0/min", s.Done, s.RateText())
	}
	ctr.Finish(true) // ended already
	ctr.AddTo("cascade", 1)
	want := []string{"update 3/5", "update 4/5", "finish stopped"}
	if strings.Join(r.events, ", ") != strings.Join(want, ", ") {
		t.Errorf("printer told %q, want %q", r.events, want)
	}
	if s := ctr.Total().Read(); s.Done != 5 {
		t.Errorf("%d done after the end, want 5: counting goes on, showing does not", s.Done)
	}
}

// A nil counter (the domain called without one) and one without a printer count
// without showing; one never started shows nothing when finished.
func TestCounterWithoutPrinter(t *testing.T) {
	var none *Counter
	none.Start(3)
	none.StartParts(Share{Name: "a", Total: 1})
	none.Add(1)
	none.AddTo("a", 1)
	none.Finish(true)

	quiet := New(nil, "scoring", "x", "conversations")
	quiet.Start(3)
	quiet.Add(2)
	quiet.Finish(true)
	if s := quiet.Total().Read(); s.Done != 2 || s.Total != 3 {
		t.Errorf("counted %d/%d, want 2/3", s.Done, s.Total)
	}

	var r recorder
	New(&r, "scoring", "x", "conversations").Finish(false)
	if len(r.shown)+len(r.events) != 0 {
		t.Errorf("a counter never started showed %q %q", r.shown, r.events)
	}
}

// Lines writes the phase's first line when it starts and its last when it ends, named
// by the counter's label (the verb alone when it has no name), and nothing after.
func TestLinesPrinter(t *testing.T) {
	c := newClock()
	var out bytes.Buffer
	ctr := New(Lines(&out), "deciding", "", "scenarios")
	ctr.now = c.now
	ctr.Start(2)
	c.advance(20 * time.Second)
	ctr.Add(1) // before LogEvery: no line
	ctr.Finish(false)
	c.advance(time.Minute)
	ctr.Add(1)
	want := "deciding: 0/2 scenarios, 0%, -, time left unknown\ndeciding: 1/2 scenarios, 50%, 3.0/min, 20s left\n"
	if out.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", out.String(), want)
	}
}
