package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A word in backquotes in a flag's usage becomes its placeholder in --help (pflag), so
// `merge` in the usage of --shard made `run --help` read "--shard merge". No flag of any
// command may have a command's name, or duplexmpe, as its placeholder.
func TestFlagPlaceholdersAreNotCommandNames(t *testing.T) {
	root := newRoot(&State{Args: nil, Stdout: &strings.Builder{}, Stderr: &strings.Builder{}})
	names := map[string]bool{"duplexmpe": true}
	var walk func(c *cobra.Command)
	var all []*cobra.Command
	walk = func(c *cobra.Command) {
		all = append(all, c)
		names[c.Name()] = true
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, c := range all {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if name, _ := pflag.UnquoteUsage(f); names[name] {
				t.Errorf("%s --%s reads %q in --help: its usage puts a command name in backquotes", c.CommandPath(), f.Name, "--"+f.Name+" "+name)
			}
		})
	}

	code, stdout, stderr := runInDir(t, t.TempDir(), nil, "run", "--help")
	if code != ExitOK || !strings.Contains(stdout, "--shard i/N ") {
		t.Errorf("run --help: exit %d, no --shard i/N\n%s%s", code, stdout, stderr)
	}
}
