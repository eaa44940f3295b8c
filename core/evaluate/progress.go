package evaluate

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress shows one bar per model on a terminal, and nothing anywhere else (a file, a
// pipe, a test buffer).
type progress struct {
	p    *mpb.Progress
	bars map[string]*mpb.Bar
}

func newProgress(w io.Writer, models []*Model, counts map[string]*Counts) *progress {
	f, ok := w.(*os.File)
	if !ok || !isatty.IsTerminal(f.Fd()) {
		return &progress{}
	}
	pr := &progress{p: mpb.New(mpb.WithOutput(w), mpb.WithWidth(40)), bars: map[string]*mpb.Bar{}}
	for _, m := range models {
		c := counts[m.Name]
		b := pr.p.AddBar(int64(c.Planned),
			mpb.PrependDecorators(decor.Name(m.Name, decor.WCSyncSpaceR), decor.CountersNoUnit("%d/%d", decor.WCSyncSpace)),
			mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace), decor.Name(" "), decor.Elapsed(decor.ET_STYLE_GO)),
		)
		b.SetCurrent(int64(c.Reused))
		pr.bars[m.Name] = b
	}
	return pr
}

type progressBar struct{ b *mpb.Bar }

func (p *progress) bar(model string) progressBar { return progressBar{p.bars[model]} }

func (b progressBar) increment() {
	if b.b != nil {
		b.b.Increment()
	}
}

// wait ends the display; bars of an interrupted loop are left where they stopped.
func (p *progress) wait() {
	if p.p == nil {
		return
	}
	for _, b := range p.bars {
		if !b.Completed() {
			b.Abort(false)
		}
	}
	p.p.Wait()
}
