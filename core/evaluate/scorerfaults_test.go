package evaluate_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/progress"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// startScorer starts the fault plugin of tests/reliability as an ASR or a judge.
func startScorer(t *testing.T, name string, cfg map[string]any) *pluginhost.Client {
	t.Helper()
	return startScorerWith(t, pluginhost.Spec{Name: name}, cfg)
}

// startScorerWith starts it from spec (its Source filled in).
func startScorerWith(t *testing.T, spec pluginhost.Spec, cfg map[string]any) *pluginhost.Client {
	t.Helper()
	spec.Source = plugintest.BuildGo(t, "../../tests/reliability/faulty")
	c, err := pluginhost.Start(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	if err := c.Configure(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return c
}

// scorersOf makes the scorers of a scoring from two plugin processes, as core/app does.
func scorersOf(t *testing.T, asr, judge *pluginhost.Client) evaluate.Scorers {
	t.Helper()
	a, err := asr.ASR()
	if err != nil {
		t.Fatal(err)
	}
	j, err := judge.Judge()
	if err != nil {
		t.Fatal(err)
	}
	return evaluate.Scorers{ASR: a, Judge: j, ASRProcess: asr, JudgeProcess: judge,
		Records: []provenance.Plugin{{Name: asr.Name(), Role: sdk.KindASR}, {Name: judge.Name(), Role: sdk.KindJudge}},
	}
}

// playedStore plays the small dataset with always-talk, whose speech every item needs
// transcribed and judged.
func playedStore(t *testing.T) (*store.Store, evaluate.ScoreOptions) {
	t.Helper()
	ds := smallDataset(t)
	models := []*evaluate.Model{startModel(t, "always-talk")}
	opts := options(t)
	st := newStore(t, ds, models, opts)
	if _, err := evaluate.Run(context.Background(), ds, models, st, opts); err != nil {
		t.Fatal(err)
	}
	gold := map[string]string{}
	for _, sc := range ds.Scenarios {
		gold[sc.ScenarioID] = sc.GoldAnswer
	}
	return st, evaluate.ScoreOptions{Params: opts.Params, VAD: opts.VAD, Detector: opts.Detector, Gold: gold, Workers: 1}
}

// Before, an ASR plugin that crashed was not restarted: every later item was left
// unscored (20 of 24 in the fault campaign). Now it is restarted like a model plugin:
// the item it was scoring stays unscored, the others are scored by the new process.
func TestCrashedASRIsRestarted(t *testing.T) {
	st, sopts := playedStore(t)
	asr := startScorer(t, "asr", map[string]any{"fault": "asr_crash", "crash_file": filepath.Join(t.TempDir(), "crashed")})
	judge := startScorer(t, "judge", map[string]any{})
	res, err := evaluate.Score(context.Background(), st, scorersOf(t, asr, judge), sopts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Unscored) != 1 || res.Now != 3 || res.Restarts != 1 {
		t.Errorf("after one ASR crash: %d unscored, %d scored, %d restarts; want 1, 3, 1 (%+v)", len(res.Unscored), res.Now, res.Restarts, res.Unscored)
	}
	// The next scoring redoes the unscored item with the restarted plugin.
	res, err = evaluate.Score(context.Background(), st, scorersOf(t, asr, judge), sopts)
	if err != nil || !res.Complete() || res.Now != 1 || res.Reused != 3 {
		t.Errorf("scoring again: %d now, %d reused, complete %v (%v)", res.Now, res.Reused, res.Complete(), err)
	}
}

// Before, scoring went on after the disk was full (20 errors over 24 items) and told
// the user to score again "once the service works". Now it stops at the first write
// that finds the disk full, with a message about the disk. The disk is a real full
// file system (a 1 MiB tmpfs, filled), which needs root to mount.
// Before, an ASR or judge call that never returned hung the run forever ("scoring: 0/2"
// for 420 s until killed): scorer calls had no deadline. Now every call is bounded by the
// plugin block's call_timeout: past it the plugin is killed and restarted, and the item
// stays unscored, named as the ASR's (or the judge's) failure, not the model's.
func TestHungScorerCallIsBounded(t *testing.T) {
	for _, tc := range []struct{ fault, role string }{{"asr_hang", sdk.KindASR}, {"judge_hang", sdk.KindJudge}} {
		t.Run(tc.fault, func(t *testing.T) {
			st, sopts := playedStore(t)
			once := filepath.Join(t.TempDir(), "struck")
			cfgs := map[string]map[string]any{sdk.KindASR: {}, sdk.KindJudge: {}}
			cfgs[tc.role] = map[string]any{"fault": tc.fault, "crash_file": once}
			const timeout = 3 * time.Second
			asr := startScorerWith(t, pluginhost.Spec{Name: "asr", CallTimeout: timeout}, cfgs[sdk.KindASR])
			judge := startScorerWith(t, pluginhost.Spec{Name: "judge", CallTimeout: timeout}, cfgs[sdk.KindJudge])
			// A guard only: without the deadline, scoring would never end.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := evaluate.Score(ctx, st, scorersOf(t, asr, judge), sopts)
			if err != nil {
				t.Fatalf("scoring with a hung %s: %v", tc.role, err)
			}
			if len(res.Unscored) != 1 || res.Now != 3 || res.Restarts != 1 {
				t.Fatalf("after one hung %s call: %d unscored, %d scored, %d restarts; want 1, 3, 1 (%+v)", tc.role, len(res.Unscored), res.Now, res.Restarts, res.Unscored)
			}
			u := res.Unscored[0]
			if u.Service != tc.role || u.Plugin != tc.role || !strings.Contains(u.Error, "call_timeout") {
				t.Errorf("the unscored item is %+v; want it named as the %s's failure, with call_timeout", u, tc.role)
			}
			res, err = evaluate.Score(ctx, st, scorersOf(t, asr, judge), sopts)
			if err != nil || !res.Complete() || res.Now != 1 {
				t.Errorf("scoring again: %d now, complete %v (%v)", res.Now, res.Complete(), err)
			}
		})
	}
}

func TestScoringStopsAtADiskFull(t *testing.T) {
	st, sopts := playedStore(t)
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	view, err := store.OpenView(mnt)
	if err != nil {
		t.Fatal(err)
	}
	// Fill it.
	fill, _ := os.Create(filepath.Join(mnt, "fill"))
	for buf := make([]byte, 64<<10); ; {
		if _, err := fill.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	fill.Close()
	sopts.Verdicts = view
	sopts.Progress = progress.New(nil, "scoring", "", "conversations")
	asr := startScorer(t, "asr", map[string]any{})
	judge := startScorer(t, "judge", map[string]any{})
	_, err = evaluate.Score(context.Background(), st, scorersOf(t, asr, judge), sopts)
	var full *evaluate.DiskFullError
	if !errors.As(err, &full) || !strings.Contains(err.Error(), "disk is full") || !strings.Contains(err.Error(), "free some space") {
		t.Fatalf("scoring onto a full disk: %v, want a DiskFullError about the disk", err)
	}
	if tried := sopts.Progress.Total().Read().Done; tried != 1 {
		t.Errorf("%d items were tried after the disk was full; scoring should stop at the first", tried-1)
	}
}
