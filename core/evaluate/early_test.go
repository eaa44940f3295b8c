package evaluate_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// realScorers starts the real PocketSphinx and lexical judge plugin processes.
func realScorers(t *testing.T) evaluate.Scorers {
	t.Helper()
	ctx := context.Background()
	start := func(name, dir string) (*pluginhost.Client, provenance.Plugin) {
		c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: name, Source: plugintest.BuildGo(t, dir)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Kill)
		if err := c.Configure(ctx, map[string]any{}); err != nil {
			t.Fatal(err)
		}
		info, err := c.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c, provenance.Described(name, "", info, "", map[string]any{})
	}
	ac, ar := start("pocketsphinx", "../../plugins/pocketsphinx")
	jc, jr := start("lexical", "../../plugins/lexical-judge")
	ar.Role, jr.Role = sdk.KindASR, sdk.KindJudge
	asr, err := ac.ASR()
	if err != nil {
		t.Fatal(err)
	}
	judge, err := jc.Judge()
	if err != nil {
		t.Fatal(err)
	}
	return evaluate.Scorers{ASR: asr, Judge: judge, Records: []provenance.Plugin{ar, jr}}
}

// Scoring overlapped with playing (each item scored as soon as it is saved) leaves
// Score nothing to do, and gives byte for byte the verdicts Score gives on its own
// after playing, through the same call caches.
func TestEarlyScoringGivesTheVerdictsOfScoringAfter(t *testing.T) {
	ds := smallDataset(t)
	models := []*evaluate.Model{startModel(t, "silent"), startModel(t, "always-talk")}
	opts := options(t)
	gold := map[string]string{}
	for _, sc := range ds.Scenarios {
		gold[sc.ScenarioID] = sc.GoldAnswer
	}
	sc := realScorers(t)
	sopts := evaluate.ScoreOptions{Params: opts.Params, VAD: opts.VAD, Detector: opts.Detector, Gold: gold}
	ctx := context.Background()

	overlapped := newStore(t, ds, models, opts)
	eopts := sopts
	cache, err := evaluate.OpenCallCache(filepath.Join(t.TempDir(), "transcripts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	eopts.Transcripts = cache
	early := evaluate.ScoreEarly(ctx, overlapped, sc, eopts)
	withEarly := opts
	var finished []string
	withEarly.Finished = func(e store.PlanEntry) {
		finished = append(finished, e.ID) // Run calls it from its player goroutines
		early.Add(e)
	}
	withEarly.Concurrency = 1 // so that finished needs no lock
	if _, err := evaluate.Run(ctx, ds, models, overlapped, withEarly); err != nil {
		t.Fatal(err)
	}
	er := early.Wait()
	if er.Scored != 8 || len(finished) != 8 {
		t.Errorf("%d items scored while playing, %d told finished; want all 8", er.Scored, len(finished))
	}
	// Two items can ask for the same audio at once (always-talk's loop): a cache entry
	// per distinct clip.
	if er.Transcribed == 0 || cache.Len() == 0 || cache.Len() > er.Transcribed {
		t.Errorf("%d transcriptions while playing, %d cached; want some, each cached", er.Transcribed, cache.Len())
	}
	res, err := evaluate.Score(ctx, overlapped, sc, sopts)
	if err != nil || res.Now != 0 || res.Reused != 8 {
		t.Fatalf("scoring after playing: %d now, %d reused (%v); want all 8 done already", res.Now, res.Reused, err)
	}
	res.Absorb(er)
	if res.Now != 8 || res.Reused != 0 || res.Transcribed != er.Transcribed {
		t.Errorf("absorbed: %d now, %d reused, %d transcribed; want 8, 0, %d", res.Now, res.Reused, res.Transcribed, er.Transcribed)
	}

	after := newStore(t, ds, models, opts)
	if _, err := evaluate.Run(ctx, ds, models, after, opts); err != nil {
		t.Fatal(err)
	}
	if res, err := evaluate.Score(ctx, after, sc, sopts); err != nil || res.Now != 8 {
		t.Fatalf("scoring after playing alone: %d now (%v)", res.Now, err)
	}
	ids, err := after.IDs()
	if err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, id := range ids {
		var a, b evaluate.StoredVerdicts
		if err := overlapped.LoadVerdicts(id, &a); err != nil {
			t.Fatal(err)
		}
		if err := after.LoadVerdicts(id, &b); err != nil {
			t.Fatal(err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("item %s: verdicts differ when scored while playing:\n%s\nvs\n%s", id, ja, jb)
		}
		for _, ev := range a.Scored.Events {
			if ev.T != nil && ev.T.Answer != nil {
				answered++
			}
		}
	}
	if answered == 0 {
		t.Error("no answer was judged: the ASR and judge were never compared")
	}
}
