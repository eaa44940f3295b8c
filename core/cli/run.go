package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/store"
)

func newRunCmd(st *State) *cobra.Command {
	var (
		vars      []string
		only      string
		shardFlag string
		noScore   bool
		deadline  time.Duration
		fresh     bool
		into      bool
		adopt     bool
		limit     int
	)
	cmd := &cobra.Command{
		Use:   "run FILE.hcl",
		Short: "Build the datasets, evaluate every model, score, and write the report",
		Long: "Run every evaluation block of a run file (or only --evaluation NAME): build its\n" +
			"dataset (clips already built are reused), play every conversation through every\n" +
			"model plugin into the run store (<out>/), score the recorded outputs with the asr and\n" +
			"judge plugins, and write report.md, report.html, results.json and results.csv there.\n" +
			"The main table is printed at the end.\n\n" +
			"The run directory is incremental: re-running plays only what the current run file\n" +
			"adds or changes (a new model, scenario or repeat; a model whose identity, config or\n" +
			"code changed), says what it reuses and why anything is played again, and retries\n" +
			"failed conversations. Items of earlier plans stay on disk, are never counted, and\n" +
			"`duplexmpe prune RUN_DIR` removes them. A plugin starts only when it has work: a\n" +
			"finished run starts none; otherwise every plugin the run needs is started and\n" +
			"configured before the first conversation plays. With --shard i/N only a\n" +
			"deterministic slice is played (and nothing is scored); combine shard directories\n" +
			"with `duplexmpe merge`, then `duplexmpe score`. What the run will\n" +
			"cost (see `duplexmpe plan`) is printed before the first conversation plays.\n\n" +
			"--limit N is a smoke run: only the first N pairs of the dataset are built, played\n" +
			"(both conditions of each), scored and reported, and the run directory, the summary and\n" +
			"the report say the run is partial. A later run without --limit plays the rest into\n" +
			"the same directory and reuses what the smoke run played.",
		Example: examples(
			"duplexmpe run bench.hcl",
			"duplexmpe run examples/runs/open-v1.hcl --var gaps=natural",
			"duplexmpe run my-run.hcl --limit 2              # a smoke run: the first 2 pairs",
			"duplexmpe run my-run.hcl --evaluation e --shard 2/8 --no-score",
		),
		Args: exactArgs(1, "one run file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 || cmd.Flags().Changed("limit") && limit == 0 {
				return UsageErrorf("--limit %d: give a number of pairs, 1 or more", limit)
			}
			shard := store.All
			if shardFlag != "" {
				s, err := store.ParseShard(shardFlag)
				if err != nil {
					return UsageErrorf("--shard: %v", err)
				}
				shard = s
			}
			f, err := loadRunFileToStart(st, args[0], vars)
			if err != nil {
				return err
			}
			if len(f.Evaluations) == 0 {
				return fmt.Errorf("%s has no evaluation block; add evaluation \"name\" { dataset = dataset.x, models = [plugin.y], asr = plugin.z, judge = plugin.w }", args[0])
			}
			s, err := newStarter(st, f)
			if err != nil {
				return err
			}
			ui := newUI(st)
			ui.Built = func(r *app.BuildResult) { printBuilt(st, r) }
			ui.Planned = func(r *app.PlayResult) { printPlanned(st, r) }
			ui.Played = func(r *app.PlayResult) { printPlayed(st, r) }
			ui.Scored = func(r *app.ScoreResult) { printScored(st, r) }
			opts := app.EvaluateOptions{Vars: vars, Shard: shard, FrameDeadline: deadline, Score: !noScore, Harness: ReadBuildInfo(), FreshIdentities: fresh, IntoExisting: into, Adopt: adopt, Limit: limit}
			found := false
			var failed []error
			for _, ev := range f.Evaluations {
				if only != "" && ev.Name != only {
					continue
				}
				found = true
				res, err := app.Evaluate(st.Ctx, s, ev, opts, ui)
				if err != nil {
					return reported(st, f, args[0], err)
				}
				if err := res.FailedConversations(); err != nil {
					failed = append(failed, err)
				}
			}
			if !found {
				return UsageErrorf("--evaluation %q: %s has no such evaluation block", only, args[0])
			}
			return errors.Join(failed...)
		},
	}
	addVarFlag(cmd, &vars)
	cmd.Flags().StringVar(&only, "evaluation", "", "run only this evaluation block")
	cmd.Flags().StringVar(&shardFlag, "shard", "", "play only slice `i/N` (e.g. 2/8); scoring waits for duplexmpe merge")
	cmd.Flags().BoolVar(&noScore, "no-score", false, "play the conversations but do not score or report")
	cmd.Flags().IntVar(&limit, "limit", 0, "a smoke run: play only the first `N` pairs of the dataset (both conditions of each); the results are marked partial")
	cmd.Flags().DurationVar(&deadline, "frame-deadline", 0, "frame_timeout for every model plugin block that does not set one (default 2m): a model slower than this for one frame is killed, restarted, and that conversation fails")
	cmd.Flags().BoolVar(&into, "into-existing", false, "let the run write into an out folder that holds other files and is not a run directory (refused otherwise, exit 3); it removes nothing it did not write")
	cmd.Flags().BoolVar(&adopt, "adopt", false, "let the run into a run directory another run file made (refused otherwise, exit 3): for this run file moved or renamed; the directory then records it")
	cmd.Flags().BoolVar(&fresh, "fresh-identities", false, "start every plugin once and ask what it is, instead of using what it described before (RUN_DIR/plugins)")
	return cmd
}

