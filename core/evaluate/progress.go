package evaluate

import (
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	prog "github.com/duplexmpe/duplexmpe/core/progress"
)

// progress shows the playing phase: on a terminal one bar per model (and one for all
// when there are several), each with its done/total, rate and time left; anywhere else
// (a log file, CI) a line when playing starts, at least every 30 s and at the end. With
// no writer, nothing. Reused conversations count as done, not in the rates.
type progress struct {
	total  *prog.Meter
	meters map[string]*prog.Meter
	p      *mpb.Progress
	bars   map[string]*mpb.Bar // by model
	all    *mpb.Bar            // the total's, with several models
	log    *prog.Log
	stop   func() // stops the log's ticker
}

func newProgress(w io.Writer, models []*Model, counts map[string]*Counts) *progress {
	pr := &progress{meters: map[string]*prog.Meter{}, bars: map[string]*mpb.Bar{}, stop: func() {}}
	if w == nil {
		return pr
	}
	var parts []prog.Part
	var meters []*prog.Meter
	for _, m := range models {
		c := counts[m.Name]
		pr.meters[m.Name] = prog.NewMeter(time.Now, c.Planned, c.Reused)
		parts = append(parts, prog.Part{Name: m.Name, Meter: pr.meters[m.Name]})
		meters = append(meters, pr.meters[m.Name])
	}
	pr.total = prog.Sum(time.Now, meters...)
	if f, ok := w.(*os.File); !ok || !isatty.IsTerminal(f.Fd()) {
		pr.log = prog.NewLog(w, time.Now, "playing", "conversations", pr.total, parts...)
		pr.stop = prog.Ticking(time.Second, pr.log.Tick)
		return pr
	}
	pr.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(40))
	add := func(name string, m *prog.Meter) *mpb.Bar {
		s := m.Read()
		b := pr.p.AddBar(int64(s.Total),
			mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR), decor.CountersNoUnit("%d/%d", decor.WCSyncSpace)),
			mpb.AppendDecorators(prog.Decorator(m), decor.Name(" "), decor.Elapsed(decor.ET_STYLE_GO)),
		)
		b.SetCurrent(int64(s.Done))
		return b
	}
	for _, m := range models {
		pr.bars[m.Name] = add(m.Name, pr.meters[m.Name])
	}
	if len(models) > 1 {
		pr.all = add("all models", pr.total)
	}
	return pr
}

type progressBar struct {
	pr    *progress
	model string
}

func (p *progress) bar(model string) progressBar { return progressBar{p, model} }

// increment counts one more conversation of the model played.
func (b progressBar) increment() {
	p := b.pr
	if p.total == nil {
		return
	}
	p.meters[b.model].Add(1)
	if bar := p.bars[b.model]; bar != nil {
		bar.Increment()
	}
	if p.all != nil {
		p.all.Increment()
	}
	if p.log != nil {
		p.log.Tick()
	}
}

// wait ends the display; bars of an interrupted loop are left where they stopped.
func (p *progress) wait() {
	p.stop()
	if p.log != nil {
		p.log.Finish()
	}
	if p.p == nil {
		return
	}
	for _, b := range append(slices.Collect(maps.Values(p.bars)), p.all) {
		if b != nil && !b.Completed() {
			b.Abort(false)
		}
	}
	p.p.Wait()
}
