package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/termsafe"
)

func newRunsCmd(st *State) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "runs [DIR]",
		Short: "List the run directories under a folder: evaluation, date, models, dataset and version, state",
		Example: examples(
			"duplexmpe runs",
			"duplexmpe runs runs/ --json",
		),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return UsageErrorf("%s expects at most one folder (got %d arguments)", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			runs, err := app.ListRuns(resolvePath(st, dir))
			if err != nil {
				return err
			}
			// Paths, names and datasets are data: escaped on a terminal.
			return printOrJSON(st.Stdout, asJSON, runs, func(w io.Writer) { app.PrintRuns(termsafe.Writer{W: w}, runs) })
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
