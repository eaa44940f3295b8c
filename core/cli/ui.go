package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/core/progress"
)

// pluginLogger passes plugins' warnings and errors on to stderr; their chatter stays out.
func pluginLogger(st *State) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "plugin", Level: hclog.Warn, Output: st.Stderr})
}

// newUI is how the application layer shows progress and remarks on st: bars and notes
// on stderr, plugin warnings on stderr. Commands add the printers of their results.
func newUI(st *State) app.UI {
	return app.UI{
		Logger: pluginLogger(st),
		Progress: func(verb, name, unit string) app.Progress {
			return newCountBar(st.Ctx, st.Stderr, verb, name, unit)
		},
		Notef:        func(format string, args ...any) { fmt.Fprintf(st.Stderr, format, args...) },
		PlayProgress: st.Stderr,
	}
}

// newStarter starts f's plugins the checked way, their warnings on stderr.
func newStarter(st *State, f *config.File) (*pluginstart.Starter, error) {
	s, err := pluginstart.NewStarter(f, pluginstart.Options{Logger: pluginLogger(st)})
	if err == nil && s.Pins.Warning != "" {
		fmt.Fprintf(st.Stderr, "warning: %s\n", s.Pins.Warning)
	}
	return s, err
}

// reported prints what an error of the application layer carries besides its message
// (the run file's diagnostics, a list of problems) and turns it into ErrReported, as
// deterministic as it was; other errors pass through. arg is the run file as the user
// named it.
func reported(st *State, f *config.File, arg string, err error) error {
	var de *pluginstart.DiagnosticsError
	var pe *app.ProblemsError
	switch {
	case errors.As(err, &de):
		writeDiagnostics(st, f.Sources, de.Diags, f.Path, arg)
		return fault.Deterministic(ErrReported)
	case errors.As(err, &pe):
		fmt.Fprintln(st.Stderr, strings.Join(pe.Problems, "\n"))
		if pe.Summary != "" {
			fmt.Fprintln(st.Stderr, pe.Summary)
		}
		return fault.Deterministic(ErrReported)
	}
	return err
}

// progressBar counts units of work (clips synthesised, conversations scored): a bar with
// the rate and time left on a terminal; otherwise (logs, CI, tests) a line at the start,
// at least every 30 s (core/progress.LogEvery) and at the end.
type progressBar struct {
	ctx   context.Context
	w     io.Writer
	verb  string // "synthesising"
	name  string
	unit  string // "clips"
	mu    sync.Mutex
	meter *progress.Meter
	p     *mpb.Progress
	bar   *mpb.Bar
	log   *progress.Log
	stop  func() // stops the log's ticker
}

// newCountBar counts units of work: a bar on a terminal, a few plain lines otherwise.
func newCountBar(ctx context.Context, w io.Writer, verb, name, unit string) *progressBar {
	return &progressBar{ctx: ctx, w: w, verb: verb, name: name, unit: unit, stop: func() {}}
}

func (b *progressBar) Start(total int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.meter = progress.NewMeter(time.Now, total, 0)
	if tty, _ := terminal(b.w); tty {
		b.p = mpb.NewWithContext(b.ctx, mpb.WithOutput(b.w), mpb.WithWidth(40))
		b.bar = b.p.AddBar(int64(total),
			mpb.PrependDecorators(decor.Name(b.verb+" "+b.name+" "), decor.CountersNoUnit("%d/%d "+b.unit)),
			mpb.AppendDecorators(progress.Decorator(b.meter)))
		return
	}
	b.log = progress.NewLog(b.w, time.Now, b.verb+" "+b.name, b.unit, b.meter)
	b.stop = progress.Ticking(time.Second, b.log.Tick)
}

func (b *progressBar) Clip(bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.meter == nil {
		return
	}
	b.meter.Add(1)
	if b.bar != nil {
		b.bar.Increment()
		return
	}
	b.log.Tick()
}

func (b *progressBar) Finish(ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stop()
	if b.log != nil {
		b.log.Finish()
	}
	if b.p == nil {
		return
	}
	if !ok {
		b.bar.Abort(false)
	}
	b.p.Wait()
}
