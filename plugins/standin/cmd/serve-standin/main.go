// Command serve-standin serves a local stand-in of a hosted API (plugins/standin), to try
// the openai or anthropic plugin offline: `serve-standin openai [--addr HOST:PORT]
// [--key KEY]`. It is a test double, so it is its own binary (bin/serve-standin from
// `make build`), not a command of duplexmpe, which links no test code.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/duplexmpe/duplexmpe/plugins/standin"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}

const usage = `usage: serve-standin openai|anthropic [--addr 127.0.0.1:8089] [--key KEY]

Serve a local stand-in of the OpenAI-compatible API (chat completions, transcriptions,
speech) or of the Anthropic Messages API, the one the plugins' tests run against. Set the
plugin block's base_url to the address it prints. Its judge verdicts are deterministic
(an answer is correct when it contains the gold answer; a few backchannels are
acknowledgements), so it checks the wiring, not a model. It runs until interrupted
(Ctrl-C).

Example:
  bin/serve-standin openai --addr 127.0.0.1:8089
`

// run is the command; it returns the exit code: 0 after an interrupt, 2 for a wrong
// command line, 1 when the stand-in could not serve.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve-standin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	addr := fs.String("addr", "127.0.0.1:8089", "address to listen on (port 0: any free port)")
	key := fs.String("key", "", "the API key the stand-in wants (default: any)")
	// The API may come before or after the flags.
	var kind []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		kind = append(kind, fs.Arg(0))
		args = fs.Args()[1:]
	}
	choices := strings.Join(standin.Kinds, " or ")
	if len(kind) != 1 {
		fmt.Fprintf(stderr, "Error: serve-standin expects one API to stand in for: %s (got %d)\n", choices, len(kind))
		return 2
	}
	if !slices.Contains(standin.Kinds, kind[0]) {
		fmt.Fprintf(stderr, "Error: serve-standin: no stand-in %q; choose %s\n", kind[0], choices)
		return 2
	}
	if err := standin.Serve(ctx, standin.Options{Kind: kind[0], Addr: *addr, Key: *key}, stdout); err != nil {
		fmt.Fprintf(stderr, "Error: %s\n", err)
		return 1
	}
	return 0
}
