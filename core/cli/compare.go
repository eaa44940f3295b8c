package cli

import (
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/score/textfmt"
)

func newCompareCmd(st *State) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compare DIR DIR...",
		Short: "Set scored runs or judges side by side: paired tests on the items both scored",
		Long: "Compare the scorings in the directories (run directories, or views written by\n" +
			"`score --out DIR`), each against the first: per model, condition and scored measure,\n" +
			"the rates of both sides over the items both scored, the exact McNemar test on those\n" +
			"items (paired by model, scenario and turn), and how many items each side lacks.\n" +
			"Two judges of one run share every item; two runs share the items of the same model\n" +
			"and scenario.",
		Example: examples(
			"duplexmpe compare runs/bench views/second-judge",
			"duplexmpe compare runs/bench runs/bench-natural --json",
		),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return UsageErrorf("%s expects at least two scored directories (got %d arguments)", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dirs := make([]string, len(args))
			for i, a := range args {
				dirs[i] = resolvePath(st, a)
			}
			c, err := app.Compare(dirs)
			if err != nil {
				return err
			}
			for i, s := range c.Sides {
				s.Dir = args[i] // as the user wrote it
			}
			if asJSON {
				return writeJSON(st.Stdout, c)
			}
			printComparison(st, c)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	return cmd
}

func printComparison(st *State, c *app.Comparison) {
	a := c.Sides[0]
	for bi := 1; bi < len(c.Sides); bi++ {
		b := c.Sides[bi]
		fmt.Fprintf(st.Stdout, "A: %s\nB: %s\n", a.Label(), b.Label())
		tw := tabwriter.NewWriter(st.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "model\tcondition\tmeasure\tshared\tB lacks\tA lacks\tA\tB\tb (A only)\tc (B only)\tp (exact McNemar)\t")
		for _, r := range c.Rows {
			if r.B != bi {
				continue
			}
			for _, m := range r.Measures {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t%s\t\n", r.Model, r.Condition, m.Measure, r.Shared, r.OnlyA, r.OnlyB,
					rateText(m.RateA), rateText(m.RateB), m.Test.B, m.Test.C, textfmt.P(m.Test.P))
			}
		}
		tw.Flush()
		fmt.Fprintln(st.Stdout, "Shared: items both sides scored (the rates and tests are over them). B lacks / A lacks: items only the other side scored.")
	}
}

func rateText(r score.Rate) string { return textfmt.Rate(r) }

func newPruneCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "prune RUN_DIR",
		Short: "Remove the items of earlier plans from a run directory",
		Long: "A run directory keeps the items of earlier plans (a model dropped from the run file,\n" +
			"a model whose identity or config changed, a rebuilt scenario): they are never counted,\n" +
			"and `run` and `score` say how many there are. prune removes them; the items of the\n" +
			"current plan stay, and a report in the directory is rendered again without them. Do not\n" +
			"prune a directory that a shard is still playing into.",
		Example: examples(
			"duplexmpe prune runs/bench",
		),
		Args: exactArgs(1, "one run directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := app.Prune(resolvePath(st, args[0]))
			if err != nil {
				return err
			}
			fmt.Fprintf(st.Stdout, "removed %d items of earlier plans from %s; %d items of the current plan kept\n", res.Removed, args[0], res.Kept)
			if res.Rerendered {
				fmt.Fprintf(st.Stdout, "report rendered again without them: %s\n", filepath.Join(args[0], report.HTMLFile))
			}
			return nil
		},
	}
}
