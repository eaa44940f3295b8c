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
	c, err := pluginhost.Start(context.Background(), pluginhost.Spec{Name: name, Source: plugintest.BuildGo(t, "../../tests/reliability/faulty")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	if err := c.Configure(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return c
}

// scorersOf makes the scorers of a scoring from two plugin processes, as core/app does:
// alive while both processes run, revived by restarting the one that stopped.
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
	roles := map[string]*pluginhost.Client{sdk.KindASR: asr, sdk.KindJudge: judge}
	return evaluate.Scorers{ASR: a, Judge: j,
		Records: []provenance.Plugin{{Name: asr.Name(), Role: sdk.KindASR}, {Name: judge.Name(), Role: sdk.KindJudge}},
		Alive: func() (string, error) {
			for role, c := range roles {
				if c.Exited() {
					return role, errors.New("stopped")
				}
			}
			return "", nil
		},
		Revive: func(ctx context.Context) (int, error) {
			n := 0
			for _, c := range roles {
				if c.Exited() {
					if err := c.Restart(ctx); err != nil {
						return n, err
					}
					n++
				}
			}
			return n, nil
		},
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
