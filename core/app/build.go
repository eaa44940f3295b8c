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
)

// BuildResult is what BuildDataset did.
type BuildResult struct {
	Block   *config.Dataset
	Dataset *dataset.Dataset
	Report  construct.Report
}

// BuildDataset builds one dataset block of a checked run file: it reads, generates or
// asks an llm plugin for the scripts, synthesises each distinct turn once through the
// tts plugin (clips already built are reused) and saves the dataset. It is what `build`
// does for each block, and what `run` does first. Scripts that break the rules are a
// *ProblemsError listing every violation.
func BuildDataset(ctx context.Context, s *pluginstart.Starter, ds *config.Dataset, ui UI) (*BuildResult, error) {
	scripts, gen, err := datasetScripts(ctx, s, ds)
	if err != nil {
		return nil, err
	}
	p, err := startBlock(ctx, s, ds.TTS, fmt.Errorf("dataset %q: tts plugin %q is not declared", ds.Name, ds.TTS))
	if err != nil {
		return nil, err
	}
	defer p.Kill()
	tts, err := p.TTS()
	if err != nil {
		return nil, fmt.Errorf("dataset %q: plugin %q: %w", ds.Name, ds.TTS, err)
	}
	preamble := ""
	if ds.Preamble != "" && ds.Preamble != "default" {
		raw, err := os.ReadFile(ds.Preamble)
		if err != nil {
			return nil, fmt.Errorf("dataset %q: preamble: %w", ds.Name, err)
		}
		preamble = strings.Join(strings.Fields(string(raw)), " ")
		if preamble == "" {
			return nil, fmt.Errorf("dataset %q: preamble file %s is empty", ds.Name, ds.Preamble)
		}
	}
	spec := construct.BuildSpec{
		Name: ds.Name, Out: ds.Out, Scenarios: scripts, Generator: gen,
		TTS:      dataset.TTSInfo{Plugin: ds.TTS, Name: p.Info.Name, Version: p.Info.Version, Identity: p.Info.Identity},
		Voices:   ds.Voices,
		Preamble: preamble,
	}
	bar := ui.progress("synthesising", ds.Name, "clips")
	d, rep, err := construct.Build(ctx, spec, tts, bar)
	bar.Finish(err == nil)
	if err != nil {
		var ve *construct.ViolationsError
		if errors.As(err, &ve) {
			pe := &ProblemsError{}
			for _, v := range ve.Violations {
				pe.Problems = append(pe.Problems, v.String())
			}
			return nil, pe
		}
		return nil, fmt.Errorf("dataset %q: %w", ds.Name, err)
	}
	res := &BuildResult{Block: ds, Dataset: d, Report: rep}
	if ui.Built != nil {
		ui.Built(res)
	}
	return res, nil
}

// datasetScripts reads, generates or asks an LLM for the dataset's scenario scripts.
func datasetScripts(ctx context.Context, s *pluginstart.Starter, ds *config.Dataset) ([]dataset.Scenario, dataset.Generator, error) {
	f := s.File
	if ds.Generate == nil {
		d, vs, err := dataset.ValidatePath(ds.Scenarios)
		if err != nil {
			return nil, dataset.Generator{}, fmt.Errorf("dataset %q: %w", ds.Name, err)
		}
		if script := scriptViolations(vs); len(script) > 0 {
			pe := &ProblemsError{Summary: fmt.Sprintf("dataset %q: %d violations in %s; fix them, then build again", ds.Name, len(script), d.File)}
			for _, v := range script {
				pe.Problems = append(pe.Problems, v.String())
			}
			return nil, dataset.Generator{}, pe
		}
		rel := ds.Scenarios
		if r, err := filepath.Rel(f.Dir, ds.Scenarios); err == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
		return d.Scenarios, dataset.Generator{Kind: "file", Source: filepath.ToSlash(rel)}, nil
	}
	g := ds.Generate
	seed := g.Seed
	switch g.Generator {
	case "llm":
		p, err := startBlock(ctx, s, g.LLM, fmt.Errorf("dataset %q: llm plugin %q is not declared", ds.Name, g.LLM))
		if err != nil {
			return nil, dataset.Generator{}, err
		}
		defer p.Kill()
		llm, err := p.LLM()
		if err != nil {
			return nil, dataset.Generator{}, fmt.Errorf("dataset %q: plugin %q: %w", ds.Name, g.LLM, err)
		}
		scs, id, err := construct.GenerateLLM(ctx, llm, construct.LLMSpec{Pairs: g.Pairs, Seed: seed, FourSpeakerShare: g.FourSpeakerShare})
		if err != nil {
			return nil, dataset.Generator{}, fmt.Errorf("dataset %q: %w", ds.Name, err)
		}
		id["llm_plugin"] = g.LLM
		for k, v := range p.Info.Identity {
			id["llm_"+k] = v
		}
		return scs, dataset.Generator{Kind: "llm", Seed: &seed, Identity: id}, nil
	default:
		scs, err := construct.Generate(construct.GenerateSpec{Pairs: g.Pairs, Seed: seed, FourSpeakerShare: g.FourSpeakerShare})
		if err != nil {
			return nil, dataset.Generator{}, fmt.Errorf("dataset %q: %w", ds.Name, err)
		}
		return scs, dataset.Generator{Kind: "procedural", Seed: &seed, Identity: map[string]string{"version": construct.GeneratorVersion}}, nil
	}
}

// scriptViolations keeps the violations of the scripts themselves: the clips and the
// preamble of a source that is itself a built dataset are not a build's concern.
func scriptViolations(vs []dataset.Violation) []dataset.Violation {
	var script []dataset.Violation
	for _, v := range vs {
		switch v.Rule {
		case dataset.RuleClipMissing, dataset.RuleClipUnreadable, dataset.RuleClipDuration,
			dataset.RuleClipFormat, dataset.RuleClipHash, dataset.RuleClipTooLong,
			dataset.RulePreamble, dataset.RuleManifestHash, dataset.RuleManifestCounts:
		default:
			script = append(script, v)
		}
	}
	return script
}
