package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/rundir"
	"github.com/duplexmpe/duplexmpe/core/store"
)

func newMergeCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "merge OUT DIR...",
		Short: "Combine the run directories of the shards of one run (--shard i/N) into OUT",
		Long: `merge puts every finished item of the shard directories DIR... into OUT (created
when missing; files are hard linked where possible, and DIR... are never changed). All
manifests must be equal: shards of one run come from the same run file and the same
harness build. A finished item wins over a failed one; interrupted items are skipped. An
item finished in two directories must be the same record in both, or nothing is merged.
Running merge again is safe, and later shards can be merged into the same OUT.

Each shard directory records which slice i/N it is and what it planned. merge exits 1
when OUT still lacks a slice or a planned item (after merging what there is): run those
shards again and merge again before scoring OUT.`,
		Example: examples(
			"duplexmpe merge runs/all runs/shard-1 runs/shard-2",
			"duplexmpe score runs/all                        # then score the merged run",
		),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return UsageErrorf("%s expects an output directory and at least one run directory (got %d arguments)", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			lock, err := rundir.Acquire(args[0], rundir.Options{Create: true})
			if err != nil {
				return err
			}
			defer lock.Release()
			rep, err := store.Merge(args[0], args[1:])
			if err != nil {
				return err
			}
			fmt.Fprintf(st.Stdout, "merged %d run directories into %s: %d items done, %d failed (a resumed run retries them), %d overlaps kept once\n",
				len(args)-1, args[0], rep.Done, rep.Failed, rep.Overlaps)
			var shards []string
			for _, s := range rep.Shards {
				shards = append(shards, s.String())
			}
			fmt.Fprintf(st.Stdout, "shards recorded: %s\n", strings.Join(shards, " "))
			if !rep.Complete() {
				return fmt.Errorf("the run in %s is incomplete: %s", args[0], rep.Incomplete())
			}
			return nil
		},
	}
}
