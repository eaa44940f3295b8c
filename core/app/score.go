package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/plan"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/reference"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"github.com/duplexmpe/duplexmpe/core/rundir"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// ScoredFile is the verdicts of every scored item of one scoring, one JSON object a line
// ({"id", "scored"}), in the directory of its summary and report: what `compare` pairs.
const ScoredFile = store.ScoredFile

// ViewFile is OUT/view.json of a scored view written with `score --out OUT`: which run
// directory it scores, with which judge.
const ViewFile = store.ViewFile

// View is OUT/view.json.
type View struct {
	// Run is the run directory scored (as an absolute path).
	Run   string `json:"run"`
	Judge string `json:"judge"`
}

// ScoreResult is what scoring a run did.
type ScoreResult struct {
	evaluate.ScoreResult
	// Dir is where the summary, the verdicts (ScoredFile) and the report were written: the
	// run directory, or the view directory of `score --out`.
	Dir     string
	Summary score.Summary
	Meta    report.Meta
	// FailedModels are the models with failed conversations, sorted (Failed counts them).
	FailedModels []string
	// NoSpeech are the models whose audio the VAD never called speech (report.Findings).
	NoSpeech []report.NoSpeech
	// Stale counts the items of earlier plans in the run directory, not counted.
	Stale int
	// Started names the scorer plugins started; none when every verdict was reused.
	Started []string
	// Elapsed is the wall time of this scoring, for people (after playing, when `run`
	// scored beside it); nothing depends on it.
	Elapsed time.Duration
	// Early is what `run` scored while playing; nil for `score`.
	Early *evaluate.EarlyResult
}

// IncompleteError is a command that did its work, wrote what it could, and could not
// finish the run: items never played, unscored after a service failure. The CLI exits
// 1 with its message.
type IncompleteError struct{ Reasons []string }

func (e *IncompleteError) Error() string { return strings.Join(e.Reasons, "; ") }

// ScoreRequest is `score RUN_DIR`: the run directory, and what the command line says
// about where its run file is.
type ScoreRequest struct {
	// Dir is the run directory; Given names it in messages as the user wrote it.
	Dir, Given string
	// RunFile overrides the run file recorded in run.json; Vars its --var flags.
	RunFile string
	Vars    []string
	// Judge names another plugin block of the run file to judge with; "" the
	// evaluation's judge.
	Judge string
	// Out, when set and not Dir, is a directory for a new scored view: its verdicts,
	// summary and report go there, the run directory's own report is left alone, and no
	// audio is copied.
	Out string
	// Load loads and checks a run file, reporting its diagnostics (the CLI's loader).
	Load func(path string, vars []string) (*config.File, error)
}

// Score scores the stored conversations of a run directory again (no model is
// started) with the asr and judge plugins of the evaluation block that made it, or
// another judge, then writes summary.json and the report. The run's own protocol and
// VAD values decide, not the run file's current ones; the items are those of the run's
// current plan. Items already scored with the same scorers and values are reused, and
// so is every transcript of the same audio by the same ASR and every verdict of the
// same judge on the same question: `score --judge X` on a scored run transcribes
// nothing. The scorer plugins start only when an item needs scoring.
func Score(ctx context.Context, req ScoreRequest, ui UI) (*ScoreResult, error) {
	if req.Given == "" {
		req.Given = req.Dir
	}
	st, err := store.Open(req.Dir)
	if err != nil {
		err = fmt.Errorf("%s is not a run directory (%w); `duplexmpe run FILE.hcl` makes one", req.Given, err)
		if errors.Is(err, fs.ErrNotExist) {
			err = fault.Deterministic(err) // running it again meets the same folder
		}
		return nil, err
	}
	lock, err := rundir.Acquire(req.Dir, rundir.Options{})
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	noteStale(ui, lock)
	info, err := ReadRunInfo(req.Dir)
	if err != nil && req.RunFile == "" {
		return nil, fmt.Errorf("%s: %v; name the run file with --run-file", req.Given, err)
	}
	if req.RunFile != "" {
		info.RunFile = req.RunFile
	}
	if len(req.Vars) > 0 {
		info.Vars = req.Vars
	}
	f, err := req.Load(info.RunFile, info.Vars)
	if err != nil {
		return nil, err
	}
	ev := f.Evaluation(info.Evaluation)
	if ev == nil {
		if len(f.Evaluations) != 1 {
			return nil, fmt.Errorf("%s has no evaluation block %q; name the run file that made %s with --run-file", info.RunFile, info.Evaluation, req.Given)
		}
		ev = f.Evaluations[0]
	}
	m := st.Manifest()
	ev.Protocol, ev.VAD = m.Params, m.VAD
	judge := req.Judge
	if judge == "" {
		judge = ev.Judge
	} else if f.Plugin(judge) == nil {
		return nil, usageErrorf("--judge %q: %s declares no such plugin block", judge, info.RunFile)
	}
	s, err := pluginstart.NewStarter(f, ui.starter())
	if err != nil {
		return nil, err
	}
	if s.Pins.Warning != "" {
		ui.notef("warning: %s\n", s.Pins.Warning)
	}
	ds, err := loadDataset(f, ev)
	if err != nil {
		return nil, err
	}
	asr, judgeP, err := knowScorersNamed(ctx, runStarter(s, st.Dir()), ev, judge)
	if err != nil {
		return nil, err
	}
	defer asr.Kill()
	defer judgeP.Kill()
	det, err := vad.Open(vad.Options{Model: ev.VAD.Model})
	if err != nil {
		return nil, err
	}
	defer det.Close()
	job := scoreJob{ev: ev, st: st, det: det, asr: asr, judge: judgeP, ds: ds, file: f, partial: info.Partial}
	if req.Out != "" && !sameDir(req.Out, st.Dir()) {
		job.out = req.Out
		if err := rundir.CheckOut(req.Out, "--out"); err != nil {
			return nil, err
		}
		view, err := rundir.Acquire(req.Out, rundir.Options{Create: true})
		if err != nil {
			return nil, err
		}
		defer view.Release()
		noteStale(ui, view)
	}
	return scoreStore(ctx, job, ui)
}

