package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/core/reference"
	prompt "github.com/duplexmpe/duplexmpe/prompts/reference"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// ReferenceJobs are the reference runs a command does: the block name names, or every
// reference block of the file, or, in a file without any, one made of flags alone (its
// settings start at the defaults). Copies, so flags can override them.
func ReferenceJobs(f *config.File, file, name string) ([]config.Reference, error) {
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
			return nil, usageErrorf("--reference %q: %s has no such reference block; %s", name, file, hint)
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

// ReferenceResult is what RunReference did.
type ReferenceResult struct {
	Result reference.Result
	Out    string
}

// RunReference runs one reference job of the run file f (named file on the command
// line): every turn of every scenario of its dataset to the llm plugin, the answers to T
// to the judge plugin, job.Runs times; it writes OUT/reference.json and reference.md. A
// run that stops is written as far as it got.
func RunReference(ctx context.Context, s *pluginstart.Starter, file string, job config.Reference, ui UI) (*ReferenceResult, error) {
	f := s.File
	ds, err := referenceDataset(f, file, job.Dataset)
	if err != nil {
		return nil, err
	}
	opts := reference.Options{Duty: construct.DefaultPreamble, Retries: job.Retries, MaxTokens: job.MaxTokens,
		Temperature: job.Temperature, Seed: job.Seed}
	if d, err := referenceDuty(ds.block, ds.data); err != nil {
		return nil, err
	} else if d != "" {
		opts.Duty = d
	}

	undeclared := func(flag, name string) error {
		return usageErrorf("--%s %q: %s declares no such plugin block", flag, name, file)
	}
	llmPlugin, err := startBlock(ctx, s, job.LLM, undeclared(sdk.KindLLM, job.LLM))
	if err != nil {
		return nil, err
	}
	defer llmPlugin.Kill()
	llm, err := llmPlugin.LLM()
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %w", job.LLM, err)
	}
	judgePlugin, err := startBlock(ctx, s, job.Judge, undeclared(sdk.KindJudge, job.Judge))
	if err != nil {
		return nil, err
	}
	defer judgePlugin.Kill()
	judge, err := judgePlugin.Judge()
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %w", job.Judge, err)
	}

	hash, _ := prompt.Hash(prompt.Decide)
	res := reference.Result{FormatVersion: reference.FormatVersion, Dataset: ds.block.Name,
		LLM: llmPlugin.Record(sdk.KindLLM), Judge: judgePlugin.Record(sdk.KindJudge),
		Prompt: prompt.Decide, PromptHash: hash, Options: opts}
	if ds.data.Manifest != nil {
		res.DatasetHash = ds.data.Manifest.ContentHash
	}
	scs := ds.data.Scenarios
	for i := range job.Runs {
		count := ui.counter("deciding", fmt.Sprintf("%s (run %d/%d)", ds.block.Name, i+1, job.Runs), "scenarios")
		count.Start(len(scs))
		decisions, err := reference.Run(ctx, llm, judge, scs, opts, func() { count.Add(1) })
		count.Finish(err == nil)
		res.Runs = append(res.Runs, reference.RunResult{Decisions: decisions, Summary: reference.Summarize(decisions)})
		if err != nil {
			// Keep what was decided: a partial run is written, clearly marked by its count.
			if werr := reference.Write(job.Out, res); werr != nil {
				err = errors.Join(err, werr)
			}
			return nil, fmt.Errorf("reference run %d stopped after %d decisions (written to %s): %w", i+1, len(decisions), job.Out, err)
		}
	}
	if len(res.Runs) >= 2 {
		g := reference.Agree(res.Runs[0].Decisions, res.Runs[1].Decisions)
		res.Agreement = &g
	}
	if err := reference.Write(job.Out, res); err != nil {
		return nil, err
	}
	return &ReferenceResult{Result: res, Out: job.Out}, nil
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
			return referenceData{}, usageErrorf("--dataset %q: %s has no such dataset block", name, file)
		}
	case len(f.Datasets) == 1:
		block = f.Datasets[0]
	case len(f.Datasets) == 0:
		return referenceData{}, fmt.Errorf("%s has no dataset block; add dataset \"name\" { scenarios = ..., tts = plugin.x }", file)
	default:
		return referenceData{}, usageErrorf("%s has %d dataset blocks; choose one with --dataset NAME", file, len(f.Datasets))
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
	for _, v := range scriptViolations(vs) {
		bad = append(bad, v.String())
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
