package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/reference"
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

// BenchmarkWriteAllWithReference adds a text reference of two runs over 200 pairs, ten
// turns per scenario (8,000 decisions with their raw replies), read from reference.json.
func BenchmarkWriteAllWithReference(b *testing.B) {
	s, _ := benchSummary(b, 20)
	var ds []reference.Decision
	for p := range 200 {
		for _, cond := range []string{"explicit", "implicit"} {
			id := fmt.Sprintf("p%03d-%s", p, cond)
			for turn := range 10 {
				d := reference.Decision{ScenarioID: id, PairID: fmt.Sprintf("p%03d", p), Condition: cond, Turn: turn, Label: "N1",
					Decision: reference.Silent, Attempts: 1, Raw: `{"decision": "SILENT"}`}
				if turn == 5 {
					d.Label = "T"
					if cond == "explicit" || p%3 == 0 {
						d.Decision, d.Answer, d.Raw = reference.Respond, "nine", `{"decision": "RESPOND", "answer": "nine"}`
						d.Verdict = &reference.Verdict{Label: "correct", Parsed: true}
					}
				}
				ds = append(ds, d)
			}
		}
	}
	r := referenceResult("sha256:00ff")
	r.Runs = []reference.RunResult{{Decisions: ds, Summary: reference.Summarize(ds)}, {Decisions: ds, Summary: reference.Summarize(ds)}}
	refDir := b.TempDir()
	if err := reference.Write(refDir, r); err != nil {
		b.Fatal(err)
	}
	meta := testMeta()
	meta.ReferenceDir = refDir
	dir := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		if err := WriteAll(dir, s, meta); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if info, err := os.Stat(filepath.Join(dir, JSONFile)); err == nil {
		b.ReportMetric(float64(info.Size())/1e6, "results-MB")
	}
}