// scoreJob is one scoring of a run store.
type scoreJob struct {
	ev         *config.Evaluation
	st         *store.Store
	det        *vad.Detector
	asr, judge *pluginstart.Known
	ds         *dataset.Dataset
	file       *config.File
	out        string // a view directory; "" for the run directory itself
	// early is what scoring while playing did (Evaluate): its items are counted as
	// scored now, not reused.
	early *evaluate.EarlyResult
	// partial is the part of the dataset a `run --limit N` played (run.json, read once
	// by the caller); nil for the whole.
	partial *Partial
}

// records are the provenance records of j's asr and judge, as they describe
// themselves now.
func (j scoreJob) records() []provenance.Plugin {
	return []provenance.Plugin{j.asr.Record(sdk.KindASR), j.judge.Record(sdk.KindJudge)}
}

// scoreOptions are the options every scoring of j's store shares: the run's values, the
// VAD, the gold answers and where remarks go. The plan, the verdict store and the call
// caches are the caller's.
func (j scoreJob) scoreOptions(ui UI) evaluate.ScoreOptions {
	gold, accepted, types := map[string]string{}, map[string][]string{}, map[string]string{}
	for _, sc := range j.ds.Scenarios {
		gold[sc.ScenarioID] = sc.GoldAnswer
		if len(sc.GoldAccepted) > 0 {
			accepted[sc.ScenarioID] = sc.GoldAccepted
		}
		if sc.AnswerType != "" {
			types[sc.ScenarioID] = sc.AnswerType
		}
	}
	return evaluate.ScoreOptions{Params: j.ev.Protocol, VAD: j.ev.VAD, Detector: j.det, Gold: gold, Accepted: accepted, AnswerTypes: types,
		Warn: func(msg string) { ui.notef("%s\n", msg) }}
}

// startScorers starts j's asr and judge plugins (a started one is kept) and returns them
// as the scorers of a scoring, with the names of the blocks; a judge whose config is
// wrong fails here, before any item is scored.
func (j scoreJob) startScorers(ctx context.Context) (evaluate.Scorers, []string, error) {
	var started []string
	for _, k := range []*pluginstart.Known{j.asr, j.judge} {
		if _, err := k.Start(ctx); err != nil {
			return evaluate.Scorers{}, started, err
		}
		started = append(started, k.Block.Name)
	}
	var sc evaluate.Scorers
	var err error
	if sc.ASR, err = j.asr.Plugin.ASR(); err != nil {
		return sc, started, err
	}
	if sc.Judge, err = j.judge.Plugin.Judge(); err != nil {
		return sc, started, err
	}
	sc.Records = j.records() // as described now
	// A scorer whose process stopped is restarted with its last config, as a model is
	// (the item it was scoring stays unscored; the next score retries it).
	sc.ASRProcess, sc.JudgeProcess = j.asr.Plugin.Client, j.judge.Plugin.Client
	return sc, started, nil
}

// openCaches opens the call caches of the run directory dir into o (transcripts and
// judgements kept across scorings); the function returned closes them.
func openCaches(dir string, o *evaluate.ScoreOptions) (func(), error) {
	caches := filepath.Join(dir, store.CacheDir)
	var err error
	if o.Transcripts, err = evaluate.OpenCallCache(filepath.Join(caches, store.TranscriptsCache)); err != nil {
		return nil, err
	}
	if o.Judgements, err = evaluate.OpenCallCache(filepath.Join(caches, store.JudgementsCache)); err != nil {
		o.Transcripts.Close()
		return nil, err
	}
	return func() {
		o.Transcripts.Close()
		o.Judgements.Close()
	}, nil
}

