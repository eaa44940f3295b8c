package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/termsafe"
)

func newValidateCmd(st *State) *cobra.Command {
	var vars []string
	var noStart bool
	cmd := &cobra.Command{
		Use:   "validate FILE.hcl [--no-start]",
		Short: "Check a run file: syntax, values, references and plugin config blocks",
		Long: "Check a run file without running anything: syntax, attribute names and types, durations, " +
			"references between blocks, the protocol and VAD settings, and that every plugin's " +
			"executable (source) or directory (dir) exists. Exit 0 when it is good, 3 with the " +
			"problems (file, line, snippet, the plugin's name) when it is not, 2 for a wrong command " +
			"line. A missing scenario directory is an error too, unless another dataset of the file builds it. Every plugin's " +
			"config block is checked against the schema the plugin describes: a plugin recorded by an earlier run or build " +
			"of the file is not started, any other is started, described and stopped (not configured: no weights load). " +
			"--no-start skips that check ('duplexmpe plugins FILE.hcl --configure' goes further and configures each plugin).",
		Example: examples(
			"duplexmpe validate bench.hcl",
			"duplexmpe validate examples/runs/open-v1.hcl --var gaps=natural",
		),
		Args: exactArgs(1, "one run file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadRunFileToStart(st, args[0], vars)
			if err != nil {
				return err
			}
			if !noStart {
				s, err := newStarter(st, f)
				if err != nil {
					return err
				}
				if err := app.CheckFileConfigs(st.Ctx, s); err != nil {
					return reported(st, f, args[0], err)
				}
			}
			fmt.Fprintf(st.Stdout, "%s: ok (%s, %s, %s, %s)\n", args[0],
				plural(len(f.Variables), "variable"), plural(len(f.Plugins), "plugin"),
				plural(len(f.Datasets), "dataset"), plural(len(f.Evaluations), "evaluation"))
			return nil
		},
	}
	addVarFlag(cmd, &vars)
	cmd.Flags().BoolVar(&noStart, "no-start", false, "start no plugin: skip the check of the config blocks against the plugins' schemas")
	return cmd
}

// addVarFlag adds the repeatable --var name=value flag.
func addVarFlag(cmd *cobra.Command, vars *[]string) {
	cmd.Flags().StringArrayVar(vars, "var", nil, "set a run-file variable, name=value (repeatable; wins over DUPLEXMPE_VAR_<name>)")
}

// loadRunFile parses and checks a run file named on the command line, prints its
// diagnostics (warnings too) to stderr, and returns ErrReported when there are errors.
func loadRunFile(st *State, arg string, varFlags []string) (*config.File, error) {
	return loadRunFileWith(st, arg, varFlags, config.Options{})
}

// loadRunFileToStart is loadRunFile for a command about to start the plugins (validate,
// run): a plugin executable or directory that does not exist is an error naming the
// plugin and the run file's line, exit 3, before anything is planned or built.
func loadRunFileToStart(st *State, arg string, varFlags []string) (*config.File, error) {
	return loadRunFileWith(st, arg, varFlags, config.Options{PluginsMustExist: true})
}

func loadRunFileWith(st *State, arg string, varFlags []string, opts config.Options) (*config.File, error) {
	vars := map[string]string{}
	for _, kv := range varFlags {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, UsageErrorf("--var %q: write --var name=value", kv)
		}
		vars[strings.TrimSpace(name)] = value
	}
	cwd, err := st.Getwd()
	if err != nil {
		return nil, fmt.Errorf("cannot find the working directory: %w", err)
	}
	path := arg
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	opts.Vars, opts.Env, opts.Cwd = vars, st.Env, cwd
	f, diags := config.Load(path, opts)
	writeDiagnostics(st, f.Sources, diags, path, arg)
	if diags.HasErrors() {
		return nil, fault.Deterministic(ErrReported) // the run file must change
	}
	return f, nil
}

// relabel names the file in diagnostics as the user wrote it, not by its absolute path.
func relabel(diags hcl.Diagnostics, abs, given string) hcl.Diagnostics {
	if abs == given {
		return diags
	}
	for _, d := range diags {
		for _, r := range []*hcl.Range{d.Subject, d.Context} {
			if r != nil && r.Filename == abs {
				r.Filename = given
			}
		}
	}
	return diags
}

// writeDiagnostics prints diagnostics to stderr with snippets, naming the run file as
// the user wrote it (given) rather than by its absolute path; colour only on a terminal.
func writeDiagnostics(st *State, sources map[string]*hcl.File, diags hcl.Diagnostics, abs, given string) {
	if len(diags) == 0 {
		return
	}
	named := map[string]*hcl.File{}
	for name, src := range sources {
		named[name] = src
	}
	if src, ok := sources[abs]; ok {
		named[given] = src
	}
	for name, src := range named {
		if longLine(src.Bytes) {
			// Snippets quote whole lines: a 200 KB line is named by its number only.
			delete(named, name)
		}
	}
	color, width := terminal(st.Stderr)
	diags = relabel(diags, abs, given)
	if !diagnosticsSafe(named, diags) {
		// The run file's own lines (quoted in the snippets) or a message carry control
		// characters: printed escaped, without colour, whose sequences would be escaped too.
		config.WriteDiagnostics(termsafe.Writer{W: st.Stderr}, named, diags, width, false)
		return
	}
	config.WriteDiagnostics(st.Stderr, named, diags, width, color)
}

// maxSnippetLine is the longest run-file line a diagnostic quotes.
const maxSnippetLine = 4 << 10

func longLine(b []byte) bool {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			i = len(b)
		}
		if i > maxSnippetLine {
			return true
		}
		b = b[min(i+1, len(b)):]
	}
	return false
}

// diagnosticsSafe reports whether the diagnostics and the sources they quote print as
// they are (termsafe.String changes none of them).
func diagnosticsSafe(sources map[string]*hcl.File, diags hcl.Diagnostics) bool {
	for _, src := range sources {
		if s := string(src.Bytes); termsafe.String(s) != s {
			return false
		}
	}
	for _, d := range diags {
		if termsafe.String(d.Summary) != d.Summary || termsafe.String(d.Detail) != d.Detail {
			return false
		}
	}
	return true
}

// terminal reports whether w is a terminal (colour) and the width to wrap at.
func terminal(w io.Writer) (bool, uint) {
	if f, ok := w.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		return true, 100
	}
	return false, 0
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
