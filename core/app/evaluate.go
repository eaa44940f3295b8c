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
	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/core/progress"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/rundir"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// IdentitiesDir is where a run directory (and a dataset directory) keeps what its
// plugins described after Configure (pluginstart.Known), so that a run with nothing to
// do for a plugin never starts it.
const IdentitiesDir = store.PluginsDir

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
	// FreshIdentities forgets what the plugins described before (RUN_DIR/plugins), so
	// that every plugin the run names is started once and asked again: for plugins whose
	// identity depends on something their files and config do not show.
	FreshIdentities bool
	// IntoExisting lets a run into an out folder that holds files and is not a run
	// directory (rundir.CheckTarget refuses it otherwise).
	IntoExisting bool
	// Adopt lets a run into a run directory another run file made (checkOwner refuses
	// it otherwise): for the same run file, moved or renamed.
	Adopt bool
	// Limit, when above 0, plays only the first Limit pairs of the dataset (both
	// conditions of each, in the dataset's order): a smoke run. Only those pairs are
	// built (BuildDatasetPairs); the run is marked partial (RunInfo.Partial) until a run
	// without a limit plays the rest into the same directory, reusing what the partial
	// run played and every clip it built.
	Limit int
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
	// Plan is the run's plan as it stood before playing: what was reused, what was
	// played and why.
	Plan *evaluate.RunPlan
	// Repeats is the evaluation's repeats: every count is of plays, Repeats per
	// (model, conversation).
	Repeats int
	// Estimate is what playing the shard costs, from Plan (nil when it could not be
	// estimated).
	Estimate *PlanResult
	// Started names the plugin blocks the run started, in order; none when nothing was
	// to be played or scored.
	Started []string
	// Partial is set when run --limit left pairs of the dataset out.
	Partial *Partial
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

// Planned is an evaluation block resolved against its run directory: the dataset, every
// model's identity (from its record, or started), the items of the whole run and their
// state in the store. It is what `run` plays from, and what a `plan` command prints.
type Planned struct {
	Evaluation *config.Evaluation
	Build      *BuildResult
	// Models in the evaluation block's order; Known[i] is Models[i]'s plugin.
	Models []*evaluate.Model
	Known  []*pluginstart.Known
	// Items is every item of the run (all shards), Plan their states and reasons.
	Items []evaluate.Item
	Plan  *evaluate.RunPlan
	// Store is the run directory, nil when it does not exist yet.
	Store *store.Store
	// Partial is set when a limit left pairs of the dataset out (Build.Dataset then
	// holds only the pairs played).
	Partial *Partial

	opts evaluate.Options
}