// scoreStore scores every item of the run's plan, then writes the summary, the verdicts
// (ScoredFile) and the report into the run directory, or into the view directory. The
// asr and judge start only when some item is not reused; when they start, a judge whose
// config is wrong fails before any item is scored. Items missing from the store or
// left unscored are counted, named, and make the result an *IncompleteError.
func scoreStore(ctx context.Context, j scoreJob, ui UI) (*ScoreResult, error) {
	began := time.Now()
	ev, st := j.ev, j.st
	dir := st.Dir()
	var verdicts evaluate.VerdictStore = st
	if j.out != "" {
		view, err := store.OpenView(j.out)
		if err != nil {
			return nil, err
		}
		abs, _ := filepath.Abs(st.Dir())
		if err := writeJSONFile(filepath.Join(j.out, ViewFile), View{Run: abs, Judge: j.judge.Block.Name}); err != nil {
			return nil, err
		}
		dir, verdicts = j.out, view
	}
	plan, err := st.Planned()
	if err != nil {
		return nil, err
	}
	sopts := j.scoreOptions(ui)
	sopts.Plan, sopts.Verdicts = plan, verdicts
	res := &ScoreResult{Dir: dir}
	todo, err := evaluate.ScoringTodo(st, j.records(), sopts)
	if err != nil {
		return nil, err
	}
	scorers := evaluate.Scorers{Records: j.records()}
	if todo > 0 {
		if err := checkDisk(dir, scoreBytes(st, todo), fmt.Sprintf("scoring %d conversations", todo)); err != nil {
			return nil, err
		}
		if scorers, res.Started, err = j.startScorers(ctx); err != nil {
			return nil, err
		}
		closeCaches, err := openCaches(st.Dir(), &sopts)
		if err != nil {
			return nil, err
		}
		defer closeCaches()
	} else if j.early != nil && j.early.Scored > 0 {
		res.Started = []string{j.asr.Block.Name, j.judge.Block.Name}
	}

	if todo > 0 { // otherwise nothing to count: every verdict is reused
		sopts.Progress = ui.counter("scoring", ev.Name, "conversations")
	}
	sr, err := evaluate.Score(ctx, st, scorers, sopts)
	sopts.Progress.Finish(err == nil)
	if err != nil {
		return nil, err
	}
	if j.early != nil {
		sr.Absorb(*j.early)
		res.Early = j.early
	}
	res.ScoreResult = sr
	for n := range sr.Failed {
		res.FailedModels = append(res.FailedModels, n)
	}
	sort.Strings(res.FailedModels)
	if stale, err := st.Stale(); err == nil {
		res.Stale = len(stale)
	}
	res.Summary = score.SummarizeWith(sr.Summarized(), ev.Protocol, score.Options{Roles: j.file.ModelRoles(ev)})
	res.Summary.Acoustics = st.Manifest().Dataset.Acoustics
	// A hosted judge learns from its replies which model the server ran ("served_model"):
	// the report records the identity it reports now; the scoring key, what it said before.
	described := append([]provenance.Plugin(nil), scorers.Records...)
	for i, k := range []*pluginstart.Known{j.asr, j.judge} {
		if !k.Started() {
			continue
		}
		if info, err := k.Plugin.Describe(ctx); err == nil {
			described[i].Identity = info.Identity
		}
	}
	res.Meta = reportMeta(st.Manifest(), described)
	res.Meta.FailedConversations = sr.Failed
	res.Meta.JudgeVerdicts, res.Meta.UnparseableVerdicts = sr.JudgeVerdicts, sr.Unparseable
	for _, u := range sr.Unscored {
		res.Meta.Unscored = append(res.Meta.Unscored, u.String())
	}
	for _, e := range sr.Missing {
		res.Meta.Missing = append(res.Meta.Missing, e.Name())
	}
	res.Meta.StaleItems = res.Stale
	if j.partial != nil {
		res.Meta.Partial = j.partial.String()
	}
	res.Meta.ReferenceDir = ReferenceDirFor(j.file, ev, ui)
	if b := j.file.Dataset(ev.Dataset); b != nil {
		res.Meta.DatasetDir = b.Out // the viewer's room channel and gold answers
	}
	if err := writeScored(dir, sr); err != nil {
		return nil, err
	}
	if err := report.Save(dir, res.Summary, res.Meta); err != nil {
		return nil, err
	}
	// The report gets the run as one value: the summary, the items of the current plan
	// read once with their verdicts (from dir, where they were just written), the
	// reference; items of earlier plans are not in it.
	run, err := report.NewRun(res.Summary, res.Meta, viewer.ReadOf(dir, report.PlanSet(plan)), j.ds)
	if err != nil {
		return nil, err
	}
	findings, err := run.Write(dir)
	if err != nil {
		return nil, err
	}
	res.NoSpeech = findings.NoSpeech
	res.Elapsed = time.Since(began)
	if ui.Scored != nil {
		ui.Scored(res)
	}
	return res, incomplete(res, j)
}

