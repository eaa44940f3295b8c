package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/score/textfmt"
)

// MainTable prints the main results as aligned plain text: one block per model and
// condition, each measure as "rate (k/n)" with its Wilson 95% interval on the line
// below, or "n/a (n=k)". It is what `run` prints at the end.
func MainTable(w io.Writer, s score.Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"model", "role", "condition", "convs"}
	for _, mi := range score.MeasureTable {
		head = append(head, mi.Short)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, e := range s.Entries {
		top := []string{e.Model, roleText(e), e.Condition, convsText(e)}
		bottom := []string{"", "", "", ""}
		for _, mi := range score.MeasureTable {
			r := e.Rate(mi.Key)
			if !r.Available {
				top = append(top, textfmt.Rate(r))
				bottom = append(bottom, "")
				continue
			}
			top = append(top, fmt.Sprintf("%.3f (%d/%d)", r.Rate, r.K, r.N))
			bottom = append(bottom, textfmt.Interval(r))
		}
		fmt.Fprintln(tw, strings.Join(top, "\t")+"\t")
		fmt.Fprintln(tw, strings.Join(bottom, "\t")+"\t")
	}
	if len(s.Entries) == 0 {
		fmt.Fprintln(tw, "(no scored conversations)\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "Rates: successes/denominator, [Wilson 95%% interval]. Yield is over eligible N4 events, n/a below min_eligible = %d. "+
		"Presence and window response are diagnostics. Convs: conversations in the denominators (failed and unscored ones in brackets).\n%s%s\n%s\n",
		s.Protocol.MinEligible, scheduleText(s.Protocol), acousticsText(s.Acoustics), familyText(s)); err != nil {
		return err
	}
	if s.Repeats > 1 {
		if _, err := fmt.Fprintf(w, "Repeats: %d plays of every conversation, each with its own seed; every rate pools them (each event counts once per repeat; convs counts plays). "+
			"Run-to-run agreement and spread: the report's repeats section.\n", s.Repeats); err != nil {
			return err
		}
	}
	for _, warning := range s.Warnings {
		if _, err := fmt.Fprintf(w, "warning: %s\n", warning); err != nil {
			return err
		}
	}
	return nil
}
