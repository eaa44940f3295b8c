package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/reference"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// ScoreResult is what scoring a run did.
type ScoreResult struct {
	evaluate.ScoreResult
	Dir     string
	Summary score.Summary
	Meta    report.Meta
	// FailedModels are the models with failed conversations, sorted (Failed counts them).
	FailedModels []string
	// NoSpeech are the models whose audio the VAD never called speech (report.Findings).
	NoSpeech []report.NoSpeech
}

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
	// Load loads and checks a run file, reporting its diagnostics (the CLI's loader).
	Load func(path string, vars []string) (*config.File, error)
}

// Score scores the stored conversations of a run directory again (no model is
// started) with the asr and judge plugins of the evaluation block that made it, or
// another judge, then writes summary.json and the report. The run's own protocol and
// VAD values decide, not the run file's current ones. Items already scored with the same
// scorers and values are reused.
func Score(ctx context.Context, req ScoreRequest, ui UI) (*ScoreResult, error) {
	if req.Given == "" {
		req.Given = req.Dir
	}
	st, err := store.Open(req.Dir)
	if err != nil {
		return nil, fmt.Errorf("%s is not a run directory (%v); `duplexmpe run FILE.hcl` makes one", req.Given, err)
	}
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
	det, err := vad.Open(vad.Options{Model: ev.VAD.Model})
	if err != nil {
		return nil, err
	}
	defer det.Close()
	return scoreStore(ctx, s.WithLogDir(filepath.Join(st.Dir(), "logs")), ev, st, det, judge, ui)
}

// scoreStore scores every finished item of st with the evaluation's asr plugin and the
// given judge plugin, then writes RUN_DIR/summary.json and the report.
func scoreStore(ctx context.Context, s *pluginstart.Starter, ev *config.Evaluation, st *store.Store, det *vad.Detector, judgeName string, ui UI) (*ScoreResult, error) {
	sp, err := startScorers(ctx, s, ev, judgeName)
	if err != nil {
		return nil, err
	}
	defer sp.kill()
	return scoreWith(ctx, s.File, ev, st, det, sp, 0, ui)
}

// scorerPlugins are the started asr and judge plugins of a scoring.
type scorerPlugins struct {
	asr, judge *pluginstart.Plugin
	scorers    evaluate.Scorers
}

func (p *scorerPlugins) kill() {
	for _, pl := range []*pluginstart.Plugin{p.asr, p.judge} {
		if pl != nil {
			pl.Kill()
		}
	}
}

// startScorers starts the evaluation's asr plugin and the given judge plugin.
func startScorers(ctx context.Context, s *pluginstart.Starter, ev *config.Evaluation, judgeName string) (*scorerPlugins, error) {
	sp := &scorerPlugins{}
	asrPlugin, err := startBlock(ctx, s, ev.ASR, fmt.Errorf("evaluation %q: asr plugin %q is not declared", ev.Name, ev.ASR))
	if err != nil {
		return nil, err
	}
	sp.asr = asrPlugin
	asr, err := asrPlugin.ASR()
	if err != nil {
		sp.kill()
		return nil, err
	}
	judgePlugin, err := startBlock(ctx, s, judgeName, fmt.Errorf("evaluation %q: judge plugin %q is not declared", ev.Name, judgeName))
	if err != nil {
		sp.kill()
		return nil, err
	}
	sp.judge = judgePlugin
	judge, err := judgePlugin.Judge()
	if err != nil {
		sp.kill()
		return nil, err
	}
	sp.scorers = evaluate.Scorers{
		ASR: asr, Judge: judge,
		Records: []provenance.Plugin{asrPlugin.Record(sdk.KindASR), judgePlugin.Record(sdk.KindJudge)},
		Alive: func() error {
			for i, p := range []*pluginstart.Plugin{asrPlugin, judgePlugin} {
				if p.Exited() {
					return fmt.Errorf("the %s plugin %q stopped while scoring; its verdicts since then are not saved: run `duplexmpe score` again", []string{sdk.KindASR, sdk.KindJudge}[i], p.Block.Name)
				}
			}
			return nil
		},
	}
	return sp, nil
}

