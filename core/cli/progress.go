package cli

import (
	"io"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/duplexmpe/duplexmpe/core/progress"
)

// progressPrinter shows the counters the stages report into (core/progress), and is
// the only place that asks whether stderr is a terminal for them: on a terminal a bar
// per part of a phase (a model's conversations), and one for the whole phase when it
// has several parts or none, each with done/total, the rate, the time left and the time
// elapsed; anywhere else (a log, a pipe, CI, tests) progress.Lines: a line when the
// phase starts, at least every 30 s and at the end.
//
// The bars are not tied to the command's context: a phase that starts after Ctrl-C
// (the scoring left when an interrupted loop returns) still gets its bars, and every
// phase's maker finishes it, which ends them.
type progressPrinter struct{ w io.Writer }

func (p progressPrinter) Show(c *progress.Counter) progress.Display {
	if tty, _ := terminal(p.w); !tty {
		return progress.Lines(p.w).Show(c)
	}
	d := &progressBars{p: mpb.New(mpb.WithOutput(p.w), mpb.WithWidth(40))}
	parts := c.Parts()
	for _, part := range parts {
		d.add(part.Name, "", part.Meter)
	}
	if len(parts) != 1 {
		unit := ""
		if len(parts) == 0 {
			unit = " " + c.Unit
		}
		d.add(c.Label(), unit, c.Total())
	}
	return d
}

// progressBars is a phase on a terminal.
type progressBars struct {
	p      *mpb.Progress
	bars   []*mpb.Bar
	meters []*progress.Meter // each bar's
}

func (d *progressBars) add(name, unit string, m *progress.Meter) {
	s := m.Read()
	status := decor.Any(func(decor.Statistics) string { return m.Read().Status() }, decor.WCSyncSpace)
	b := d.p.AddBar(int64(s.Total),
		mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR), decor.CountersNoUnit("%d/%d"+unit, decor.WCSyncSpace)),
		mpb.AppendDecorators(status, decor.Name(" "), decor.Elapsed(decor.ET_STYLE_GO)),
	)
	b.SetCurrent(int64(s.Done))
	d.bars, d.meters = append(d.bars, b), append(d.meters, m)
}

func (d *progressBars) Update() {
	for i, b := range d.bars {
		b.SetCurrent(int64(d.meters[i].Read().Done))
	}
}

// Finish leaves the bars of a phase that stopped early where they stopped.
func (d *progressBars) Finish(bool) {
	d.Update()
	for _, b := range d.bars {
		if !b.Completed() {
			b.Abort(false)
		}
	}
	d.p.Wait()
}
