package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/core/termsafe"
)

// pluginLogger passes plugins' warnings and errors on to stderr, escaped (a plugin's
// log line is data: termsafe); their chatter stays out.
func pluginLogger(st *State) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "plugin", Level: hclog.Warn, Output: termsafe.Writer{W: st.Stderr}})
}

// newUI is how the application layer shows progress and remarks on st: bars and notes
// on stderr, plugin warnings on stderr. Commands add the printers of their results.
func newUI(st *State) app.UI {
	return app.UI{
		Logger:   pluginLogger(st),
		Progress: progressPrinter{w: st.Stderr},
		Notef:    func(format string, args ...any) { fmt.Fprint(st.Stderr, termsafe.String(fmt.Sprintf(format, args...))) },
	}
}

// newStarter starts f's plugins the checked way, their warnings on stderr.
func newStarter(st *State, f *config.File) (*pluginstart.Starter, error) {
	s, err := pluginstart.NewStarter(f, pluginstart.Options{Logger: pluginLogger(st)})
	if err == nil && s.Pins.Warning != "" {
		fmt.Fprintf(st.Stderr, "warning: %s\n", termsafe.String(s.Pins.Warning))
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
		fmt.Fprintln(st.Stderr, termsafe.String(strings.Join(pe.Problems, "\n")))
		if pe.Summary != "" {
			fmt.Fprintln(st.Stderr, termsafe.String(pe.Summary))
		}
		return fault.Deterministic(ErrReported)
	}
	return err
}
