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
	"github.com/duplexmpe/duplexmpe/core/progress"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// BuildResult is what BuildDataset did.
type BuildResult struct {
	Block   *config.Dataset
	Dataset *dataset.Dataset
	Report  construct.Report
	// Started: the tts plugin ran (a clip was synthesised, or nothing recorded it yet).
	Started bool
	// Warnings are the pair differences the protocol allows (dataset.Warnings: the T
	// position bucket, N4 edits); BuildDataset also prints them through UI.Notef.
	Warnings []dataset.Violation
}

// BuildDataset builds one dataset block of a checked run file: it reads, generates or
// asks an llm plugin for the scripts, synthesises each distinct turn once through the
// tts plugin (clips already built are reused) and saves the dataset. It is what `build`
// does for each block, and what `run` does first. Scripts that break the rules are a
// *ProblemsError listing every violation.
//
// The tts plugin starts only when a clip is to be synthesised: what it described and
// its voices are recorded in the dataset's plugins/ directory (pluginstart.Known), so a
// rebuild with every clip in place starts nothing.
func BuildDataset(ctx context.Context, s *pluginstart.Starter, ds *config.Dataset, ui UI) (*BuildResult, error) {
	return BuildDatasetPairs(ctx, s, ds, 0, ui)
}

// BuildDatasetPairs is BuildDataset of the first pairs pairs only (all when pairs <= 0):
// what `run --limit` builds (construct.BuildSpec.Pairs). The result's Dataset then
// holds only those pairs, and Report.Pairs says how many the whole set has.
func BuildDatasetPairs(ctx context.Context, s *pluginstart.Starter, ds *config.Dataset, pairs int, ui UI) (*BuildResult, error) {
	scripts, gen, warnings, err := datasetScripts(ctx, s, ds)
	if err != nil {
		return nil, err
	}
	if ui.Notef != nil {
		for _, w := range warnings {
			ui.Notef("dataset %q: %s\n", ds.Name, w.String())
		}
	}
	b := s.File.Plugin(ds.TTS)
	if b == nil {
		return nil, fmt.Errorf("dataset %q: tts plugin %q is not declared", ds.Name, ds.TTS)
	}
	tts, err := s.WithIdentities(filepath.Join(ds.Out, IdentitiesDir)).Know(ctx, b)
	if err != nil {
		return nil, err
	}
	defer tts.Kill()
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
	var pool *dataset.VoicePool
	if ds.VoicePool != nil {
		pool = &dataset.VoicePool{F0: ds.VoicePool, Sex: ds.VoiceSex, Seed: ds.VoiceSeed, MinSemitones: ds.VoiceMinSemitones}
	}
	var (
		acoustics *construct.RoomSpec
		reuse     []string
	)
	p, inRoom, err := ds.Acoustics()
	if err != nil {
		return nil, err
	}
	if inRoom {
		acoustics = &construct.RoomSpec{Preset: p, Seed: ds.Room.Seed, Simulator: RoomSimulator(s.File.Dir)}
		if ds.Room.Reuse != "" {
			reuse = append(reuse, ds.Room.Reuse)
		}
	}
	build := func(synth sdk.TTS, count *progress.Counter) (*dataset.Dataset, construct.Report, error) {
		spec := construct.BuildSpec{
			Name: ds.Name, Out: ds.Out, Scenarios: scripts, Generator: gen,
			TTS:    dataset.TTSInfo{Plugin: ds.TTS, Name: tts.Info.Name, Version: tts.Info.Version, Identity: tts.Info.Identity},
			Voices: ds.Voices, VoicePool: pool,
			Preamble: preamble,
			// The narrator and the loudness target of the run file's dataset block.
			PreambleVoice: ds.Narrator,
			Loudness:      ds.Loudness,
			Pairs:         pairs,
			Room:          acoustics,
			ReuseFrom:     reuse,
		}
		return construct.Build(ctx, spec, synth, count)
	}
	var (
		d   *dataset.Dataset
		rep construct.Report
	)
	if tts.FromRecord && tts.Voices != nil {
		// Every clip may be there already: try without the plugin.
		d, rep, err = build(recordedTTS{tts.Voices}, nil)
	}
	if !tts.FromRecord || tts.Voices == nil || errors.Is(err, errNeedsTTS) {
		d, rep, err = buildWithPlugin(ctx, tts, ds, build, ui)
	}
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
	res := &BuildResult{Block: ds, Dataset: d, Report: rep, Started: tts.Started(), Warnings: warnings}
	if ui.Built != nil {
		ui.Built(res)
	}
	return res, nil
}

// RoomSimulator is the command that simulates a room's impulse responses:
// $DUPLEXMPE_ROOM_SIMULATOR, else the first tools/rooms/run.sh in dir (the run file's
// directory) or a directory above it, else above the duplexmpe executable (bin/ of the
// repository); nil when there is none.
func RoomSimulator(dir string) []string {
	if p := os.Getenv("DUPLEXMPE_ROOM_SIMULATOR"); p != "" {
		return []string{p}
	}
	starts := []string{dir}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, d := range starts {
		for d != "" {
			p := filepath.Join(d, "tools", "rooms", "run.sh")
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return []string{p}
			}
			up := filepath.Dir(d)
			if up == d {
				break
			}
			d = up
		}
	}
	return nil
}

