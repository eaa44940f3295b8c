package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/plan"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/core/store"
)

func newPlanCmd(st *State) *cobra.Command {
	var (
		vars, measured, rtf []string
		only, shardFlag     string
		asJSON              bool
		limit               int
	)
	cmd := &cobra.Command{
		Use:   "plan FILE.hcl [--limit N]",
		Short: "Say what a run will cost before it starts: items, done, audio hours, disk, time",
		Long: "Plan every evaluation block (or --evaluation NAME) as `run` does, into its items\n" +
			"(one per model, conversation and repeat, with the ids `run` plays), count those the\n" +
			"run store already holds, and estimate per model the audio hours, the disk of the run\n" +
			"store, and the time to play what is left and to score it. No plugin is started and\n" +
			"nothing is built: a model that has not described itself in the run directory yet, or\n" +
			"a dataset not built yet, has its items counted as to play, with a note. Play rates\n" +
			"are measured on the run's own directory and on --measured DIR (a pilot run:\n" +
			"session.json's frames and step latency), or given with --rtf MODEL=X (seconds of\n" +
			"model compute per second of conversation); the disk and scoring rates are measured\n" +
			"there too, or the defaults of docs/scale.md. `run` prints the same summary, of the\n" +
			"plan it plays, before the first conversation plays. It also estimates the dataset\n" +
			"build the run needs: the clips not built yet, their seconds of speech (from their\n" +
			"words) and the CPU to synthesise them at Kokoro's measured cost. --limit N plans\n" +
			"what `run --limit N` plays and builds: the first N pairs, both conditions of each.",
		Args: exactArgs(1, "one run file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 || cmd.Flags().Changed("limit") && limit == 0 {
				return UsageErrorf("--limit %d: give a number of pairs, 1 or more", limit)
			}
			opts := app.PlanOptions{Shard: store.All, Measured: measured, Rates: map[string]plan.Rates{}, Limit: limit}
			if shardFlag != "" {
				s, err := store.ParseShard(shardFlag)
				if err != nil {
					return UsageErrorf("--shard: %v", err)
				}
				opts.Shard = s
			}
			for _, kv := range rtf {
				name, v, ok := strings.Cut(kv, "=")
				x, err := strconv.ParseFloat(v, 64)
				if !ok || err != nil || x <= 0 {
					return UsageErrorf("--rtf %q: write --rtf MODEL=X with X > 0 (seconds of compute per second of conversation)", kv)
				}
				opts.Rates[name] = plan.Rates{RTF: x, Source: "configured"}
			}
			f, err := loadRunFile(st, args[0], vars)
			if err != nil {
				return err
			}
			s, err := newStarter(st, f)
			if err != nil {
				return err
			}
			results, err := planAll(s, only, opts)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(st.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(jsonPlans(results))
			}
			for _, r := range results {
				printPlan(st.Stdout, r)
			}
			return nil
		},
	}
	addVarFlag(cmd, &vars)
	cmd.Flags().StringVar(&only, "evaluation", "", "plan only this evaluation block")
	cmd.Flags().StringVar(&shardFlag, "shard", "", "plan slice i of N (e.g. 2/8)")
	cmd.Flags().StringArrayVar(&measured, "measured", nil, "a run directory to measure the models' rates on (repeatable)")
	cmd.Flags().StringArrayVar(&rtf, "rtf", nil, "a model's play rate, MODEL=X: seconds of compute per second of conversation (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON")
	cmd.Flags().IntVar(&limit, "limit", 0, "plan what `run --limit N` plays: only the first `N` pairs of the dataset (both conditions of each)")
	return cmd
}

