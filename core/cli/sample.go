package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/review"
	"github.com/duplexmpe/duplexmpe/core/store"
)

func newSampleCmd(st *State) *cobra.Command {
	var (
		per     int
		seed    uint64
		out, ds string
	)
	cmd := &cobra.Command{
		Use:   "sample RUN_DIR [--per-stratum 10] [--seed N] [--out DIR]",
		Short: "Export a stratified sheet of judge verdicts for people to check (CSV + HTML with audio)",
		Long: "Draw judge verdicts from a scored run for human review: up to --per-stratum verdicts\n" +
			"from every (model, condition, judge label) stratum, so correct and incorrect answers,\n" +
			"acknowledgements and intrusions of every model and condition are all represented;\n" +
			"the draw is seeded. Writes DIR/sheet.csv (reviewers fill the reviewer column; add\n" +
			"reviewer_2, ... for more), DIR/sheet.html (plays each clip) and DIR/clips/ (the model\n" +
			"audio the judge heard, cut from the item's audible output). Then `duplexmpe agreement DIR/sheet.csv`.\n" +
			"Gold answers come from --dataset, or from the dataset of the run file that made the run.",
		Args: exactArgs(1, "one run directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if per < 1 {
				return UsageErrorf("--per-stratum %d: at least 1", per)
			}
			dir := resolvePath(st, args[0])
			s, err := store.Open(dir)
			if err != nil {
				return fmt.Errorf("%s is not a run directory (%v); `duplexmpe run FILE.hcl` makes one", args[0], err)
			}
			gold, err := sampleGold(st, dir, ds)
			if err != nil {
				return err
			}
			rows, unscored, err := review.Candidates(s, gold)
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				return fmt.Errorf("%s has no judge verdicts to review (%d items not scored); run `duplexmpe score %s` first", args[0], unscored, args[0])
			}
			sheet := review.Sample(rows, per, seed)
			if out == "" {
				out = filepath.Join(dir, "review")
			} else {
				out = resolvePath(st, out)
			}
			if err := review.Clips(s, out, sheet); err != nil {
				return err
			}
			if err := review.WriteSheet(out, sheet); err != nil {
				return err
			}
			strata := map[string]bool{}
			for _, r := range sheet {
				strata[r.Stratum()] = true
			}
			fmt.Fprintf(st.Stdout, "sampled %d of %d judge verdicts from %d strata (up to %d each, seed %d)", len(sheet), len(rows), len(strata), per, seed)
			if unscored > 0 {
				fmt.Fprintf(st.Stdout, "; %d items not scored yet are left out", unscored)
			}
			fmt.Fprintf(st.Stdout, "\nwrote %s and %s\n", filepath.Join(out, review.CSVFile), filepath.Join(out, review.HTMLFile))
			return nil
		},
	}
	cmd.Flags().IntVar(&per, "per-stratum", review.DefaultPerStratum, "the most verdicts drawn from each (model, condition, judge label)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "the seed of the draw")
	cmd.Flags().StringVar(&out, "out", "", "the sheet's directory (default RUN_DIR/review)")
	cmd.Flags().StringVar(&ds, "dataset", "", "the built dataset directory, for gold answers (default: the run's own)")
	return cmd
}

// sampleGold maps scenario ids to gold answers: from --dataset, else from the dataset of
// the evaluation that made the run (best effort: a sheet without gold answers still
// works, reviewers then judge against the request alone).
func sampleGold(st *State, runDir, dsDir string) (map[string]string, error) {
	path := ""
	if dsDir != "" {
		path = resolvePath(st, dsDir)
	} else {
		info, err := app.ReadRunInfo(runDir)
		if err != nil {
			return nil, nil
		}
		quiet := *st
		quiet.Stderr = io.Discard
		f, err := loadRunFile(&quiet, info.RunFile, info.Vars)
		if err != nil {
			return nil, nil
		}
		ev := f.Evaluation(info.Evaluation)
		if ev == nil {
			return nil, nil
		}
		block := f.Dataset(ev.Dataset)
		if block == nil {
			return nil, nil
		}
		path = block.Out
	}
	d, err := dataset.Load(path)
	if err != nil {
		if dsDir != "" {
			return nil, fmt.Errorf("--dataset: %w", err)
		}
		fmt.Fprintf(st.Stderr, "gold answers left out: %v\n", err)
		return nil, nil
	}
	gold := map[string]string{}
	for _, sc := range d.Scenarios {
		gold[sc.ScenarioID] = sc.GoldAnswer
	}
	return gold, nil
}
