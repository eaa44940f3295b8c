package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/vad"
)

// EvaluateOptions are what the command line adds to an evaluation block.
type EvaluateOptions struct {
	// Vars are the --var flags the run file was loaded with; run.json keeps them, so
	// that `score RUN_DIR` loads it the same way.
	Vars []string
	// Shard plays a deterministic slice only (store.All: everything).
	Shard store.Shard
	// FrameDeadline is the frame_timeout of every model plugin block that sets none
	// (0: the plugin host's default).
	FrameDeadline time.Duration
	// Score: score and report after playing (never for a shard: scoring waits for merge).
	Score bool
	// Harness is the build that runs, for the manifest.
	Harness provenance.Harness
}

// PlayResult is what the evaluation loop did.
type PlayResult struct {
	Evaluation string
	Out        string
	// Models in the evaluation block's order; Counts[i] is Models[i]'s (nil when the loop
	// stopped before counting it).
	Models []string
	Counts []*evaluate.Counts
	Total  evaluate.Counts
	// Elapsed is the wall time the loop took, for people; nothing depends on it.
	Elapsed time.Duration
}

// AllReused: every conversation was already in the store, so no model session started.
func (r *PlayResult) AllReused() bool {
	return r.Total.Planned > 0 && r.Total.Reused == r.Total.Planned
}

// EvaluateResult is what Evaluate did; on error, the stages that finished are filled.
type EvaluateResult struct {
	Build *BuildResult
	Play  *PlayResult
	Score *ScoreResult // nil unless scored
}

