package evaluate_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// The derivation of docs/protocol.md section 6.5, computed independently with Python's
// hashlib: int.from_bytes(sha256(b"duplexmpe repeat <seed> <r>").digest()[:8], "big")
// & (2**63 - 1).
func TestRepeatSeed(t *testing.T) {
	for _, c := range []struct {
		seed int64
		r    int
		want int64
	}{
		{1, 0, 1}, {7, 0, 7}, {-3, 0, -3},
		{1, 1, 3181393737337770174},
		{1, 2, 8800472395353393900},
		{7, 1, 7934084329595815156},
		{-3, 2, 7818130026551386823},
	} {
		if got := evaluate.RepeatSeed(c.seed, c.r); got != c.want {
			t.Errorf("RepeatSeed(%d, %d) = %d, want %d", c.seed, c.r, got, c.want)
		}
	}
}

// seedRecorder is a started plugin that records the seed each conversation starts with.
type seedRecorder struct {
	sdk.Model
	mu    sync.Mutex
	seeds map[string][]int64 // conversation id -> seeds, in start order
}

func (s *seedRecorder) Start(ctx context.Context, req sdk.ConversationStart) (sdk.Conversation, error) {
	s.mu.Lock()
	s.seeds[req.ID] = append(s.seeds[req.ID], req.Seed)
	s.mu.Unlock()
	return s.Model.Start(ctx, req)
}

// Repeat 0 keeps the item ids and the seed of a run without repeats, so such a run is
// reused whole; raising repeats plays only the new repeats, each with its own seed.
func TestRepeatsKeepTheFirstRepeatAndPlayOnlyNewOnes(t *testing.T) {
	ds := smallDataset(t)
	m := startModel(t, "silent")
	rec := &seedRecorder{Model: m.Model, seeds: map[string][]int64{}}
	m.Model = rec
	models := []*evaluate.Model{m}
	opts := options(t)
	opts.Seed = 5

	once, err := evaluate.Plan(ds, models, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Repeats = 1
	one, err := evaluate.Plan(ds, models, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range once {
		if one[i].Meta.ID != once[i].Meta.ID {
			t.Fatalf("repeats = 1 changed item %s's id: %s -> %s", once[i].Meta.ScenarioID, once[i].Meta.ID, one[i].Meta.ID)
		}
		raw, _ := json.Marshal(one[i].Meta.Key)
		if strings.Contains(string(raw), "repeat") || one[i].Meta.Key.Seed != 5 {
			t.Fatalf("repeat 0's key mentions its repeat or changed its seed: %s", raw)
		}
	}

	st := newStore(t, ds, models, opts)
	sum, err := evaluate.Run(context.Background(), ds, models, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Total != (evaluate.Counts{Planned: 4, Done: 4}) {
		t.Fatalf("first run %+v, want 4 played", sum.Total)
	}

	opts.Repeats = 3
	three, err := evaluate.Plan(ds, models, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(three) != 12 {
		t.Fatalf("%d items with 3 repeats of 4 conversations, want 12", len(three))
	}
	ids := map[string]bool{}
	for _, it := range three {
		ids[it.Meta.ID] = true
		if want := evaluate.RepeatSeed(5, it.Meta.Repeat); it.Meta.Key.Seed != want || it.Meta.Key.Repeat != it.Meta.Repeat {
			t.Errorf("%s repeat %d: key seed %d repeat %d, want seed %d", it.Meta.ScenarioID, it.Meta.Repeat, it.Meta.Key.Seed, it.Meta.Key.Repeat, want)
		}
	}
	if len(ids) != 12 {
		t.Fatalf("%d distinct ids among 12 items", len(ids))
	}
	for _, it := range once {
		if !ids[it.Meta.ID] {
			t.Errorf("raising repeats dropped the first repeat's item %s", it.Meta.ScenarioID)
		}
	}
	sum, err = evaluate.Run(context.Background(), ds, models, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Total != (evaluate.Counts{Planned: 12, Reused: 4, Done: 8}) {
		t.Fatalf("run with 3 repeats %+v, want 4 reused and 8 played", sum.Total)
	}
	sum, err = evaluate.Run(context.Background(), ds, models, st, opts)
	if err != nil || sum.Total != (evaluate.Counts{Planned: 12, Reused: 12}) {
		t.Fatalf("the same run again: %+v, %v; want all 12 reused", sum.Total, err)
	}
	// Each conversation started once per repeat, with that repeat's seed.
	for _, sc := range ds.Scenarios {
		got := rec.seeds[sc.ScenarioID]
		want := map[int64]bool{5: true, evaluate.RepeatSeed(5, 1): true, evaluate.RepeatSeed(5, 2): true}
		if len(got) != 3 || got[0] != 5 {
			t.Errorf("%s started with seeds %v, want 5 first, then the two repeats' seeds", sc.ScenarioID, got)
			continue
		}
		for _, s := range got {
			delete(want, s)
		}
		if len(want) != 0 {
			t.Errorf("%s started with seeds %v: %v never", sc.ScenarioID, got, want)
		}
	}
	man, err := evaluate.NewManifest("test", ds, models, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(man.Seeds) != 3 || man.Seeds[0] != 5 || man.Seeds[2] != evaluate.RepeatSeed(5, 2) {
		t.Errorf("manifest seeds %v", man.Seeds)
	}
}
