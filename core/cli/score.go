package cli

import (
	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/config"
)

func newScoreCmd(st *State) *cobra.Command {
	var (
		judge   string
		runFile string
		vars    []string
		out     string
	)
	cmd := &cobra.Command{
		Use:   "score RUN_DIR",
		Short: "Score the stored conversations of a run again (no model is started), then report",
		Long: "Re-score the recorded outputs of a run directory: offline VAD on every audible\n" +
			"waveform, the verdicts of protocol section 5, ASR and judge on answers and on speech\n" +
			"in silence windows; then write summary.json and the report. The asr and judge plugins\n" +
			"come from the evaluation block of the run file that made the run (RUN_DIR/run.json),\n" +
			"or from --run-file; --judge NAME swaps in another plugin block of that file, and\n" +
			"--out DIR writes that scoring as a new view in DIR (verdicts, summary, report; no\n" +
			"audio), leaving the run's own report alone; `duplexmpe compare` sets views side by side.\n" +
			"Items already scored with the same asr, judge, protocol, VAD and scoring rules are\n" +
			"reused, and so is every transcript of the same audio by the same ASR and every\n" +
			"verdict of the same judge on the same question (RUN_DIR/cache): a new judge\n" +
			"transcribes nothing. An ASR or judge call that fails after its retries leaves its\n" +
			"conversation unscored (nothing is saved); the next score retries it. Exit 1 when\n" +
			"conversations are unscored or missing from the run's plan, after the report.",
		Example: examples(
			"duplexmpe score runs/bench",
			"duplexmpe score runs/bench --judge second --out views/second",
		),
		Args: exactArgs(1, "one run directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var f *config.File
			ui := newUI(st)
			ui.Scored = func(r *app.ScoreResult) { printScored(st, r) }
			_, err := app.Score(st.Ctx, app.ScoreRequest{
				Dir: resolvePath(st, args[0]), Given: args[0], RunFile: runFile, Vars: vars, Judge: judge, Out: outPath(st, out),
				Load: func(path string, vars []string) (*config.File, error) {
					var err error
					opts := config.Options{}
					if judge != "" {
						opts.CommandLineUses = []string{judge}
					}
					f, err = loadRunFileWith(st, path, vars, opts)
					return f, err
				},
			}, ui)
			if err != nil && f != nil {
				return reported(st, f, f.Path, err)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&judge, "judge", "", "score with this plugin block of the run file instead of the evaluation's judge")
	cmd.Flags().StringVar(&runFile, "run-file", "", "the run file to take the asr and judge plugins from (default: the one that made the run)")
	cmd.Flags().StringVar(&out, "out", "", "write the verdicts, summary and report of this scoring into this directory, beside the run's own")
	addVarFlag(cmd, &vars)
	return cmd
}

// outPath resolves an optional path flag; "" stays "".
func outPath(st *State, p string) string {
	if p == "" {
		return ""
	}
	return resolvePath(st, p)
}
