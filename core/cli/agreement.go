package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/review"
)

func newAgreementCmd(st *State) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "agreement SHEET.csv [--json]",
		Short: "Agreement and Cohen's kappa between the reviewers of a sheet and the judge",
		Long: "Read a review sheet filled by one or more reviewers (columns reviewer, reviewer_2, ...;\n" +
			"each cell correct/incorrect for an answer, acknowledgement/intrusion for speech in a\n" +
			"silence window, or empty when not reviewed) and report, for every reviewer against\n" +
			"the judge and every two reviewers, the percent agreement and Cohen's kappa over the\n" +
			"rows both labelled: over all rows, answers only and silence windows only.",
		Args: exactArgs(1, "one review sheet (sheet.csv)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			sh, err := review.ReadSheet(resolvePath(st, args[0]))
			if err != nil {
				return err
			}
			pairs := review.Agreement(sh)
			if asJSON {
				raw, err := json.MarshalIndent(struct {
					Rows      int           `json:"rows"`
					Reviewers []string      `json:"reviewers"`
					Pairs     []review.Pair `json:"pairs"`
				}{len(sh.Rows), sh.Reviewers, pairs}, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(st.Stdout, string(raw))
				return nil
			}
			fmt.Fprint(st.Stdout, review.Text(pairs, len(sh.Rows)))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}
