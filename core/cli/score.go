package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
)

func init() { register(newScoreCmd) }

func newScoreCmd(st *State) *cobra.Command {
	var (
		judge   string
		runFile string
		vars    []string
	)
	cmd := &cobra.Command{
		Use:   "score RUN_DIR",
		Short: "Score the stored conversations of a run again (no model is started), then report",
		Long: "Re-score the recorded outputs of a run directory: offline VAD on every audible\n" +
			"waveform, the verdicts of protocol section 5, ASR and judge on answers and on speech\n" +
			"in silence windows; then write summary.json and the report. The asr and judge plugins\n" +
			"come from the evaluation block of the run file that made the run (RUN_DIR/run.json),\n" +
			"or from --run-file; --judge NAME swaps in another plugin block of that file.\n" +
			"Items already scored with the same asr, judge, protocol and VAD settings are reused.",
		Args: exactArgs(1, "one run directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := resolvePath(st, args[0])
			s, err := store.Open(dir)
			if err != nil {
				return fmt.Errorf("%s is not a run directory (%v); `duplexmpe run FILE.hcl` makes one", args[0], err)
			}
			var info runInfo
			if err := readJSONFile(filepath.Join(dir, runInfoFile), &info); err != nil && runFile == "" {
				return fmt.Errorf("%s: %v; name the run file with --run-file", args[0], err)
			}
			if runFile != "" {
				info.RunFile = runFile
			}
			if len(vars) > 0 {
				info.Vars = vars
			}
			f, err := loadRunFile(st, info.RunFile, info.Vars)
			if err != nil {
				return err
			}
			ev := f.Evaluation(info.Evaluation)
			if ev == nil {
				if len(f.Evaluations) != 1 {
					return fmt.Errorf("%s has no evaluation block %q; name the run file that made %s with --run-file", info.RunFile, info.Evaluation, args[0])
				}
				ev = f.Evaluations[0]
			}
			// The run's own protocol and VAD values, not the file's current ones, decide.
			m := s.Manifest()
			ev.Protocol, ev.VAD = m.Params, m.VAD
			if judge == "" {
				judge = ev.Judge
			} else if f.Plugin(judge) == nil {
				return UsageErrorf("--judge %q: %s declares no such plugin block", judge, info.RunFile)
			}
			det, err := vad.Open(vad.Options{Model: ev.VAD.Model})
			if err != nil {
				return err
			}
			defer det.Close()
			return scoreRun(st, f, ev, s, det, judge)
		},
	}
	cmd.Flags().StringVar(&judge, "judge", "", "score with this plugin block of the run file instead of the evaluation's judge")
	cmd.Flags().StringVar(&runFile, "run-file", "", "the run file to take the asr and judge plugins from (default: the one that made the run)")
	addVarFlag(cmd, &vars)
	return cmd
}

// scoredItem is verdicts.json: the verdicts and the key of what produced them.
type scoredItem struct {
	Key    string       `json:"key"`
	Scored score.Scored `json:"scored"`
}

// scorer is the ASR or judge plugin a run is scored with, as its key and report see it.
type scorer struct {
	Role   string         `json:"role"`
	Plugin report.Plugin  `json:"plugin"`
	Config map[string]any `json:"config,omitempty"`
}