// buildWithPlugin starts the tts plugin, records its voices, and builds with it.
func buildWithPlugin(ctx context.Context, tts *pluginstart.Known, ds *config.Dataset, build func(sdk.TTS, *progress.Counter) (*dataset.Dataset, construct.Report, error), ui UI) (*dataset.Dataset, construct.Report, error) {
	if _, err := tts.Start(ctx); err != nil {
		return nil, construct.Report{}, err
	}
	synth, err := tts.Plugin.TTS()
	if err != nil {
		return nil, construct.Report{}, fmt.Errorf("plugin %q: %w", ds.TTS, err)
	}
	voices, err := synth.Voices(ctx)
	if err != nil {
		return nil, construct.Report{}, fmt.Errorf("plugin %q: listing its voices: %w", ds.TTS, err)
	}
	if err := tts.SetVoices(voices); err != nil {
		return nil, construct.Report{}, err
	}
	verb := "synthesising"
	if _, inRoom, _ := ds.Acoustics(); inRoom {
		verb = "building" // most clips are simulated from the clean set's, not synthesised
	}
	count := ui.counter(verb, ds.Name, "clips")
	d, rep, err := build(synth, count)
	count.Finish(err == nil)
	return d, rep, err
}

// errNeedsTTS: a clip is to be synthesised, so the tts plugin must run.
var errNeedsTTS = errors.New("a clip needs the tts plugin")

// recordedTTS answers Voices from the plugin's identity record and refuses to
// synthesise, so that a build whose clips are all there runs no plugin.
type recordedTTS struct{ voices []sdk.Voice }

func (r recordedTTS) Voices(context.Context) ([]sdk.Voice, error) { return r.voices, nil }

func (recordedTTS) Synthesize(context.Context, string, string) (sdk.Audio, error) {
	return sdk.Audio{}, errNeedsTTS
}

// datasetScripts reads, generates or asks an LLM for the dataset's scenario scripts, with
// the pair differences the protocol allows as warnings (docs/protocol.md section 2.3).
func datasetScripts(ctx context.Context, s *pluginstart.Starter, ds *config.Dataset) ([]dataset.Scenario, dataset.Generator, []dataset.Violation, error) {
	f := s.File
	if ds.Generate == nil {
		d, vs, err := dataset.ValidatePath(ds.Scenarios)
		if err != nil {
			return nil, dataset.Generator{}, nil, fmt.Errorf("dataset %q: %w", ds.Name, err)
		}
		if script := scriptViolations(vs); len(script) > 0 {
			pe := &ProblemsError{Summary: fmt.Sprintf("dataset %q: %d violations in %s; fix them, then build again", ds.Name, len(script), d.File)}
			for _, v := range script {
				pe.Problems = append(pe.Problems, v.String())
			}
			return nil, dataset.Generator{}, nil, pe
		}
		rel := ds.Scenarios
		if r, err := filepath.Rel(f.Dir, ds.Scenarios); err == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
		gen := dataset.Generator{Kind: "file", Source: filepath.ToSlash(rel)}
		// A release split, byte for byte: the dataset is named by its release.
		if r, sp := dataset.ReleaseOf(d.File, d.ContentHash); r != nil {
			gen.Identity = dataset.ReleaseIdentity(r, sp)
		}
		return d.Scenarios, gen, dataset.Warnings(d), nil
	}
	g := ds.Generate
	seed := g.Seed
	switch g.Generator {
	case "llm":
		p, err := startBlock(ctx, s, g.LLM, fmt.Errorf("dataset %q: llm plugin %q is not declared", ds.Name, g.LLM))
		if err != nil {
			return nil, dataset.Generator{}, nil, err
		}
		defer p.Kill()
		llm, err := p.LLM()
		if err != nil {
			return nil, dataset.Generator{}, nil, fmt.Errorf("dataset %q: plugin %q: %w", ds.Name, g.LLM, err)
		}
		scs, id, err := construct.GenerateLLM(ctx, llm, construct.LLMSpec{Pairs: g.Pairs, Seed: seed, FourSpeakerShare: g.FourSpeakerShare})
		if err != nil {
			return nil, dataset.Generator{}, nil, fmt.Errorf("dataset %q: %w", ds.Name, err)
		}
		id["llm_plugin"] = g.LLM
		for k, v := range p.Info.Identity {
			id["llm_"+k] = v
		}
		return scs, dataset.Generator{Kind: "llm", Seed: &seed, Identity: id}, dataset.PairWarnings(scs), nil
	default:
		scs, err := construct.Generate(construct.GenerateSpec{Pairs: g.Pairs, Seed: seed, FourSpeakerShare: g.FourSpeakerShare})
		if err != nil {
			return nil, dataset.Generator{}, nil, fmt.Errorf("dataset %q: %w", ds.Name, err)
		}
		return scs, dataset.Generator{Kind: "procedural", Seed: &seed, Identity: map[string]string{"version": construct.GeneratorVersion}}, dataset.PairWarnings(scs), nil
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
