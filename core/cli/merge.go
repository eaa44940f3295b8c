package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/store"
)

func init() { register(newMergeCmd) }

func newMergeCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "merge OUT DIR...",
		Short: "Combine the run directories of the shards of one run (--shard i/N) into OUT",
		Long: `merge copies every finished item of the shard directories DIR... into OUT (created
when missing). All manifests must be equal: shards of one run come from the same run file
and the same harness build. A finished item wins over a failed one; interrupted items are
skipped. Running merge again is safe.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return UsageErrorf("%s expects an output directory and at least one run directory (got %d arguments)", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := store.Merge(args[0], args[1:])
			if err != nil {
				return err
			}
			fmt.Fprintf(st.Stdout, "merged %d run directories into %s: %d items done, %d failed (a resumed run retries them), %d duplicates skipped\n",
				len(args)-1, args[0], rep.Done, rep.Failed, rep.Duplicates)
			return nil
		},
	}
}
