package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/score"
)

// benchSummary is five models in both conditions, as the published benchmark has.
func benchSummary(b *testing.B, pairs int) (score.Summary, []score.Scored) {
	b.Helper()
	base := fixture(pairs)
	var items []score.Scored
	for m := range 5 {
		for _, it := range base {
			it.Model = fmt.Sprintf("model-%d-%s", m, it.Model)
			items = append(items, it)
		}
	}
	return score.Summarize(items, testParams(30)), items
}

// BenchmarkWriteAll renders all four files for 20 model x condition entries.
func BenchmarkWriteAll(b *testing.B) {
	s, _ := benchSummary(b, 20)
	dir := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		if err := WriteAll(dir, s, testMeta()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteAllWithItems adds the drill-down over 2,000 stored conversations.
func BenchmarkWriteAllWithItems(b *testing.B) {
	s, items := benchSummary(b, 50)
	dir := b.TempDir()
	for i, it := range items {
		d := filepath.Join(dir, "items", fmt.Sprintf("%016x", i+1))
		os.MkdirAll(d, 0o755)
		meta, _ := json.Marshal(map[string]string{"model": it.Model, "condition": it.Condition, "scenario_id": it.ScenarioID, "pair_id": it.PairID})
		v, _ := json.Marshal(it)
		os.WriteFile(filepath.Join(d, "item.json"), meta, 0o644)
		os.WriteFile(filepath.Join(d, "verdicts.json"), v, 0o644)
		os.WriteFile(filepath.Join(d, "done"), []byte("done\n"), 0o644)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := WriteAll(dir, s, testMeta()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if info, err := os.Stat(filepath.Join(dir, HTMLFile)); err == nil {
		b.ReportMetric(float64(info.Size())/1e6, "html-MB")
	}
}