// Evaluate runs one evaluation block: it builds the dataset (clips already built are
// reused), opens the VAD, starts every model plugin the checked way, creates or resumes
// the run store (refusing a directory that holds another run), plays every conversation
// not yet finished, and, with opts.Score, scores and reports. An error after the store
// was opened says that finished conversations are kept and how to resume.
func Evaluate(ctx context.Context, s *pluginstart.Starter, ev *config.Evaluation, opts EvaluateOptions, ui UI) (*EvaluateResult, error) {
	f := s.File
	res := &EvaluateResult{}
	dsBlock := f.Dataset(ev.Dataset)
	if dsBlock == nil {
		return res, fault.Deterministicf("evaluation %q: dataset %q is not declared", ev.Name, ev.Dataset)
	}
	built, err := BuildDataset(ctx, s, dsBlock, ui)
	if err != nil {
		return res, err
	}
	res.Build = built
	ds := built.Dataset

	det, err := vad.Open(vad.Options{Model: ev.VAD.Model})
	if err != nil {
		return res, fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	defer det.Close()

	if opts.FrameDeadline > 0 {
		for _, name := range ev.Models {
			if b := f.Plugin(name); b != nil && b.Spec.FrameTimeout == 0 {
				b.Spec.FrameTimeout = opts.FrameDeadline
			}
		}
	}
	s = s.WithLogDir(filepath.Join(ev.Out, "logs"))
	models, started, err := startModels(ctx, s, ev)
	defer killAll(started)
	if err != nil {
		return res, err
	}

	shard := opts.Shard
	if shard.Count == 0 {
		shard = store.All
	}
	lopts := evaluate.Options{
		Params: ev.Protocol, VAD: ev.VAD, Detector: det, Seed: ev.Seed,
		// The deadlines are the plugin blocks' (pluginhost enforces them and kills a
		// wedged plugin, which the loop then restarts).
		Shard: shard, Concurrency: ev.PlayConcurrency(), Progress: ui.PlayProgress,
		Logger: ui.Logger,
	}
	man, err := evaluate.NewManifest(ev.Name, ds, models, lopts)
	if err != nil {
		return res, fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	man.Harness = opts.Harness
	st, err := openOrCreateStore(ev.Out, man)
	if err != nil {
		return res, fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	if err := writeJSONFile(filepath.Join(st.Dir(), RunInfoFile), RunInfo{RunFile: f.Path, Evaluation: ev.Name, Vars: opts.Vars}); err != nil {
		return res, err
	}

	// Scoring overlaps playing: each conversation is scored as soon as it is played
	// (evaluate.ScoreEarly), and the scoring after playing finds it done. When the
	// scorers cannot start now, playing goes on and the scoring after it says why.
	var (
		scorers *scorerPlugins
		early   *evaluate.Early
	)
	if opts.Score && shard.Count <= 1 {
		if scorers, err = startScorers(ctx, s, ev, ev.Judge); err == nil {
			defer scorers.kill()
			early = evaluate.ScoreEarly(ctx, st, scorers.scorers, evaluate.ScoreOptions{
				Params: ev.Protocol, VAD: ev.VAD, Detector: det, Gold: goldAnswers(ds)})
			lopts.Played = early.Add
		}
	}
	ui.notef("evaluation %s: %s\n", ev.Name, concurrencyNote(lopts.Concurrency, models))
	began := time.Now()
	sum, runErr := evaluate.Run(ctx, ds, models, st, lopts)
	scoredEarly := 0
	if early != nil {
		scoredEarly = early.Wait()
	}
	play := &PlayResult{Evaluation: ev.Name, Out: ev.Out, Total: sum.Total, Elapsed: time.Since(began)}
	for _, m := range models {
		play.Models = append(play.Models, m.Name)
		play.Counts = append(play.Counts, sum.Models[m.Name])
	}
	res.Play = play
	if ui.Played != nil {
		ui.Played(play)
	}
	killAll(started)
	started = nil
	if runErr != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("evaluation %q interrupted; finished conversations are kept in %s: run the same command again to resume", ev.Name, ev.Out)
		}
		return res, fmt.Errorf("evaluation %q stopped: %w (finished conversations are kept in %s; run again to resume)", ev.Name, runErr, ev.Out)
	}
	if !opts.Score || shard.Count > 1 {
		return res, nil
	}
	if scorers == nil {
		res.Score, err = scoreStore(ctx, s, ev, st, det, ev.Judge, ui)
	} else {
		res.Score, err = scoreWith(ctx, f, ev, st, det, scorers, scoredEarly, ui)
	}
	return res, err
}

// concurrencyNote says how many conversations play at once: "playing up to 2
// conversations at once (silent 4, cascade 2)".
func concurrencyNote(total int, models []*evaluate.Model) string {
	per := make([]string, len(models))
	for i, m := range models {
		per[i] = fmt.Sprintf("%s %d", m.Name, evaluate.ModelConcurrency(m))
	}
	unit := "conversations"
	if total == 1 {
		unit = "conversation"
	}
	return fmt.Sprintf("playing up to %d %s at once (per model: %s)", total, unit, strings.Join(per, ", "))
}

// startModels starts every model plugin of ev the checked way; on error it returns those
// already started too, for the caller to kill.
func startModels(ctx context.Context, s *pluginstart.Starter, ev *config.Evaluation) ([]*evaluate.Model, []*pluginstart.Plugin, error) {
	var (
		models  []*evaluate.Model
		started []*pluginstart.Plugin
	)
	for _, name := range ev.Models {
		p, err := startBlock(ctx, s, name, fmt.Errorf("evaluation %q: model plugin %q is not declared", ev.Name, name))
		if err != nil {
			return models, started, err
		}
		started = append(started, p)
		m, err := p.Model()
		if err != nil {
			return models, started, fmt.Errorf("evaluation %q: %w", ev.Name, err)
		}
		models = append(models, &evaluate.Model{Name: name, Model: m, Client: p.Client, Info: p.Info, Hash: p.Hash, Config: p.Config})
	}
	return models, started, nil
}

// openOrCreateStore resumes the run in dir when its manifest matches, and refuses to mix
// two different runs in one directory. A rebuilt harness may resume.
func openOrCreateStore(dir string, man store.Manifest) (*store.Store, error) {
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); errors.Is(err, fs.ErrNotExist) {
		return store.Create(dir, man)
	}
	s, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	old := s.Manifest()
	old.Harness, man.Harness = provenance.Harness{}, provenance.Harness{}
	if diff := store.Diff(old, man); len(diff) > 0 {
		return nil, fault.Deterministicf("%s holds a run with a different %s; set another out directory in the evaluation block, or remove %s to start over",
			dir, strings.Join(diff, ", "), dir)
	}
	return s, nil
}