// maxReasons is how many distinct reasons to play a model's conversations the plan's
// line names (most frequent first); the rest are counted.
const maxReasons = 3

// reasonsText is a model's reasons to play, as the plan's line says them.
func reasonsText(reasons []evaluate.Reason) string {
	var why []string
	for i, r := range reasons {
		if i == maxReasons {
			rest := 0
			for _, r := range reasons[i:] {
				rest += r.Items
			}
			why = append(why, fmt.Sprintf("%d more, for %d other reasons", rest, len(reasons)-i))
			break
		}
		why = append(why, r.String())
	}
	return strings.Join(why, "; ")
}

// printPlanned says, before anything plays, what the run reuses, what it plays and why,
// and which plugins it started.
func printPlanned(st *State, r *app.PlayResult) {
	if r.Estimate != nil {
		printPlan(st.Stdout, r.Estimate) // the same plan as the lines below
	}
	p := r.Plan
	if r.Partial != nil {
		fmt.Fprintf(st.Stdout, "PARTIAL RUN: %s\n", r.Partial)
	}
	if r.Repeats > 1 {
		fmt.Fprintf(st.Stdout, "repeats: %d: every conversation is played %d times, each repeat with its own seed; the counts are of plays\n", r.Repeats, r.Repeats)
	}
	models := map[string]bool{}
	var order []string
	for _, it := range p.Items {
		if !models[it.Model] {
			models[it.Model] = true
			order = append(order, it.Model)
		}
	}
	for _, m := range order {
		done := p.Count(m, store.StateDone)
		line := fmt.Sprintf("plan %s: %d conversations: %d reused", m, done+p.ToPlay(m), done)
		if n := p.Count(m, store.StateTodo); n > 0 {
			line += fmt.Sprintf(", %d to play (%s)", n, reasonsText(p.Reasons(m)))
		}
		if n := p.Count(m, store.StateFailed); n > 0 {
			line += fmt.Sprintf(", %d failed before, played again", n)
		}
		if n := p.Count(m, store.StateDamaged); n > 0 {
			line += fmt.Sprintf(", %d damaged, played again", n)
		}
		fmt.Fprintln(st.Stdout, line)
	}
	if n := len(p.Stale); n > 0 {
		fmt.Fprintf(st.Stdout, "%d items of earlier plans are kept in %s and not counted; `duplexmpe prune %s` removes them\n", n, r.Out, r.Out)
	}
	if len(r.Started) == 0 {
		fmt.Fprintln(st.Stdout, "plugins started: none")
	} else {
		fmt.Fprintf(st.Stdout, "plugins started: %s\n", strings.Join(r.Started, ", "))
	}
}