// goldAnswers maps each scenario of ds to its gold answer.
func goldAnswers(ds *dataset.Dataset) map[string]string {
	gold := map[string]string{}
	for _, sc := range ds.Scenarios {
		gold[sc.ScenarioID] = sc.GoldAnswer
	}
	return gold
}

// scoreWith scores every finished item of st with the started scorers, then writes
// RUN_DIR/summary.json and the report. early items were scored (and their verdicts
// saved) by this command while it played: Score finds them done, and they count as
// scored now, not reused.
func scoreWith(ctx context.Context, f *config.File, ev *config.Evaluation, st *store.Store, det *vad.Detector, sp *scorerPlugins, early int, ui UI) (*ScoreResult, error) {
	dsBlock := f.Dataset(ev.Dataset)
	if dsBlock == nil {
		return nil, fmt.Errorf("evaluation %q: dataset %q is not declared", ev.Name, ev.Dataset)
	}
	ds, err := dataset.Load(dsBlock.Out)
	if err != nil {
		return nil, fmt.Errorf("evaluation %q: %w (build it with `duplexmpe build`)", ev.Name, err)
	}
	gold := goldAnswers(ds)
	scorers := sp.scorers
	asrPlugin, judgePlugin := sp.asr, sp.judge

	bar := ui.progress("scoring", ev.Name, "conversations")
	sr, err := evaluate.Score(ctx, st, scorers, evaluate.ScoreOptions{
		Params: ev.Protocol, VAD: ev.VAD, Detector: det, Gold: gold, Progress: bar,
		Warn: func(msg string) { ui.notef("%s\n", msg) },
	})
	bar.Finish(err == nil)
	if err != nil {
		return nil, err
	}
	early = min(early, sr.Reused)
	sr.Now, sr.Reused = sr.Now+early, sr.Reused-early
	res := &ScoreResult{ScoreResult: sr, Dir: st.Dir()}
	for n := range sr.Failed {
		res.FailedModels = append(res.FailedModels, n)
	}
	sort.Strings(res.FailedModels)
	res.Summary = score.SummarizeWith(sr.Items, ev.Protocol, score.Options{Roles: f.ModelRoles(ev)})
	// A hosted judge learns from its replies which model the server ran ("served_model"):
	// the report records the identity it reports now; the scoring key, what it said before.
	records := append([]provenance.Plugin(nil), scorers.Records...)
	for i, p := range []*pluginstart.Plugin{asrPlugin, judgePlugin} {
		if info, err := p.Describe(ctx); err == nil {
			records[i].Identity = info.Identity
		}
	}
	res.Meta = reportMeta(st.Manifest(), records)
	res.Meta.FailedConversations = sr.Failed
	res.Meta.JudgeVerdicts, res.Meta.UnparseableVerdicts = sr.JudgeVerdicts, sr.Unparseable
	res.Meta.ReferenceDir = ReferenceDirFor(f, ev, ui)
	res.Meta.DatasetDir = dsBlock.Out // the viewer's room channel and gold answers
	if err := report.Save(st.Dir(), res.Summary, res.Meta); err != nil {
		return nil, err
	}
	findings, err := report.Write(st.Dir(), res.Summary, res.Meta)
	if err != nil {
		return nil, err
	}
	res.NoSpeech = findings.NoSpeech
	if ui.Scored != nil {
		ui.Scored(res)
	}
	if n := len(sr.Damaged); n > 0 {
		return res, fmt.Errorf("%d conversations are damaged in %s and were not scored (the report counts them as failed): run `duplexmpe run` on the run file to play them again, then score", n, st.Dir())
	}
	return res, nil
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
