package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/reference"
	prompt "github.com/duplexmpe/duplexmpe/prompts/reference"
	"github.com/duplexmpe/duplexmpe/sdk"
)

func init() { register(newReferenceCmd) }

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
			jobs, err := referenceJobs(f, args[0], refName)
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
			for _, j := range jobs {
				if len(jobs) > 1 {
					fmt.Fprintf(st.Stdout, "reference %s:\n", j.Name)
				}
				ds, err := referenceDataset(f, args[0], j.Dataset)
				if err != nil {
					return err
				}
				opts := reference.Options{Duty: construct.DefaultPreamble, Retries: j.Retries, MaxTokens: j.MaxTokens,
					Temperature: j.Temperature, Seed: j.Seed}
				if d, err := referenceDuty(ds.block, ds.data); err != nil {
					return err
				} else if d != "" {
					opts.Duty = d
				}
				if err := runReference(st, f, args[0], ds, j.LLM, j.Judge, j.Runs, opts, j.Out); err != nil {
					if j.Name != "" {
						err = fmt.Errorf("reference %q: %w", j.Name, err)
					}
					return err
				}
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

// referenceJobs are the reference runs a command does: the block --reference names, or
// every reference block of the file, or, in a file without any, one made of flags alone
// (its settings start at the defaults). Copies, so flags can override them.
func referenceJobs(f *config.File, file, name string) ([]config.Reference, error) {
	if name != "" {
		r := f.Reference(name)
		if r == nil {
			var names []string
			for _, r := range f.References {
				names = append(names, r.Name)
			}
			hint := "declare it with reference \"" + name + "\" { ... }"
			if s := config.Suggest(name, names); s != "" {
				hint = fmt.Sprintf("did you mean %q?", s)
			} else if len(names) > 0 {
				hint = "the file declares " + strings.Join(names, ", ")
			}
			return nil, UsageErrorf("--reference %q: %s has no such reference block; %s", name, file, hint)
		}
		return []config.Reference{*r}, nil
	}
	if len(f.References) == 0 {
		return []config.Reference{{Runs: 1, Retries: reference.DefaultRetries}}, nil
	}
	var jobs []config.Reference
	for _, r := range f.References {
		jobs = append(jobs, *r)
	}
	return jobs, nil
}

// referenceDirFor is the directory of the text reference run an evaluation shows beside
// its speech models (its reference = reference.x): the block's out, when its
// reference.json exists. Without one it says on w how to make it and returns "", so
// that scoring still writes the report.
func referenceDirFor(w io.Writer, f *config.File, ev *config.Evaluation) string {
	if ev.Reference == "" {
		return ""
	}
	r := f.Reference(ev.Reference)
	if r == nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(r.Out, reference.JSONFile)); err != nil {
		fmt.Fprintf(w, "note: evaluation %q shows reference %q, which has no result yet (%s); run `duplexmpe reference %s --reference %s`, then `duplexmpe report` again\n",
			ev.Name, r.Name, filepath.Join(r.Out, reference.JSONFile), f.Path, r.Name)
		return ""
	}
	return r.Out
}

type referenceData struct {
	block *config.Dataset
	data  *dataset.Dataset
}

// referenceDataset loads the scenarios of a dataset block: the built set when there is
// one, else the block's scenarios.
func referenceDataset(f *config.File, file, name string) (referenceData, error) {
	var block *config.Dataset
	switch {
	case name != "":
		if block = f.Dataset(name); block == nil {
			return referenceData{}, UsageErrorf("--dataset %q: %s has no such dataset block", name, file)
		}
	case len(f.Datasets) == 1:
		block = f.Datasets[0]
	case len(f.Datasets) == 0:
		return referenceData{}, fmt.Errorf("%s has no dataset block; add dataset \"name\" { scenarios = ..., tts = plugin.x }", file)
	default:
		return referenceData{}, UsageErrorf("%s has %d dataset blocks; choose one with --dataset NAME", file, len(f.Datasets))
	}
	src := block.Out
	if _, err := os.Stat(filepath.Join(block.Out, dataset.ManifestFile)); err != nil {
		if block.Scenarios == "" {
			return referenceData{}, fmt.Errorf("dataset %q is generated and not built yet (%s has no %s); run `duplexmpe build %s` first",
				block.Name, block.Out, dataset.ManifestFile, file)
		}
		src = block.Scenarios
	}
	d, vs, err := dataset.ValidatePath(src)
	if err != nil {
		return referenceData{}, fmt.Errorf("dataset %q: %w", block.Name, err)
	}
	// Only the scripts matter here: clips and the preamble audio are not used.
	var bad []string
	for _, v := range vs {
		switch v.Rule {
		case dataset.RuleClipMissing, dataset.RuleClipUnreadable, dataset.RuleClipDuration,
			dataset.RulePreamble, dataset.RuleManifestHash, dataset.RuleManifestCounts:
		default:
			bad = append(bad, v.String())
		}
	}
	if len(bad) > 0 {
		return referenceData{}, fmt.Errorf("dataset %q: %d violations; fix them (`duplexmpe dataset validate %s`):\n%s",
			block.Name, len(bad), src, strings.Join(bad, "\n"))
	}
	return referenceData{block: block, data: d}, nil
}