// scoreRun scores every finished item of s with the evaluation's asr plugin and the
// given judge plugin, writes RUN_DIR/summary.json and the report, and prints the main
// table.
func scoreRun(st *State, f *config.File, ev *config.Evaluation, s *store.Store, det *vad.Detector, judgeName string) error {
	ctx := st.Ctx
	logger := pluginLogger(st)
	dsBlock := f.Dataset(ev.Dataset)
	if dsBlock == nil {
		return fmt.Errorf("evaluation %q: dataset %q is not declared", ev.Name, ev.Dataset)
	}
	ds, err := dataset.Load(dsBlock.Out)
	if err != nil {
		return fmt.Errorf("evaluation %q: %w (build it with `duplexmpe build`)", ev.Name, err)
	}
	gold := map[string]string{}
	for _, sc := range ds.Scenarios {
		gold[sc.ScenarioID] = sc.GoldAnswer
	}

	var (
		scorers []scorer
		clients []*pluginhost.Client
	)
	defer func() {
		for _, c := range clients {
			c.Kill()
		}
	}()
	start := func(role, name string) (any, error) {
		block := f.Plugin(name)
		if block == nil {
			return nil, fmt.Errorf("evaluation %q: %s plugin %q is not declared", ev.Name, role, name)
		}
		block = withLogFile(block, s.Dir())
		c, err := startConfigured(st, ctx, f, block, logger)
		if err != nil {
			return nil, err
		}
		clients = append(clients, c)
		info, err := c.Describe(ctx)
		if err != nil {
			return nil, err
		}
		cfg, _ := config.CheckPluginConfig(block, info.Config)
		hash, _ := pluginHash(block.Spec)
		scorers = append(scorers, scorer{Role: role, Config: cfg, Plugin: report.Plugin{
			Name: name, Plugin: info.Name, Version: info.Version, Hash: hash, Identity: info.Identity}})
		if role == sdk.KindASR {
			return c.ASR()
		}
		return c.Judge()
	}
	asrAny, err := start(sdk.KindASR, ev.ASR)
	if err != nil {
		return err
	}
	judgeAny, err := start(sdk.KindJudge, judgeName)
	if err != nil {
		return err
	}
	asr, judge := asrAny.(sdk.ASR), judgeAny.(sdk.Judge)
	// A failed transcription or judge call is a verdict (section 5), but one caused by a
	// scorer process dying is not: such items are not saved, so the next score redoes them.
	scorersAlive := func() error {
		for i, c := range clients {
			if c.Exited() {
				return fmt.Errorf("the %s plugin %q stopped while scoring; its verdicts since then are not saved: run `duplexmpe score` again", scorers[i].Role, scorers[i].Plugin.Name)
			}
		}
		return nil
	}
	key := scoringKey(scorers, ev.Protocol, ev.VAD)

	ids, err := s.IDs()
	if err != nil {
		return err
	}
	var (
		items              []score.Scored
		todo               []string
		failed             = map[string]int{}
		reused             int
		unparseable, total int
	)
	for _, id := range ids {
		switch s.Status(id) {
		case store.Failed:
			if meta, _, err := s.LoadMeta(id); err == nil {
				failed[meta.Model]++
			}
			continue
		case store.Missing:
			continue
		}
		var prev scoredItem
		if err := s.LoadVerdicts(id, &prev); err == nil && prev.Key == key {
			items = append(items, prev.Scored)
			reused++
			continue
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(st.Stderr, "item %s: stored verdicts unreadable (%v); scoring it again\n", id, err)
		}
		todo = append(todo, id)
	}

	// Items are independent: score several at once (the ASR plugin's decoder pool and the
	// VAD session pool bound the real parallelism).
	bar := newCountBar(ctx, st.Stderr, "scoring", ev.Name, "conversations")
	bar.Start(len(todo))
	results := make([]score.Scored, len(todo))
	errs := make([]error, len(todo))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i], errs[i] = scoreItem(ctx, s, todo[i], det, ev, gold, asr, judge, key, scorersAlive)
				bar.Clip(errs[i] == nil)
			}
		}()
	}
	for i := range todo {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil || ctx.Err() != nil {
		bar.finish(false)
		if err == nil {
			err = ctx.Err()
		}
		return fmt.Errorf("scoring stopped (items scored so far are kept): %w", err)
	}
	bar.finish(true)
	items = append(items, results...)
	scoredNow := len(results)
	for _, it := range items {
		u, n := countUnparseable(it)
		unparseable += u
		total += n
	}

	sum := score.Summarize(items, ev.Protocol)
	fmt.Fprintf(st.Stdout, "scored %d conversations (%d now, %d reused); %d judge verdicts, %d unparseable\n",
		len(items), scoredNow, reused, total, unparseable)
	if len(failed) > 0 {
		names := make([]string, 0, len(failed))
		for n := range failed {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(st.Stdout, "model %s: %d failed conversations are not scored (see their failure.json; `duplexmpe run` retries them)\n", n, failed[n])
		}
	}
	meta := reportMeta(s.Manifest(), scorers)
	meta.FailedConversations = failed
	meta.JudgeVerdicts, meta.UnparseableVerdicts = total, unparseable
	meta.ReferenceDir = referenceDirFor(st.Stderr, f, ev)
	if err := report.Save(s.Dir(), sum, meta); err != nil {
		return err
	}
	if err := report.WriteAll(s.Dir(), sum, meta); err != nil {
		return err
	}
	fmt.Fprintln(st.Stdout)
	if err := report.MainTable(st.Stdout, sum); err != nil {
		return err
	}
	fmt.Fprintf(st.Stdout, "\nreport: %s\n", filepath.Join(s.Dir(), report.HTMLFile))
	return nil
}

