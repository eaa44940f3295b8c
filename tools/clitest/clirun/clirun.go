// Package clirun runs the command line in a test, as a user would. It is apart from
// clitest because it imports core/cli, which core/cli's own tests cannot import back.
package clirun

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/cli"
)

// Run runs `duplexmpe args...` in dir with an empty environment and no input, logs its
// exit code and wall time, and returns the exit code and what it wrote.
func Run(t testing.TB, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	began := time.Now()
	code = cli.Run(&cli.State{
		Ctx: context.Background(), Args: args, Env: map[string]string{},
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getwd: func() (string, error) { return dir, nil },
	})
	t.Logf("duplexmpe %s: exit %d in %v", strings.Join(args, " "), code, time.Since(began).Round(time.Millisecond))
	return code, out.String(), errb.String()
}