func planAll(s *pluginstart.Starter, only string, opts app.PlanOptions) ([]*app.PlanResult, error) {
	var out []*app.PlanResult
	for _, ev := range s.File.Evaluations {
		if only != "" && ev.Name != only {
			continue
		}
		r, err := app.Plan(s, ev, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if only != "" && len(out) == 0 {
		return nil, UsageErrorf("--evaluation %q: the run file has no such evaluation block", only)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the run file has no evaluation block to plan")
	}
	return out, nil
}

// jsonPlan is one evaluation's plan as `plan --json` prints it; unknown figures are
// null.
type jsonPlan struct {
	Evaluation    string      `json:"evaluation"`
	Out           string      `json:"out"`
	Shard         string      `json:"shard"`
	Models        int         `json:"models"`
	Conversations int         `json:"conversations"`
	Repeats       int         `json:"repeats"`
	DurationsFrom string      `json:"durations_from"`
	FreeBytes     uint64      `json:"free_bytes,omitempty"`
	Fits          bool        `json:"fits"`       // the run store and the report
	StoreFits     bool        `json:"store_fits"` // the run store alone
	PerModel      []jsonModel `json:"per_model"`
	Total         jsonModel   `json:"total"`
	Limit         int         `json:"limit,omitempty"`
	Build         plan.Build  `json:"build"`
	Notes         []string    `json:"notes,omitempty"`
}

type jsonModel struct {
	Model string `json:"model"`
	plan.Counts
	AudioHours       float64    `json:"audio_hours"`
	AudioHoursToPlay float64    `json:"audio_hours_to_play"`
	DiskBytes        *float64   `json:"disk_bytes"`
	ReportBytes      float64    `json:"report_bytes"`
	PlaySeconds      *float64   `json:"play_s"`
	ScoreSeconds     *float64   `json:"score_s"`
	Rates            plan.Rates `json:"rates"`
}

func jsonPlans(rs []*app.PlanResult) []jsonPlan {
	orNull := func(v float64) *float64 {
		if math.IsNaN(v) {
			return nil
		}
		return &v
	}
	model := func(m plan.Model) jsonModel {
		return jsonModel{Model: m.Model, Counts: m.Counts, AudioHours: m.AudioHours, AudioHoursToPlay: m.AudioHoursToPlay,
			DiskBytes: orNull(m.DiskBytes), ReportBytes: m.ReportBytes, PlaySeconds: orNull(m.PlaySeconds), ScoreSeconds: orNull(m.ScoreSeconds), Rates: m.Rates}
	}
	var out []jsonPlan
	for _, r := range rs {
		p := jsonPlan{Evaluation: r.Evaluation, Out: r.Out, Shard: r.Shard.String(), Models: r.Models, Conversations: r.Conversations,
			Repeats: r.Repeats, DurationsFrom: r.DurationsFrom, FreeBytes: r.FreeBytes, Fits: r.Fits(), StoreFits: r.StoreFits(), Notes: r.Notes, Limit: r.Limit, Build: r.Build,
			Total: model(r.Estimate.Total)}
		for _, m := range r.Estimate.Models {
			p.PerModel = append(p.PerModel, model(m))
		}
		out = append(out, p)
	}
	return out
}

// printPlan prints one evaluation's plan, terraform plan's way: what there is, what is
// done, what a run would do and cost.
func printPlan(w io.Writer, r *app.PlanResult) {
	t := r.Estimate.Total
	shard := ""
	if r.Shard.Count > 1 {
		shard = ", shard " + r.Shard.String()
	}
	fmt.Fprintf(w, "Plan: evaluation %q -> %s%s\n", r.Evaluation, r.Out, shard)
	fmt.Fprintf(w, "  %d %s x %d conversations x %d %s = %d items: %d done, %d to play (%d failed, %d damaged among them)\n",
		r.Models, pluralWord(r.Models, "model"), r.Conversations, r.Repeats, pluralWord(r.Repeats, "repeat"), t.Items, t.Done, t.ToPlay(), t.Failed, t.Damaged)
	if r.Stale > 0 {
		fmt.Fprintf(w, "  %d items of earlier plans are kept in %s and not counted\n", r.Stale, r.Out)
	}
	if r.Limit > 0 {
		fmt.Fprintf(w, "  --limit %d: the first %d of %d pairs, both conditions of each\n", r.Limit, r.Build.Pairs, r.Build.OfPairs)
	}
	if b := r.Build; b.Clips > 0 {
		fmt.Fprintf(w, "  dataset build: %d clips to synthesise, about %.0f s of speech, about %.0f CPU-s (%s) (an estimate: %.1f CPU-s per second of speech, Kokoro's measured cost; flite and Piper are faster)\n",
			b.Clips, b.AudioS, b.CPUSeconds, durationOrUnknown(b.CPUSeconds), plan.SynthesisCPUPerAudioS)
	} else {
		fmt.Fprintf(w, "  dataset build: nothing to synthesise (the built dataset holds every clip)\n")
	}
	fmt.Fprintf(w, "  conversation lengths: %s\n\n", r.DurationsFrom)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  model\titems\tdone\tto play\taudio h\tdisk\tplay time\tscore time\trates from")
	row := func(m plan.Model, src string) {
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%.1f\t%s\t%s\t%s\t%s\n", m.Model, m.Items, m.Done, m.ToPlay(), m.AudioHours,
			bytesOrUnknown(m.DiskBytes), durationOrUnknown(m.PlaySeconds), durationOrUnknown(m.ScoreSeconds), src)
	}
	for _, m := range r.Estimate.Models {
		row(m, m.Rates.Source)
	}
	row(t, "")
	tw.Flush()
	fits := "unknown"
	if r.FreeBytes > 0 {
		fits = fmt.Sprintf("%s free: ", humanBytes(float64(r.FreeBytes)))
		switch {
		case r.Fits():
			fits += "fits"
		case r.StoreFits():
			fits += "the run store fits, the report DOES NOT: render it with a smaller `duplexmpe report --recordings-budget`, or free some disk"
		default:
			fits += "DOES NOT FIT"
		}
	}
	fmt.Fprintf(w, "\n  disk when done: %s for the run store + %s for the report's conversation viewer (a page per conversation, stereo recordings within %s) (%s)\n",
		bytesOrUnknown(t.DiskBytes), humanBytes(t.ReportBytes), humanBytes(plan.RecordingsBudget), fits)
	fmt.Fprintf(w, "  play time is one conversation at a time per model, models side by side\n")
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintln(w)
}

func pluralWord(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

func bytesOrUnknown(b float64) string {
	if math.IsNaN(b) {
		return "unknown"
	}
	return humanBytes(b)
}

func humanBytes(b float64) string {
	switch {
	case b >= 1e9:
		return fmt.Sprintf("%.1f GB", b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	default:
		return fmt.Sprintf("%.0f KB", b/1e3)
	}
}

func durationOrUnknown(s float64) string {
	if math.IsNaN(s) {
		return "unknown"
	}
	d := time.Duration(s * float64(time.Second))
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%.1f days", d.Hours()/24)
	case d >= time.Hour:
		return fmt.Sprintf("%.1f h", d.Hours())
	case d >= time.Minute:
		return fmt.Sprintf("%.0f min", d.Minutes())
	default:
		return fmt.Sprintf("%.0f s", d.Seconds())
	}
}
