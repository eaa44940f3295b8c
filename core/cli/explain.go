package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/score/explain"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/termsafe"
)

const explainLong = `Explain a stored conversation of a run, or score a hand-written timeline without any
audio, to see how the protocol's rules (docs/protocol.md sections 4 and 5) decide each
verdict.

  duplexmpe explain RUN_DIR/items/ID       a conversation of a scored run: per event, what
                                           was said, the verdict, the gold answer, what the
                                           ASR heard, what the judge said, and the rule
                                           that decided it (its viewer page, as text)
  duplexmpe explain RUN_DIR --scenario ID [--condition C] --model NAME [--repeat R]
                                           the same, the item found by its scenario id
                                           (ov1-0034-implicit), or its pair id
                                           (ov1-0034) and condition, and the model's
                                           block name, in the run's current plan
  duplexmpe explain --timeline FILE.json   a hand-written timeline, described below

The input is JSON:

  {
    "turns":  [{"label": "T", "start": 0, "end": 5}, {"label": "N1", "start": 12, "end": 15}, ...],
    "speech": [[5.6, 8.5], [15.2, 16.0]],
    "protocol": {"n4_gap": 3, "merge_pause": 0.8, "min_speech": 0.12}
  }

turns are the human turns as played (label T, N1, N2, N3, N4_Q or N4_R; start and end in
seconds; optional speaker, text, addressee). speech are raw model speech regions in
seconds (within the first hour); they are merged and filtered by the VAD's own segmenter,
at 16 kHz sample resolution, as it post-processes a recording: pauses shorter than the
merge edge (merge_pause in whole 32 ms windows plus one: 832 ms at 0.8) are merged, as a
recording always merges them, and episodes shorter than min_speech are dropped. protocol optionally overrides
any section 8 constant (preamble_gap, turn_gap, t_onset_window, t_end_silence,
t_wait_cap, n4_gap, yield_deadline, yield_observe, min_eligible, tail) and merge_pause /
min_speech.

Output: one entry per turn with its verdicts: fresh_onset and presence for T; silence
(pass/fail) for N1-N3, where any speech fails because there is no audio to judge;
window_response and yield for N4_Q (pass, fail-still-voicing, fail-resumed,
excluded-spoke-during-question, excluded-no-onset-in-gap,
excluded-not-speaking-at-resolution). See examples/timelines/ for worked examples.`