// PlanEvaluation resolves ev: it builds the dataset (clips already built are reused),
// makes every model's identity known (pluginstart.Know: from the run directory's
// records, starting only a model that has none), plans every item and states each one
// against the run directory. It writes nothing in the run directory.
func PlanEvaluation(ctx context.Context, s *pluginstart.Starter, ev *config.Evaluation, opts EvaluateOptions, ui UI) (*Planned, error) {
	f := s.File
	dsBlock := f.Dataset(ev.Dataset)
	if dsBlock == nil {
		return nil, fault.Deterministicf("evaluation %q: dataset %q is not declared", ev.Name, ev.Dataset)
	}
	built, err := BuildDatasetPairs(ctx, s, dsBlock, opts.Limit, ui)
	if err != nil {
		return nil, err
	}
	pl := &Planned{Evaluation: ev, Build: built}
	if opts.Limit > 0 {
		pl.Build, pl.Partial = limitPairs(built, opts.Limit)
		if r := built.Report; pl.Partial == nil && r.Built < r.Pairs {
			pl.Partial = &Partial{Dataset: dsBlock.Name, Pairs: r.Built, OfPairs: r.Pairs}
		}
	}
	if opts.FreshIdentities {
		if err := pluginstart.ForgetIdentities(filepath.Join(ev.Out, IdentitiesDir)); err != nil {
			return nil, err
		}
	}
	if opts.FrameDeadline > 0 {
		for _, name := range ev.Models {
			if b := f.Plugin(name); b != nil && b.Spec.FrameTimeout == 0 {
				b.Spec.FrameTimeout = opts.FrameDeadline
			}
		}
	}
	s = runStarter(s, ev.Out)
	for _, name := range ev.Models {
		b := f.Plugin(name)
		if b == nil {
			pl.Kill()
			return nil, fmt.Errorf("evaluation %q: model plugin %q is not declared", ev.Name, name)
		}
		k, err := s.Know(ctx, b)
		if err != nil {
			pl.Kill()
			return nil, err
		}
		pl.Known = append(pl.Known, k)
		m := &evaluate.Model{Name: name}
		if err := setModel(m, k); err != nil {
			pl.Kill()
			return nil, fmt.Errorf("evaluation %q: %w", ev.Name, err)
		}
		pl.Models = append(pl.Models, m)
	}
	pl.opts = evaluate.Options{Params: ev.Protocol, VAD: ev.VAD, Seed: ev.Seed, Repeats: ev.Repeats, Concurrency: ev.PlayConcurrency()}
	if _, err := os.Stat(filepath.Join(ev.Out, store.ManifestFile)); err == nil {
		if pl.Store, err = store.Open(ev.Out); err != nil {
			pl.Kill()
			return nil, fmt.Errorf("evaluation %q: %w", ev.Name, err)
		}
	}
	if err := pl.replan(); err != nil {
		pl.Kill()
		return nil, fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	return pl, nil
}

// runStarter starts plugins for the run in dir: their logs in dir/logs, their identity
// records in dir/plugins.
func runStarter(s *pluginstart.Starter, dir string) *pluginstart.Starter {
	return s.WithLogDir(filepath.Join(dir, store.LogsDir)).WithIdentities(filepath.Join(dir, IdentitiesDir))
}

// setModel fills m from its plugin: what it described, and its model service once it
// runs.
func setModel(m *evaluate.Model, k *pluginstart.Known) error {
	m.Info, m.Hash, m.Config = k.Info, k.Hash, k.Config
	m.WallTime = k.Block.Spec.ConversationTimeout
	m.Model, m.Process = nil, nil
	if k.Plugin == nil {
		return nil
	}
	mod, err := k.Plugin.Model()
	if err != nil {
		return err
	}
	m.Model, m.Process = mod, k.Plugin.Client
	return nil
}

// replan plans every item again (after a model described itself anew) and states them.
func (pl *Planned) replan() error {
	items, err := evaluate.PlanAll(pl.Build.Dataset, pl.Models, pl.opts)
	if err != nil {
		return err
	}
	pl.Items = items
	pl.Plan, err = survey(pl.Store, items)
	return err
}

// toPlay counts the items of model that shard plays: not done in the store.
func (pl *Planned) toPlay(model string, shard store.Shard) int {
	n := 0
	for _, it := range pl.Plan.Items {
		if it.Model == model && it.State != store.StateDone && shard.Contains(it.ID) {
			n++
		}
	}
	return n
}

// startNeeded starts every model that has items to play in shard, so that all of them
// are configured before the first conversation plays. A model that describes itself
// otherwise than its record said gets its items planned again. It returns the names
// started.
func (pl *Planned) startNeeded(ctx context.Context, shard store.Shard) ([]string, error) {
	var started []string
	changed := false
	for i, m := range pl.Models {
		k := pl.Known[i]
		if pl.toPlay(m.Name, shard) == 0 || k.Started() {
			if k.Started() {
				started = append(started, m.Name)
			}
			continue
		}
		c, err := k.Start(ctx)
		if err != nil {
			return started, err
		}
		started = append(started, m.Name)
		changed = changed || c
		if err := setModel(m, k); err != nil {
			return started, err
		}
	}
	if changed {
		return started, pl.replan()
	}
	return started, nil
}

// Kill stops every model plugin that runs.
func (pl *Planned) Kill() {
	for _, k := range pl.Known {
		k.Kill()
	}
}

// Evaluate runs one evaluation block: it checks the config block of every plugin the
// evaluation uses against the plugin's schema (CheckEvaluationConfigs), plans the run (PlanEvaluation), starts the
// model plugins that have conversations to play and, when the run will be scored, the
// asr and judge plugins, all before the first conversation plays (a typo in the judge's
// config fails in seconds); checks the disk; records the run's manifest (the current
// plan); plays every conversation not yet finished; and, with opts.Score, scores and
// reports. A run with nothing to do starts no plugin. An error after the store was
// opened says that finished conversations are kept and how to resume.
func Evaluate(ctx context.Context, s *pluginstart.Starter, ev *config.Evaluation, opts EvaluateOptions, ui UI) (*EvaluateResult, error) {
	res := &EvaluateResult{}
	// Nothing is written before the out folder is known to be the run's own, and only
	// one writer works in it at a time.
	if err := rundir.CheckTarget(ev.Out, opts.IntoExisting); err != nil {
		return res, fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	// A config block that does not fit its plugin's schema is reported now, at its
	// line, not after the dataset is built.
	if err := CheckEvaluationConfigs(ctx, s, ev); err != nil {
		return res, err
	}
	lock, err := rundir.Acquire(ev.Out, rundir.Options{Create: true})
	if err != nil {
		return res, fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	defer lock.Release()
	noteStale(ui, lock)
	if err := checkOwner(ev.Out, s.File.Path, opts.Adopt); err != nil {
		return res, fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	shard := opts.Shard
	if shard.Count == 0 {
		shard = store.All
	}
	pl, err := PlanEvaluation(ctx, s, ev, opts, ui)
	if pl != nil {
		res.Build = pl.Build
	}
	if err != nil {
		return res, err
	}
	defer pl.Kill()
	ds := pl.Build.Dataset

	started, err := pl.startNeeded(ctx, shard)
	if err != nil {
		return res, err
	}
	s = runStarter(s, ev.Out)
	n := toPlay(pl, shard)
	scoring := opts.Score && shard.Count <= 1
	var asr, judge *pluginstart.Known
	var scorers evaluate.Scorers
	if scoring {
		asr, judge, err = knowScorers(ctx, s, ev)
		if err != nil {
			return res, err
		}
		defer asr.Kill()
		defer judge.Kill()
		// Conversations to play will be scored as they are saved: start the scorers
		// now, before the first one plays.
		if n > 0 {
			if scorers, _, err = (scoreJob{asr: asr, judge: judge}).startScorers(ctx); err != nil {
				return res, err
			}
		}
	}
	// The estimate `run` prints is the one the disk is checked against.
	est, estErr := pl.Estimate(PlanOptions{Shard: shard})
	if n > 0 && estErr == nil {
		if need := est.Estimate.Total.DiskBytesToPlay; need == need {
			if err := checkDisk(ev.Out, uint64(need), fmt.Sprintf("playing %d conversations", n)); err != nil {
				return res, fmt.Errorf("evaluation %q: %w", ev.Name, err)
			}
		}
	}

	det, err := vad.Open(vad.Options{Model: ev.VAD.Model})
	if err != nil {
		return res, fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	defer det.Close()
	lopts := pl.opts
	// The deadlines are the plugin blocks' (pluginhost enforces them and kills a
	// wedged plugin, which the loop then restarts).
	lopts.Detector = det
	lopts.Shard, lopts.Logger, lopts.Plan = shard, ui.Logger, pl.Items
	man, err := evaluate.NewManifest(ev.Name, ds, pl.Models, lopts)
	if err != nil {
		return res, fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	man.Harness = opts.Harness
	man.Plan = evaluate.Entries(pl.Items)
	st, err := store.Create(ev.Out, man)
	if err != nil {
		return res, fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	if err := writeJSONFile(filepath.Join(st.Dir(), RunInfoFile), RunInfo{RunFile: s.File.Path, Evaluation: ev.Name, Vars: opts.Vars, Partial: pl.Partial}); err != nil {
		return res, err
	}
	for _, k := range []*pluginstart.Known{asr, judge} {
		if k != nil && k.Started() {
			started = append(started, k.Block.Name)
		}
	}
	play := &PlayResult{Evaluation: ev.Name, Out: ev.Out, Plan: pl.Plan, Started: started, Repeats: max(ev.Repeats, 1), Partial: pl.Partial}
	if play.Estimate = est; estErr != nil {
		ui.notef("warning: no cost estimate for evaluation %q: %v\n", ev.Name, estErr)
	}
	if ui.Planned != nil {
		ui.Planned(play)
	}

	job := scoreJob{ev: ev, st: st, det: det, asr: asr, judge: judge, ds: ds, file: s.File, partial: pl.Partial}
	// Scoring overlaps playing: each conversation is scored as soon as it is saved,
	// and the scoring after playing reuses those verdicts and does the rest.
	var early *evaluate.Early
	closeCaches := func() {}
	if scoring && n > 0 {
		eopts := job.scoreOptions(ui)
		if closeCaches, err = openCaches(st.Dir(), &eopts); err != nil {
			return res, err
		}
		early = evaluate.ScoreEarly(ctx, st, scorers, eopts)
		lopts.Finished = early.Add
	}

	ui.notef("evaluation %s: %s\n", ev.Name, concurrencyNote(lopts.Concurrency, pl.Models))
	began := time.Now()
	lopts.Progress = ui.counter("playing", ev.Name, "conversations")
	sum, runErr := evaluate.Run(ctx, ds, pl.Models, st, lopts)
	lopts.Progress.Finish(runErr == nil)
	play.Total, play.Elapsed = sum.Total, time.Since(began)
	pl.Kill() // the scoring still running needs no model
	for _, m := range pl.Models {
		play.Models = append(play.Models, m.Name)
		play.Counts = append(play.Counts, sum.Models[m.Name])
	}
	res.Play = play
	if ui.Played != nil {
		ui.Played(play)
	}
	if early != nil {
		// What was queued while playing and is not scored yet.
		var count *progress.Counter // none when nothing is left to score
		if early.Pending() > 0 {
			count = ui.counter("scoring", ev.Name, "conversations")
		}
		early.Follow(count)
		er := early.Wait()
		count.Finish(true)
		closeCaches()
		job.early = &er
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("evaluation %q interrupted; finished conversations are kept in %s: run the same command again to resume", ev.Name, ev.Out)
		}
		return res, fmt.Errorf("evaluation %q stopped: %w (finished conversations are kept in %s; run again to resume)", ev.Name, runErr, ev.Out)
	}
	if !scoring {
		return res, nil
	}
	res.Score, err = scoreStore(ctx, job, ui)
	return res, err
}

// limitPairs keeps the first n pairs of the built dataset (construct.FirstPairs: both conditions of each, in
// the order the pairs first appear), and says what it left out; all of it, and no
// Partial, when the dataset has no more than n pairs.
func limitPairs(b *BuildResult, n int) (*BuildResult, *Partial) {
	ds := b.Dataset
	kept, pairs := construct.FirstPairs(ds.Scenarios, n)
	if pairs <= n {
		return b, nil
	}
	keep := make(map[string]bool, len(kept))
	for _, sc := range kept {
		keep[sc.ScenarioID] = true
	}
	limited := *ds
	limited.Scenarios, limited.Lines = nil, nil
	for i, sc := range ds.Scenarios {
		if keep[sc.ScenarioID] {
			limited.Scenarios = append(limited.Scenarios, sc)
			if i < len(ds.Lines) {
				limited.Lines = append(limited.Lines, ds.Lines[i])
			}
		}
	}
	out := *b
	out.Dataset = &limited
	return &out, &Partial{Dataset: b.Block.Name, Pairs: n, OfPairs: pairs}
}

// toPlay counts the items shard plays.
func toPlay(pl *Planned, shard store.Shard) int {
	n := 0
	for _, m := range pl.Models {
		n += pl.toPlay(m.Name, shard)
	}
	return n
}

// knowScorers makes the identities of ev's asr and judge plugins known (from their
// records in the run directory, or started).
func knowScorers(ctx context.Context, s *pluginstart.Starter, ev *config.Evaluation) (asr, judge *pluginstart.Known, err error) {
	return knowScorersNamed(ctx, s, ev, ev.Judge)
}

func knowScorersNamed(ctx context.Context, s *pluginstart.Starter, ev *config.Evaluation, judgeName string) (asr, judge *pluginstart.Known, err error) {
	know := func(name, role string) (*pluginstart.Known, error) {
		b := s.File.Plugin(name)
		if b == nil {
			return nil, fmt.Errorf("evaluation %q: %s plugin %q is not declared", ev.Name, role, name)
		}
		return s.Know(ctx, b)
	}
	if asr, err = know(ev.ASR, sdk.KindASR); err != nil {
		return nil, nil, err
	}
	if judge, err = know(judgeName, sdk.KindJudge); err != nil {
		asr.Kill()
		return nil, nil, err
	}
	return asr, judge, nil
}

// loadDataset loads the dataset block's built dataset.
func loadDataset(f *config.File, ev *config.Evaluation) (*dataset.Dataset, error) {
	dsBlock := f.Dataset(ev.Dataset)
	if dsBlock == nil {
		return nil, fmt.Errorf("evaluation %q: dataset %q is not declared", ev.Name, ev.Dataset)
	}
	ds, err := dataset.Load(dsBlock.Out)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("evaluation %q: the dataset %q is not built in %s: build it with `duplexmpe build %s`", ev.Name, ev.Dataset, dsBlock.Out, f.Path)
		}
		return nil, fmt.Errorf("evaluation %q: %w (build it with `duplexmpe build`)", ev.Name, err)
	}
	return ds, nil
}

// concurrencyNote says how many conversations play at once: "playing up to 2
// conversations at once (per model: silent 4, cascade 2)".
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
