// Package cli is the duplexmpe command line. All process state (arguments, environment,
// standard streams, working directory, signals) lives in State, so tests run commands
// without touching the real OS (the k6 pattern). One file per command; commands.go lists
// them all, so the command tree is read in one place.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/termsafe"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Exit codes are stable: scripts and schedulers depend on them (README, docs/scale.md).
const (
	ExitOK     = 0 // success
	ExitFailed = 1 // it failed, and running it again may pass: a plugin crashed, a service was down, it was interrupted, a check failed
	ExitUsage  = 2 // the command line itself was wrong
	// ExitDeterministic: the input is wrong (a run file that does not load, a plugin
	// refused by its pin or config schema, an invalid dataset, a run directory holding
	// another run); running it again unchanged fails the same way (core/fault).
	ExitDeterministic = 3
)

// State is everything a command may touch of the outside world.
type State struct {
	Ctx    context.Context
	Args   []string // without the program name
	Env    map[string]string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getwd  func() (string, error)
}

// Getenv reads the State's environment.
func (st *State) Getenv(key string) string { return st.Env[key] }

// NewOSState captures the real process state; main is its only caller. The context is
// cancelled on SIGINT or SIGTERM.
func NewOSState() (*State, context.CancelFunc) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := map[string]string{}
	for _, kv := range os.Environ() {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				env[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	return &State{
		Ctx: ctx, Args: os.Args[1:], Env: env,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getwd: os.Getwd,
	}, cancel
}

// usageError marks a mistake in the command line (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// UsageErrorf reports a command-line mistake (exit code 2).
func UsageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// ErrReported means the command already printed what went wrong (for example HCL
// diagnostics) and only the exit code remains to be set.
var ErrReported = errors.New("failed; see the messages above")

func newRoot(st *State) *cobra.Command {
	root := &cobra.Command{
		Use:           "duplexmpe",
		Short:         "Duplex-MPE: does a full-duplex speech model answer when asked, stay silent when not, and yield?",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetArgs(st.Args)
	root.SetIn(st.Stdin)
	root.SetOut(st.Stdout)
	root.SetErr(st.Stderr)
	root.SetContext(st.Ctx)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(commands(st)...)
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands makes every command group (a command with subcommands and no
// action of its own) answer an unknown subcommand with a usage error, exit 2, as the root
// does: cobra would print the group's help and exit 0, so a script calling a command this
// version lacks would pass. A group named alone still prints its help.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if c.HasParent() && c.HasSubCommands() && !c.Runnable() {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return UsageErrorf("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		}
	}
}

// Run executes the command line in st and returns the exit code.
func Run(st *State) int {
	if st.Ctx == nil {
		st.Ctx = context.Background()
	}
	root := newRoot(st)
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	var ue usageError
	var aue *app.UsageError
	switch {
	case errors.As(err, &ue) || errors.As(err, &aue) || isCobraUsageError(err):
		fmt.Fprintf(st.Stderr, "Error: %s\nRun '%s --help' for usage.\n", termsafe.String(err.Error()), cmd.CommandPath())
		return ExitUsage
	case errors.Is(err, ErrReported):
		return failureCode(err)
	default:
		// An error carries data (scenario ids, plugin messages): shown, never obeyed, and
		// a URL's secrets (user:password@, ?key=) redacted.
		fmt.Fprintf(st.Stderr, "Error: %s\n", termsafe.String(sdk.RedactURLs(err.Error())))
		return failureCode(err)
	}
}

// failureCode is the exit code of a failed command: 3 when the failure is deterministic
// (as its source typed it, core/fault), else 1.
func failureCode(err error) int {
	if fault.IsDeterministic(err) {
		return ExitDeterministic
	}
	return ExitFailed
}

// exactArgs is cobra.ExactArgs with a usage error (exit 2) and a message naming what is missing.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return UsageErrorf("%s expects %s (got %d arguments)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}