func printPlayed(st *State, r *app.PlayResult) {
	for i, name := range r.Models {
		c := r.Counts[i]
		if c == nil {
			continue
		}
		damaged := ""
		if c.Damaged > 0 {
			damaged = fmt.Sprintf(" (%d of them found damaged in the store)", c.Damaged)
		}
		fmt.Fprintf(st.Stdout, "model %s: %d conversations: %d reused, %d played%s, %d failed, %d plugin restarts\n",
			name, c.Planned, c.Reused, c.Done, damaged, c.Failed, c.Restarts)
	}
	if r.AllReused() {
		fmt.Fprintf(st.Stdout, "every conversation was already in %s: no model plugin started\n", r.Out)
	}
	fmt.Fprintf(st.Stdout, "evaluation %s: played in %s -> %s\n", r.Evaluation, r.Elapsed.Round(time.Second), r.Out)
}

// scoredIn says how long the scoring took: for a run that scored beside playing, what
// was left once that scoring had finished.
func scoredIn(r *app.ScoreResult) string {
	if r.Early != nil {
		return fmt.Sprintf("%d scored by the scoring that ran beside playing; %d more, the summary and the report in %s",
			r.Early.Scored, r.Now-r.Early.Scored, r.Elapsed.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("scoring, summary and report in %s", r.Elapsed.Round(100*time.Millisecond))
}

func printScored(st *State, r *app.ScoreResult) {
	fmt.Fprintf(st.Stdout, "scored %d conversations (%d now, %d reused); %d judge verdicts, %d unparseable; %s\n",
		len(r.Items), r.Now, r.Reused, r.JudgeVerdicts, r.Unparseable, scoredIn(r))
	started := "none"
	if len(r.Started) > 0 {
		started = strings.Join(r.Started, ", ")
	}
	fmt.Fprintf(st.Stdout, "scorer calls: %d transcribed (%d transcripts reused), %d judged (%d verdicts reused); plugins started: %s\n",
		r.Transcribed, r.TranscriptsReused, r.Judged, r.JudgementsReused, started)
	for _, n := range r.FailedModels {
		fmt.Fprintf(st.Stdout, "model %s: %d failed conversations are not scored (see their failure.json; `duplexmpe run` retries them)\n", n, r.Failed[n])
	}
	if n := len(r.Unscored); n > 0 {
		fmt.Fprintf(st.Stdout, "%d conversations unscored (a scorer failed; in no rate; the next `duplexmpe score` retries them):\n", n)
		for _, u := range r.Unscored {
			fmt.Fprintf(st.Stdout, "  %s\n", u)
		}
	}
	if n := len(r.Missing); n > 0 {
		fmt.Fprintf(st.Stdout, "%d conversations of the plan are missing from the run store (never played, or on a shard not merged; in no rate):\n", n)
		for i, e := range r.Missing {
			if i == 10 {
				fmt.Fprintf(st.Stdout, "  ... and %d more\n", n-10)
				break
			}
			fmt.Fprintf(st.Stdout, "  %s\n", e.Name())
		}
	}
	if r.Stale > 0 {
		fmt.Fprintf(st.Stdout, "%d items of earlier plans in the run directory are not counted\n", r.Stale)
	}
	fmt.Fprintln(st.Stdout)
	if r.Meta.Partial != "" {
		fmt.Fprintf(st.Stdout, "PARTIAL RUN: %s\n", r.Meta.Partial)
	}
	report.MainTable(st.Stdout, r.Summary)
	printNoSpeech(st, r)
	fmt.Fprintf(st.Stdout, "\nreport: %s\n", filepath.Join(r.Dir, report.HTMLFile))
}

// printNoSpeech warns, under the main table, of models whose audio the VAD never called
// speech: their zeros there may be tones or noise, not silence.
func printNoSpeech(st *State, r *app.ScoreResult) {
	for _, ns := range r.NoSpeech {
		fmt.Fprintf(st.Stdout, "\nmodel %s: audio but no speech in %d of %d conversations with audio (peak %s dBFS in %s): Silero VAD heard no speech in it, so every measure above treats it as silence",
			ns.Model, ns.WithoutSpeech, ns.WithAudio, ns.Peak, ns.Example)
		if ns.NoSpeechAtAll {
			fmt.Fprintf(st.Stdout, ", and it never spoke at all")
		}
		fmt.Fprintf(st.Stdout, ". Listen to it (report.html, \"Audio but no speech\") and see what the VAD hears: duplexmpe vad %s\n",
			filepath.Join(r.Dir, filepath.FromSlash(ns.ExampleFileHref)))
	}
}
