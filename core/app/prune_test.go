package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// prune removes the items of earlier plans and renders the report again: its
// provenance no longer counts them and no page of theirs is left.
func TestPruneRendersTheReportAgain(t *testing.T) {
	dir := t.TempDir()
	p := protocol.Defaults()
	tl := timeline.Timeline{Turns: []timeline.Turn{
		{Label: protocol.LabelN1, Speaker: "A", Text: "Aria is new here.", Start: 0, End: 2},
		{Label: protocol.LabelT, Speaker: "B", Text: "Aria, what time is it?", Start: 2.5, End: 5},
		{Label: protocol.LabelN3, Speaker: "A", Text: "Hmm.", Start: 8, End: 9},
	}, Duration: 10}
	cur := score.Score(score.Item{Model: "m", Condition: protocol.Explicit, PairID: "p0", ScenarioID: "p0-explicit",
		Timeline: tl, Episodes: []timeline.Episode{{Start: 5.5, End: 7}}}, p)
	const curID, oldID = "00000000000000a1", "00000000000000f0"
	if _, err := store.Create(dir, store.Manifest{Name: "bench", Params: p, Plan: []store.PlanEntry{
		{ID: curID, Model: "m", ScenarioID: "p0-explicit", PairID: "p0", Condition: protocol.Explicit}}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{curID, oldID} {
		d := filepath.Join(dir, store.ItemsDir, id)
		for name, v := range map[string]any{
			"item.json":     map[string]any{"id": id, "model": "m", "scenario_id": "p0-explicit", "pair_id": "p0", "condition": protocol.Explicit},
			"timeline.json": tl, "verdicts.json": cur, "done": nil,
		} {
			b, _ := json.Marshal(v)
			if name == "done" {
				b = []byte("done\n")
			}
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := score.Summarize([]score.Scored{cur}, p)
	meta := report.Meta{Run: "bench", StaleItems: 1}
	if err := report.Save(dir, s, meta); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteAll(dir, s, meta); err != nil {
		t.Fatal(err)
	}
	md := func() string {
		b, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if !strings.Contains(md(), "stale items") {
		t.Fatal("the report does not count the stale item before prune")
	}
	res, err := Prune(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 1 || res.Kept != 1 || !res.Rerendered {
		t.Errorf("Prune: %+v, want 1 removed, 1 kept, the report rendered again", res)
	}
	if strings.Contains(md(), "stale items") {
		t.Error("after prune the report still counts the removed item")
	}
	if _, err := os.Stat(filepath.Join(dir, store.ItemsDir, oldID)); err == nil {
		t.Error("the stale item is still there")
	}
}
