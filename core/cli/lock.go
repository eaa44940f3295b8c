package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/pluginstart"
)

func newLockCmd(st *State) *cobra.Command {
	var (
		vars    []string
		upgrade bool
	)
	cmd := &cobra.Command{
		Use:   "lock FILE.hcl",
		Short: "Pin every plugin of a run file in its own lock file, FILE.lock.hcl",
		Long: "Start every plugin of a run file (which checks its version and checksum pins), ask its " +
			"version, hash it (sha256 of a source executable, h1 of a command plugin's dir) and write " +
			"the run file's lock file next to it: bench.hcl is pinned in bench.lock.hcl, so each run " +
			"file in a directory keeps its own pins. Runs, scoring and 'duplexmpe plugins' then refuse " +
			"a plugin that no longer matches. The lock file is written only when every plugin succeeded. " +
			"A pin already in the lock file is never overwritten: a plugin that no longer matches it " +
			"fails (and is not started) until you re-pin deliberately with --upgrade. Reattached plugins " +
			"are not started by the host and are not locked. Without a lock file of its own, the run " +
			"file's pins are read from the old per-directory .duplexmpe.lock.hcl.",
		Example: examples(
			"duplexmpe lock my-run.hcl",
			"duplexmpe lock my-run.hcl --upgrade             # re-pin a plugin you changed",
		),
		Args: exactArgs(1, "one run file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadRunFile(st, args[0], vars)
			if err != nil {
				return err
			}
			res, diags, err := pluginstart.LockFile(st.Ctx, f, pluginstart.Options{Logger: pluginLogger(st)}, upgrade)
			var failed []string
			for _, l := range res.Plugins {
				switch {
				case l.Reattached:
					fmt.Fprintf(st.Stdout, "plugin %q: reattached, not locked\n", l.Name)
				case l.Failed:
					failed = append(failed, l.Name)
				default:
					how := l.Pinned()
					if how == "re-pinned" {
						how += fmt.Sprintf(", was %s %s", orDash(l.Old.Version), strings.Join(l.Old.Hashes, ", "))
					}
					fmt.Fprintf(st.Stdout, "plugin %q: %s %s (%s)\n", l.Name, orDash(l.Entry.Version), strings.Join(l.Entry.Hashes, ", "), how)
				}
			}
			writeDiagnostics(st, f.Sources, diags, f.Path, args[0])
			lockName := displayPath(st, res.Path)
			if len(failed) > 0 {
				fmt.Fprintf(st.Stderr, "%s failed: %s; %s not written\n", plural(len(failed), "plugin"), strings.Join(failed, ", "), lockName)
				return ErrReported
			}
			if err != nil {
				return err
			}
			for _, name := range res.Removed {
				fmt.Fprintf(st.Stdout, "plugin %q: no longer in the run file, its pin removed\n", name)
			}
			if res.Written {
				n := len(res.Plugins) - countReattached(res.Plugins)
				fmt.Fprintf(st.Stdout, "wrote %s (%s)\n", lockName, plural(n, "plugin"))
			}
			if res.Legacy != "" {
				fmt.Fprintf(st.Stdout, "the pins were taken from %s, which this run file no longer reads; other run files in the directory may still: lock each of them, then delete it\n", displayPath(st, res.Legacy))
			}
			return nil
		},
	}
	addVarFlag(cmd, &vars)
	cmd.Flags().BoolVar(&upgrade, "upgrade", false, "re-pin plugins whose pins no longer match (a deliberate update)")
	return cmd
}

func countReattached(ls []pluginstart.Locked) int {
	n := 0
	for _, l := range ls {
		if l.Reattached {
			n++
		}
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