// reportMeta heads the report with what the run was: harness, dataset, models, scorers.
func reportMeta(m store.Manifest, scorers []scorer) report.Meta {
	meta := report.Meta{
		Run:      m.Name,
		Harness:  report.Harness{Version: m.Harness.Version, Commit: m.Harness.Commit, Modified: m.Harness.Modified},
		Dataset:  report.Dataset{Name: m.Dataset.Name, Version: m.Dataset.Version, Hash: m.Dataset.Hash, Scenarios: m.Dataset.Scenarios},
		Protocol: m.Params, VAD: m.VAD,
		Date: time.Now().UTC().Format(time.RFC3339),
	}
	for _, p := range m.Plugins {
		if p.Role == sdk.KindModel {
			meta.Models = append(meta.Models, report.Plugin{Name: p.Name, Plugin: p.Info.Name, Version: p.Info.Version, Hash: p.Hash, Identity: p.Info.Identity})
		}
	}
	for i := range scorers {
		switch scorers[i].Role {
		case sdk.KindASR:
			meta.ASR = &scorers[i].Plugin
		case sdk.KindJudge:
			meta.Judge = &scorers[i].Plugin
		}
	}
	return meta
}

// scoreItem scores one stored conversation and saves its verdicts.
func scoreItem(ctx context.Context, s *store.Store, id string, det *vad.Detector, ev *config.Evaluation, golds map[string]string, asr sdk.ASR, judge sdk.Judge, key string, alive func() error) (score.Scored, error) {
	it, err := s.Load(id)
	if err != nil {
		return score.Scored{}, err
	}
	// Section 4: speech episodes of the audible waveform. The recorded ones came from the
	// online detector, which gives exactly the offline episodes for the same settings
	// (core/vad tests that), so they are recomputed only for other settings.
	eps := it.Record.Episodes
	if ev.VAD != s.Manifest().VAD || eps == nil {
		eps, err = det.Episodes(it.Record.Audible, ev.VAD)
		if err != nil {
			return score.Scored{}, fmt.Errorf("item %s (%s, %s): %w", id, it.Meta.Model, it.Meta.ScenarioID, err)
		}
	}
	gold, ok := golds[it.Meta.ScenarioID]
	if !ok {
		return score.Scored{}, fmt.Errorf("item %s: scenario %s is not in the dataset any more; score with the dataset the run played (rebuild it, or run again)", id, it.Meta.ScenarioID)
	}
	in := score.Item{
		Model: it.Meta.Model, Condition: it.Meta.Condition, PairID: it.Meta.PairID,
		ScenarioID: it.Meta.ScenarioID, TPosition: it.Meta.TPosition,
		GoldAnswer: gold, Timeline: it.Record.Timeline, Episodes: eps,
	}
	sc, err := score.Judge(ctx, in, it.Record.Audible, asr, judge, ev.Protocol)
	if err != nil {
		return score.Scored{}, err
	}
	if err := alive(); err != nil {
		return score.Scored{}, err
	}
	if err := s.SaveVerdicts(id, scoredItem{Key: key, Scored: sc}); err != nil {
		return score.Scored{}, err
	}
	return sc, nil
}

// scoringKey names everything that changes a verdict besides the recording itself.
func scoringKey(scorers []scorer, p protocol.Params, v protocol.VAD) string {
	raw, _ := json.Marshal(struct {
		Scorers  []scorer
		Protocol protocol.Params
		VAD      protocol.VAD
	}{scorers, p, v})
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// countUnparseable counts the judged spans of an item and those whose verdict could not
// be parsed.
func countUnparseable(s score.Scored) (unparseable, judged int) {
	for _, ev := range s.Events {
		var j *score.Judgement
		switch {
		case ev.T != nil && ev.T.Answer != nil:
			j = ev.T.Answer
		case ev.Silence != nil && ev.Silence.Judgement != nil:
			j = ev.Silence.Judgement
		default:
			continue
		}
		judged++
		if j.Failure == score.FailUnparseable {
			unparseable++
		}
	}
	return unparseable, judged
}

func readJSONFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
