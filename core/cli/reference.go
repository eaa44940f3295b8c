package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/reference"
)

func newReferenceCmd(st *State) *cobra.Command {
	var (
		vars                   []string
		refName                string
		llmName, judgeName     string
		dsName, out            string
		runs, retries, maxToks int
		temperature            float64
		seed                   int64
	)
	cmd := &cobra.Command{
		Use:   "reference FILE.hcl [--reference NAME] [--llm PLUGIN --judge PLUGIN --out DIR] [--runs 2]",
		Short: "Run the text reference track: an LLM decides RESPOND or SILENT on every turn of the transcript",
		Long: "The text reference of protocol section 7. For every turn of every scenario of a dataset\n" +
			"block, the llm plugin gets the duty instruction (the dataset's preamble), the speaker-\n" +
			"attributed transcript so far and the current turn, and replies with a JSON decision,\n" +
			"RESPOND or SILENT, and an answer when it responds; the judge plugin grades the answers\n" +
			"to T. Scored as the speech models are: response on T (explicit vs implicit, exact\n" +
			"McNemar), silence on N1-N3, answer accuracy. runs = 2 asks twice and reports how often\n" +
			"the decisions agree. Writes OUT/reference.json (every decision) and OUT/reference.md.\n" +
			"Runs the reference blocks of the run file (all of them, or the one --reference names);\n" +
			"flags override a block's settings. A file without reference blocks needs --llm, --judge\n" +
			"and --out (plugin blocks and a directory). The dataset is read from its built directory\n" +
			"(out), or from its scenarios when it has none.",
		Args: exactArgs(1, "one run file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runs < 1 {
				return UsageErrorf("--runs %d: at least 1", runs)
			}
			if retries < 0 {
				return UsageErrorf("--retries %d: 0 or more", retries)
			}
			if maxToks < 0 {
				return UsageErrorf("--max-tokens %d: 0 or more", maxToks)
			}
			f, err := loadRunFile(st, args[0], vars)
			if err != nil {
				return err
			}
			jobs, err := app.ReferenceJobs(f, args[0], refName)
			if err != nil {
				return err
			}
			fl := cmd.Flags()
			if fl.Changed("out") && len(jobs) > 1 {
				return UsageErrorf("--out with %d reference blocks would write them into one directory; choose one with --reference NAME", len(jobs))
			}
			for i := range jobs {
				j := &jobs[i]
				for _, o := range []struct {
					flag string
					set  func()
				}{
					{"llm", func() { j.LLM = llmName }},
					{"judge", func() { j.Judge = judgeName }},
					{"dataset", func() { j.Dataset = dsName }},
					{"runs", func() { j.Runs = runs }},
					{"retries", func() { j.Retries = retries }},
					{"max-tokens", func() { j.MaxTokens = maxToks }},
					{"temperature", func() { j.Temperature = &temperature }},
					{"seed", func() { j.Seed = &seed }},
					{"out", func() { j.Out = resolvePath(st, out) }},
				} {
					if fl.Changed(o.flag) {
						o.set()
					}
				}
				if j.LLM == "" || j.Judge == "" || j.Out == "" {
					return UsageErrorf("%s has no reference block: declare reference \"name\" { llm = plugin.x, judge = plugin.y, dataset = dataset.z }, "+
						"or give --llm PLUGIN, --judge PLUGIN and --out DIR", args[0])
				}
			}
			s, err := newStarter(st, f)
			if err != nil {
				return err
			}
			for _, j := range jobs {
				if len(jobs) > 1 {
					fmt.Fprintf(st.Stdout, "reference %s:\n", j.Name)
				}
				res, err := app.RunReference(st.Ctx, s, args[0], j, newUI(st))
				if err != nil {
					if j.Name != "" {
						err = fmt.Errorf("reference %q: %w", j.Name, err)
					}
					return reported(st, f, args[0], err)
				}
				printReference(st, res)
			}
			return nil
		},
	}
	addVarFlag(cmd, &vars)
	fl := cmd.Flags()
	fl.StringVar(&refName, "reference", "", "run only this reference block (default: every reference block of the file)")
	fl.StringVar(&llmName, "llm", "", "the plugin block of the llm that decides (overrides the block's llm)")
	fl.StringVar(&judgeName, "judge", "", "the plugin block of the judge that grades answers to T (overrides the block's judge)")
	fl.StringVar(&dsName, "dataset", "", "the dataset block (default: the block's, else the file's only one)")
	fl.IntVar(&runs, "runs", 1, "how many times to ask; with 2 or more, agreement between the first two runs is reported")
	fl.IntVar(&retries, "retries", reference.DefaultRetries, "how many more times to ask when a reply does not parse")
	fl.IntVar(&maxToks, "max-tokens", 0, "the most tokens per reply (0: the plugin's default)")
	fl.Float64Var(&temperature, "temperature", 0, "sampling temperature (default: the block's, else the plugin's)")
	fl.Int64Var(&seed, "seed", 0, "sampling seed passed to the llm (default: the block's, else none)")
	fl.StringVar(&out, "out", "", "the directory for reference.json and reference.md (overrides the block's out)")
	return cmd
}

func printReference(st *State, r *app.ReferenceResult) {
	res := r.Result
	for i, run := range res.Runs {
		for _, e := range run.Summary.Entries {
			fmt.Fprintf(st.Stdout, "run %d %-9s response %s  accuracy %s  silence %s  unparseable %d/%d\n", i+1, e.Condition,
				shortRate(e.Response.K, e.Response.N), shortRate(e.Accuracy.K, e.Accuracy.N), shortRate(e.Silence.K, e.Silence.N), e.Unparseable, e.Decisions)
		}
		m := run.Summary.Paired.Response
		fmt.Fprintf(st.Stdout, "run %d paired (%d pairs): explicit %.3f implicit %.3f b=%d c=%d p=%.3g\n", i+1,
			run.Summary.Paired.Pairs, m.RateFirst, m.RateSecond, m.B, m.C, m.P)
	}
	if g := res.Agreement; g != nil {
		fmt.Fprintf(st.Stdout, "agreement between runs 1 and 2: %.1f%% (%d/%d decisions)\n", 100*g.Rate, g.Agree, g.Turns)
	}
	fmt.Fprintf(st.Stdout, "wrote %s and %s\n", filepath.Join(r.Out, reference.JSONFile), filepath.Join(r.Out, reference.MarkdownFile))
}

func shortRate(k, n int) string {
	if n == 0 {
		return "n/a (n=0)"
	}
	return fmt.Sprintf("%.3f (%d/%d)", float64(k)/float64(n), k, n)
}
