package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
)

func init() { register(newLockCmd) }

func newLockCmd(st *State) *cobra.Command {
	var vars []string
	cmd := &cobra.Command{
		Use:   "lock FILE.hcl",
		Short: "Start every plugin of a run file, hash it, and write " + config.LockFileName + " next to the run file",
		Long: "Start every plugin of a run file (which checks its version and checksum pins), ask its " +
			"version, hash it (sha256 of a source executable, h1 of a command plugin's dir) and write " +
			"the lock file " + config.LockFileName + " next to the run file. Runs and " +
			"'duplexmpe plugins' then refuse a plugin that no longer matches it. The lock file is " +
			"written only when every plugin succeeded. Reattached plugins are not started by the " +
			"host and are not locked.",
		Args: exactArgs(1, "one run file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadRunFile(st, args[0], vars)
			if err != nil {
				return err
			}
			locked, diags, written, err := pluginstart.LockFile(st.Ctx, f, pluginstart.Options{Logger: pluginLogger(st)})
			var failed []string
			for _, l := range locked {
				switch {
				case l.Reattached:
					fmt.Fprintf(st.Stdout, "plugin %q: reattached, not locked\n", l.Name)
				case l.Failed:
					failed = append(failed, l.Name)
				default:
					fmt.Fprintf(st.Stdout, "plugin %q: %s %s\n", l.Name, orDash(l.Entry.Version), l.Entry.Hashes[0])
				}
			}
			writeDiagnostics(st, f.Sources, diags, f.Path, args[0])
			if len(failed) > 0 {
				fmt.Fprintf(st.Stderr, "%s failed: %s; %s not written\n", plural(len(failed), "plugin"), strings.Join(failed, ", "), config.LockFileName)
				return ErrReported
			}
			if err != nil {
				return err
			}
			if written {
				n := len(locked) - countReattached(locked)
				fmt.Fprintf(st.Stdout, "wrote %s (%s)\n", filepath.Join(filepath.Dir(args[0]), filepath.Base(f.LockPath())), plural(n, "plugin"))
			}
			return nil
		},
	}
	addVarFlag(cmd, &vars)
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
