package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/fault"
)

func newDatasetAuditCmd(st *State) *cobra.Command {
	var asJSON, noJudge bool
	var judge string
	cmd := &cobra.Command{
		Use:   "audit PATH",
		Short: "Measure how far shortcuts (a text labeller, the name, the voice, the pause) get on a set; exit 3 if one passes for understanding",
		Long: "Measure the shortcuts of issue 28 on a scenario set (docs/dataset.md, Audit): a rule-based text\n" +
			"labeller tuned on dev and scored on test, repeated 3-word phrases in implicit requests, cue_text,\n" +
			"a responder to \"Aria\" plus a question mark, who asks by speaker letter, and a responder to\n" +
			"pauses under the natural gap profile, and the wrong answers derived from every gold put to a\n" +
			"judge plugin (--judge; the shipped lexical judge by default). PATH is a release directory or a\n" +
			"set. Exit 3 when a check misses its goal; exit 1 when the judge fails.",
		Example: examples("duplexmpe dataset audit datasets/open-v1", "duplexmpe dataset audit --json datasets/open-v1"),
		Args:    exactArgs(1, "a release directory, a dataset directory or a scenarios .jsonl file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			src := ""
			if !noJudge {
				src = judge
				if src != "" {
					src = resolvePath(st, src)
				}
			}
			rep, err := app.AuditDataset(cmd.Context(), resolvePath(st, args[0]), src)
			if err != nil {
				return err
			}
			rep.Set = args[0] // named as the user named it, not by where it lies
			if err := printOrJSON(st.Stdout, asJSON, rep, rep.Print); err != nil {
				return err
			}
			if n := rep.Failed(); n > 0 {
				fmt.Fprintf(st.Stderr, "%s: %d shortcut checks fail\n", args[0], n)
				return fault.Deterministic(ErrReported)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&judge, "judge", app.DefaultAuditJudge(), "the judge plugin (an executable) the answers check puts the wrong answers to")
	cmd.Flags().BoolVar(&noJudge, "no-judge", false, "skip the answers check (it is then reported as not run)")
	return cmd
}