// referenceDuty is the duty instruction the speech models hear: the built dataset's
// preamble text, else the block's preamble file; "" means the default preamble.
func referenceDuty(block *config.Dataset, d *dataset.Dataset) (string, error) {
	if d.Manifest != nil && d.Manifest.Preamble != nil && d.Manifest.Preamble.Text != "" {
		return d.Manifest.Preamble.Text, nil
	}
	if block.Preamble == "" || block.Preamble == "default" {
		return "", nil
	}
	raw, err := os.ReadFile(block.Preamble)
	if err != nil {
		return "", fmt.Errorf("dataset %q: preamble: %w", block.Name, err)
	}
	return strings.Join(strings.Fields(string(raw)), " "), nil
}

func runReference(st *State, f *config.File, file string, ds referenceData, llmName, judgeName string, runs int, opts reference.Options, out string) error {
	ctx := st.Ctx
	logger := pluginLogger(st)
	start := func(name, kind string) (reference.Plugin, any, func(), error) {
		block := f.Plugin(name)
		if block == nil {
			return reference.Plugin{}, nil, nil, UsageErrorf("--%s %q: %s declares no such plugin block", kind, name, file)
		}
		c, err := startConfigured(st, ctx, f, block, logger)
		if err != nil {
			return reference.Plugin{}, nil, nil, err
		}
		info, err := c.Describe(ctx)
		if err != nil {
			c.Kill()
			return reference.Plugin{}, nil, nil, err
		}
		p := reference.Plugin{Name: name, Plugin: info.Name, Version: info.Version, Identity: info.Identity}
		var impl any
		if kind == sdk.KindLLM {
			impl, err = c.LLM()
		} else {
			impl, err = c.Judge()
		}
		if err != nil {
			c.Kill()
			return reference.Plugin{}, nil, nil, fmt.Errorf("plugin %q: %w", name, err)
		}
		return p, impl, c.Kill, nil
	}
	llmInfo, llm, killLLM, err := start(llmName, sdk.KindLLM)
	if err != nil {
		return err
	}
	defer killLLM()
	judgeInfo, judge, killJudge, err := start(judgeName, sdk.KindJudge)
	if err != nil {
		return err
	}
	defer killJudge()

	hash, _ := prompt.Hash(prompt.Decide)
	res := reference.Result{FormatVersion: reference.FormatVersion, Dataset: ds.block.Name,
		LLM: llmInfo, Judge: judgeInfo, Prompt: prompt.Decide, PromptHash: hash, Options: opts}
	if ds.data.Manifest != nil {
		res.DatasetHash = ds.data.Manifest.ContentHash
	}
	scs := ds.data.Scenarios
	for i := range runs {
		bar := newCountBar(ctx, st.Stderr, "deciding", fmt.Sprintf("%s (run %d/%d)", ds.block.Name, i+1, runs), "scenarios")
		bar.Start(len(scs))
		decisions, err := reference.Run(ctx, llm.(sdk.LLM), judge.(sdk.Judge), scs, opts, func() { bar.Clip(true) })
		bar.finish(err == nil)
		res.Runs = append(res.Runs, reference.RunResult{Decisions: decisions, Summary: reference.Summarize(decisions)})
		if err != nil {
			// Keep what was decided: a partial run is written, clearly marked by its count.
			if werr := reference.Write(out, res); werr != nil {
				err = errors.Join(err, werr)
			}
			return fmt.Errorf("reference run %d stopped after %d decisions (written to %s): %w", i+1, len(decisions), out, err)
		}
	}
	if len(res.Runs) >= 2 {
		g := reference.Agree(res.Runs[0].Decisions, res.Runs[1].Decisions)
		res.Agreement = &g
	}
	if err := reference.Write(out, res); err != nil {
		return err
	}
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
	fmt.Fprintf(st.Stdout, "wrote %s and %s\n", filepath.Join(out, reference.JSONFile), filepath.Join(out, reference.MarkdownFile))
	return nil
}

func shortRate(k, n int) string {
	if n == 0 {
		return "n/a (n=0)"
	}
	return fmt.Sprintf("%.3f (%d/%d)", float64(k)/float64(n), k, n)
}
