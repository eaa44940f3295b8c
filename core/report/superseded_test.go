package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// supersededRun makes a run store whose plan holds items (ids "...01", "...02", ...)
// and, beside them, one item of an earlier plan: the same model, condition and pair as
// the first, played before a change (its id is not in the plan). It returns the
// directory and the superseded id.
func supersededRun(t *testing.T, items []score.Scored) (string, string) {
	t.Helper()
	dir := t.TempDir()
	var plan []store.PlanEntry
	for i, it := range items {
		plan = append(plan, store.PlanEntry{ID: fmt.Sprintf("%016x", i+1), Model: it.Model, ScenarioID: it.ScenarioID,
			PairID: it.PairID, Condition: it.Condition, TPosition: it.TPosition})
	}
	if _, err := store.Create(dir, store.Manifest{Name: "bench", Params: testParams(30), Plan: plan}); err != nil {
		t.Fatal(err)
	}
	old := items[0]
	old.Events = append([]score.Event(nil), old.Events...)
	const oldID = "00000000000000ff"
	ids := append([]string{}, oldID)
	all := []score.Scored{old}
	for _, e := range plan {
		ids = append(ids, e.ID)
	}
	all = append(all, items...)
	for i, it := range all {
		d := filepath.Join(dir, "items", ids[i])
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]any{
			"item.json": map[string]any{"id": ids[i], "model": it.Model, "scenario_id": it.ScenarioID,
				"pair_id": it.PairID, "condition": it.Condition, "t_position": it.TPosition},
			"timeline.json": conversation(), "verdicts.json": it,
		} {
			b, _ := json.Marshal(v)
			if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, "done"), []byte("done\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, oldID
}

// The report and the viewer show the run as it stands: an item of an earlier plan is
// in no explorer event, rate cell, item row, page, "next" or "other version" link, and
// its old page is removed; explain still explains it and says it is superseded.
func TestSupersededItemsAreNotShown(t *testing.T) {
	items := fixture(2)
	dir, oldID := supersededRun(t, items)
	s := score.Summarize(items, testParams(30))
	meta := testMeta()
	meta.StaleItems = 1
	// A page of the old item from when it was current.
	if err := os.MkdirAll(filepath.Join(dir, "viewer"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "viewer", oldID+".html"), []byte("old page"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteAll(dir, s, meta); err != nil {
		t.Fatal(err)
	}
	page := read(t, dir, HTMLFile)
	if strings.Contains(page, oldID) {
		t.Errorf("report.html shows the superseded item %s", oldID)
	}
	if !strings.Contains(page, fmt.Sprintf("%016x", 1)) {
		t.Errorf("report.html lacks the current item %016x", 1)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "viewer", "*.html"))
	if len(pages) != len(items) {
		t.Errorf("%d viewer pages, want one per current item (%d)", len(pages), len(items))
	}
	for _, p := range pages {
		b, _ := os.ReadFile(p)
		if filepath.Base(p) == oldID+".html" || strings.Contains(string(b), oldID) {
			t.Errorf("viewer page %s is or links the superseded item", p)
		}
	}
	it, err := ExplainItem(dir, oldID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(it.Problems, "\n"), "superseded") {
		t.Errorf("explain of a superseded item does not say so: %v", it.Problems)
	}
	if cur, err := ExplainItem(dir, fmt.Sprintf("%016x", 1)); err != nil || len(cur.Problems) != 0 {
		t.Errorf("explain of a current item: %v, problems %v", err, cur.Problems)
	}
}

// Rerender (what prune calls) writes the report again from the stored summary: the
// provenance stops counting the items of earlier plans once they are removed.
func TestRerenderCountsTheStaleItemsAsTheyAreNow(t *testing.T) {
	items := fixture(1)
	dir, oldID := supersededRun(t, items)
	s := score.Summarize(items, testParams(30))
	meta := testMeta()
	meta.StaleItems = 1
	if err := Save(dir, s, meta); err != nil {
		t.Fatal(err)
	}
	if err := WriteAll(dir, s, meta); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read(t, dir, MarkdownFile), "stale items") {
		t.Fatal("report.md does not count the stale item before the prune")
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RemoveItems([]string{oldID}); err != nil {
		t.Fatal(err)
	}
	if ok, err := Rerender(dir); !ok || err != nil {
		t.Fatalf("Rerender: %v, %v", ok, err)
	}
	if md := read(t, dir, MarkdownFile); strings.Contains(md, "stale items") {
		t.Error("report.md still counts the removed item")
	}
	if _, m, err := Load(dir); err != nil || m.StaleItems != 0 {
		t.Errorf("report-meta.json after Rerender: %+v, %v", m.StaleItems, err)
	}
	// A directory without a report is left alone.
	if ok, err := Rerender(t.TempDir()); ok || err != nil {
		t.Errorf("Rerender of a directory without a report: %v, %v", ok, err)
	}
}
