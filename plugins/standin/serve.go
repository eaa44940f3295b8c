package standin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Options say which stand-in Serve starts, and where.
type Options struct {
	Kind string // "openai" or "anthropic"
	Addr string // host:port to listen on; port 0 picks a free one
	Key  string // the API key it wants; empty: any
}

// Kinds are the stand-ins Serve knows.
var Kinds = []string{"openai", "anthropic"}

// Serve runs a stand-in until ctx ends. Once it listens it writes to out the base URL to
// give a plugin (its base_url setting) and how to point a run file at it.
func Serve(ctx context.Context, opts Options, out io.Writer) error {
	var h http.Handler
	var env string
	switch opts.Kind {
	case "openai":
		h, env = NewOpenAI(opts.Key), "OPENAI_API_KEY"
	case "anthropic":
		h, env = NewAnthropic(opts.Key), "ANTHROPIC_API_KEY"
	default:
		return fmt.Errorf("no stand-in %q: choose one of %v", opts.Kind, Kinds)
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("stand-in: %w (choose another --addr)", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + "/v1"
	key := "any key (or none)"
	if opts.Key != "" {
		key = "the key given with --key"
	}
	fmt.Fprintf(out, "%s stand-in listening on %s\n", opts.Kind, url)
	fmt.Fprintf(out, "point a plugin block at it:  config { base_url = %q }\n", url)
	fmt.Fprintf(out, "it accepts %s in %s; judge verdicts are deterministic (see plugins/standin/README.md). Ctrl-C stops it.\n", key, env)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("stand-in: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