func newExplainCmd(st *State) *cobra.Command {
	var file string
	var asJSON bool
	var find itemQuery
	cmd := &cobra.Command{
		Use:   "explain RUN_DIR/items/ID | RUN_DIR --scenario ID --model NAME | --timeline FILE.json",
		Short: "Show why a stored conversation, or a hand-written timeline, got each verdict",
		Long:  explainLong,
		Example: examples(
			"duplexmpe explain runs/bench/items/ID",
			"duplexmpe explain runs/bench --scenario ov1-0034 --condition implicit --model cascade",
			"duplexmpe explain --timeline examples/timelines/FILE.json --json",
		),
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return UsageErrorf("explain takes one item directory (RUN_DIR/items/ID), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 1 && file != "":
				return UsageErrorf("explain takes an item directory or --timeline, not both")
			case len(args) == 1 && find.scenario != "":
				if find.model == "" {
					return UsageErrorf("--scenario needs --model NAME (a model block name of the run)")
				}
				item, err := find.itemDir(st, args[0])
				if err != nil {
					return err
				}
				return explainItem(st, item, asJSON)
			case find.scenario != "" || find.model != "" || find.condition != "":
				return UsageErrorf("--scenario, --condition and --model find an item of a run: give RUN_DIR before them")
			case len(args) == 1:
				return explainItem(st, args[0], asJSON)
			case file == "":
				return UsageErrorf("explain needs an item directory (RUN_DIR/items/ID) or --timeline FILE.json (or --timeline - for standard input)")
			}
			data, name, err := readExplainInput(st, file)
			if err != nil {
				return err
			}
			in, err := explain.Parse(data)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			res := explain.Score(in)
			if asJSON {
				return writeJSON(st.Stdout, res)
			}
			writeExplainText(termsafe.Writer{W: st.Stdout}, res) // scenario text and ids are data
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "timeline", "", "the timeline JSON file (- reads standard input)")
	cmd.Flags().StringVar(&find.scenario, "scenario", "", "with RUN_DIR: the scenario id, or the pair id with --condition")
	cmd.Flags().StringVar(&find.condition, "condition", "", "with --scenario: explicit or implicit")
	cmd.Flags().StringVar(&find.model, "model", "", "with --scenario: the model's block name")
	cmd.Flags().IntVar(&find.repeat, "repeat", 0, "with --scenario: which repeat (0, the first)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// itemQuery finds an item of a run by what it plays (store.Store.Find).
type itemQuery struct {
	scenario, condition, model string
	repeat                     int
}

// itemDir is the item directory, under runDir as given, of the item q names.
func (q itemQuery) itemDir(st *State, runDir string) (string, error) {
	s, err := store.Open(resolvePath(st, runDir))
	if err != nil {
		return "", fault.Deterministic(err)
	}
	id, err := s.Find(q.scenario, q.condition, q.model, q.repeat)
	if err != nil {
		return "", err
	}
	return filepath.Join(runDir, store.ItemsDir, id), nil
}

// explainItem explains the stored conversation in the item directory arg.
func explainItem(st *State, arg string, asJSON bool) error {
	dir := resolvePath(st, strings.TrimRight(arg, "/"))
	items := filepath.Dir(dir)
	if filepath.Base(items) != store.ItemsDir {
		return fmt.Errorf("%s is not an item directory: give RUN_DIR/items/ID (see the item ids in RUN_DIR/items, or in report.html's conversation list)", arg)
	}
	it, err := report.ExplainItem(filepath.Dir(items), filepath.Base(dir))
	if err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(st.Stdout, it); err != nil {
			return err
		}
	} else {
		writeItemText(termsafe.Writer{W: st.Stdout}, it) // transcripts, answers and ids are data
	}
	switch {
	case it.Scored:
		return nil
	case it.Failure != "":
		return fmt.Errorf("%s failed, so it has no verdicts and is in no denominator; the failure says why, and `duplexmpe run` plays it again", arg)
	}
	return fmt.Errorf("%s is not scored yet, so it has no verdicts to explain: run `duplexmpe score %s`", arg, filepath.Dir(filepath.Dir(strings.TrimRight(arg, "/"))))
}

func writeItemText(w io.Writer, it *viewer.Item) {
	fmt.Fprintf(w, "item %s: model %s, scenario %s (%s), %s\n", it.ID, it.Model, it.Scenario, it.Condition, it.Status)
	if it.Failure != "" {
		fmt.Fprintf(w, "failed: %s\n", it.Failure)
	}
	if it.Unscored != "" {
		fmt.Fprintf(w, "unscored: %s\n", it.Unscored)
	}
	for _, p := range it.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	var eps []string
	for _, e := range it.Episodes {
		eps = append(eps, fmt.Sprintf("[%s, %s)", explain.Seconds(e.Start), explain.Seconds(e.End)))
	}
	if len(eps) == 0 {
		eps = []string{"none"}
	}
	fmt.Fprintf(w, "model speech episodes: %s\n", strings.Join(eps, " "))
	for _, wd := range it.Words {
		fmt.Fprintf(w, "  the model said [%s, %s): %q\n", explain.Seconds(wd.Span.Start), explain.Seconds(wd.Span.End), wd.Transcript)
	}
	if it.GoldNote != "" {
		fmt.Fprintln(w, it.GoldNote)
	}
	for _, e := range it.Events {
		mark := "FAIL"
		switch {
		case e.Pass:
			mark = "pass"
		case e.Excluded:
			mark = "in no rate"
		}
		who := ""
		if e.Speaker != "" {
			who = " (" + e.Speaker + ")"
		}
		fmt.Fprintf(w, "\n%s%s [%.3f, %.3f s): %s (%s)\n", e.Label, who, e.Start, e.End, e.Verdict, mark)
		for _, said := range e.Said {
			if said != "" {
				fmt.Fprintf(w, "  said: %s\n", said)
			}
		}
		if e.Gold != "" {
			fmt.Fprintf(w, "  gold answer: %s\n", e.Gold)
		}
		if e.Judged {
			fmt.Fprintf(w, "  heard (ASR): %q\n", e.Transcript)
			if e.Judge != "" {
				fmt.Fprintf(w, "  judge: %s\n", e.Judge)
			}
		}
		for _, r := range e.Rules {
			fmt.Fprintf(w, "  rule: %s\n", r)
		}
	}
	if it.Page != "" {
		fmt.Fprintf(w, "\nto hear it: %s\n", it.Page)
	}
}

func readExplainInput(st *State, file string) ([]byte, string, error) {
	if file == "-" {
		data, err := io.ReadAll(st.Stdin)
		if err != nil {
			return nil, "", fmt.Errorf("reading the timeline from standard input: %w", err)
		}
		return data, "<stdin>", nil
	}
	path := file
	if !filepath.IsAbs(path) {
		cwd, err := st.Getwd()
		if err != nil {
			return nil, "", fmt.Errorf("cannot find the working directory: %w", err)
		}
		path = filepath.Join(cwd, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("cannot read the timeline: %w (check the path given to --timeline)", err)
	}
	return data, file, nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func writeExplainText(w io.Writer, r explain.Result) {
	var eps []string
	for _, e := range r.Episodes {
		eps = append(eps, fmt.Sprintf("[%s, %s)", explain.Seconds(e.Start), explain.Seconds(e.End)))
	}
	if len(eps) == 0 {
		eps = []string{"none"}
	}
	fmt.Fprintf(w, "model speech episodes (merge_pause %s s, min_speech %s s): %s\n", explain.Seconds(r.MergePause), explain.Seconds(r.MinSpeech), strings.Join(eps, " "))
	for _, t := range r.Turns {
		fmt.Fprintf(w, "turn %d  %-4s [%s, %s)  ", t.Index, t.Label, explain.Seconds(t.Start), explain.Seconds(t.End))
		ev := t.Event
		switch {
		case ev == nil:
			fmt.Fprintf(w, "resolution of turn %d (scored there)\n", t.Index-1)
		case ev.T != nil:
			v := ev.T
			onset := "none"
			if v.Onset != nil {
				onset = explain.Seconds(*v.Onset)
			}
			fmt.Fprintf(w, "fresh_onset=%s presence=%s outcome=%s\n", yesNo(v.FreshOnset), yesNo(v.Presence), v.Outcome)
			lo, hi := score.OnsetWindow(t.End, r.Protocol)
			fmt.Fprintf(w, "        active at tE=%s: %s; first onset in %s: %s; answer audio [%s, %s)\n",
				explain.Seconds(t.End), yesNo(v.ActiveAtEnd), score.OpenClosed(lo, hi, explain.Seconds), onset, explain.Seconds(v.AnswerSpan.Start), explain.Seconds(v.AnswerSpan.End))
		case ev.Silence != nil:
			v := ev.Silence
			fmt.Fprintf(w, "silence=%s\n", t.Silence)
			if v.Silent() {
				fmt.Fprintf(w, "        window [%s, %s): no model speech\n", explain.Seconds(v.Window.Start), explain.Seconds(v.Window.End))
			} else {
				var sp []string
				for _, s := range v.Speech {
					sp = append(sp, fmt.Sprintf("[%s, %s)", explain.Seconds(s.Start), explain.Seconds(s.End)))
				}
				fmt.Fprintf(w, "        window [%s, %s): speech %s = %.0f ms (no audio to judge: speech fails)\n",
					explain.Seconds(v.Window.Start), explain.Seconds(v.Window.End), strings.Join(sp, " "), v.SpeechMS)
			}
		case ev.N4 != nil:
			v := ev.N4
			fmt.Fprintf(w, "window_response=%s yield=%s\n", yesNo(v.WindowResponse), t.Yield)
			fmt.Fprintf(w, "        spoke during question [%s, %s): %s; onset in %s: %s; active at r=%s: %s\n",
				explain.Seconds(v.Question.Start), explain.Seconds(v.Question.End), yesNo(v.SpokeDuringQuestion), score.OpenClosed(v.Question.End, v.Resolution, explain.Seconds),
				yesNo(v.OnsetInGap), explain.Seconds(v.Resolution), yesNo(v.ActiveAtResolution))
			again := ""
			if v.Yield == score.YieldFailResumed {
				for _, e := range r.Episodes {
					if e.Start > v.Deadline && e.Start < v.ObserveEnd {
						again = fmt.Sprintf(" (speaking again at %s)", explain.Seconds(e.Start))
						break
					}
				}
			}
			fmt.Fprintf(w, "        active at deadline %s: %s; observed until %s: %s%s\n",
				explain.Seconds(v.Deadline), yesNo(v.Yield == score.YieldFailStillVoicing), explain.Seconds(v.ObserveEnd), v.Yield, again)
		}
		if ev != nil {
			if ms := score.Memberships(*ev); len(ms) > 0 {
				fmt.Fprintf(w, "        in the measures: %s\n", score.MembershipsText(ms))
			}
		}
	}
}