// incomplete is the *IncompleteError of a scoring that left items out, nil otherwise.
func incomplete(res *ScoreResult, j scoreJob) error {
	var reasons []string
	if n := len(res.Unscored); n > 0 {
		where := j.st.Dir()
		if j.out != "" {
			where += " --out " + j.out
		}
		reasons = append(reasons, fmt.Sprintf("%d conversations are unscored because a scorer failed (first: %s); they are not in any rate: run `duplexmpe score %s` again once the service works",
			n, res.Unscored[0], where))
	}
	if n := len(res.Missing); n > 0 {
		reasons = append(reasons, fmt.Sprintf("%d conversations of the run's plan are not in %s (first: %s), so the rates leave them out: play them with `duplexmpe run %s` (or merge the shards that hold them), then score again",
			n, j.st.Dir(), res.Missing[0].Name(), j.file.Path))
	}
	if n := len(res.Damaged); n > 0 {
		reasons = append(reasons, fmt.Sprintf("%d conversations are damaged in %s and were not scored (the report counts them as failed): run `duplexmpe run` on %s to play them again, then score",
			n, j.st.Dir(), j.file.Path))
	}
	if len(reasons) == 0 {
		return nil
	}
	return &IncompleteError{Reasons: reasons}
}

// writeScored writes dir/ScoredFile: every scored item's id and verdicts.
func writeScored(dir string, sr evaluate.ScoreResult) error {
	var b strings.Builder
	for i, s := range sr.Items {
		line, err := json.Marshal(scoredLine{ID: sr.IDs[i], Scored: s})
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return atomicfile.WriteFile(filepath.Join(dir, ScoredFile), []byte(b.String()))
}

type scoredLine struct {
	ID     string       `json:"id"`
	Scored score.Scored `json:"scored"`
}

func sameDir(a, b string) bool {
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(ia, ib)
	}
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	return aa == ab
}

// reportMeta heads the report with what the run was: harness, dataset, models, scorers.
func reportMeta(m store.Manifest, scorers []provenance.Plugin) report.Meta {
	meta := report.Meta{
		Run: m.Name, Harness: m.Harness, Dataset: m.Dataset,
		Protocol: m.Params, VAD: m.VAD,
		Date: time.Now().UTC().Format(time.RFC3339),
	}
	for _, p := range m.Plugins {
		if p.Role == sdk.KindModel {
			meta.Models = append(meta.Models, p)
		}
	}
	for i := range scorers {
		switch scorers[i].Role {
		case sdk.KindASR:
			meta.ASR = &scorers[i]
		case sdk.KindJudge:
			meta.Judge = &scorers[i]
		}
	}
	return meta
}

// ReferenceDirFor is the directory of the text reference run an evaluation shows beside
// its speech models (its reference = reference.x): the block's out, when its
// reference.json exists. Without one it says through ui how to make it and returns "",
// so that scoring still writes the report.
func ReferenceDirFor(f *config.File, ev *config.Evaluation, ui UI) string {
	if ev.Reference == "" {
		return ""
	}
	r := f.Reference(ev.Reference)
	if r == nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(r.Out, reference.JSONFile)); err != nil {
		ui.notef("note: evaluation %q shows reference %q, which has no result yet (%s); run `duplexmpe reference %s --reference %s`, then `duplexmpe report` again\n",
			ev.Name, r.Name, filepath.Join(r.Out, reference.JSONFile), f.Path, r.Name)
		return ""
	}
	return r.Out
}

// noteStale says when a lock a killed process left was taken over.
func noteStale(ui UI, l *rundir.Lock) {
	if l.Stale != nil {
		ui.notef("note: %s was last locked by %s, which ended without releasing it; taken over\n", l.Dir(), l.Stale)
	}
}

// scoreBytes is what scoring todo conversations of st writes (plan.ScoreBytes): their
// verdicts and the report of every finished item, each as long as its session.json says.
func scoreBytes(st *store.Store, todo int) uint64 {
	var items int
	var audioS float64
	for _, ic := range store.ReadItems(st.Dir()) {
		if ic.Marker != store.Done || ic.Session == nil || ic.Session.Format.InputRate <= 0 {
			continue
		}
		items++
		audioS += float64(ic.Session.Frames*ic.Session.Format.FrameSize) / float64(ic.Session.Format.InputRate)
	}
	return uint64(plan.ScoreBytes(todo, items, audioS, 0))
}
