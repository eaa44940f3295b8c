package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"github.com/duplexmpe/duplexmpe/core/score"
)

// A measure is one row of score.MeasureTable: a throwaway row added here, and nowhere
// else, shows in every output: the summary (entry, breakdowns, paired test), results.json,
// results.csv, report.md's tables, the explorer's events in report.html, and explain's
// rules for one conversation.
func TestAThrowawayMeasureShowsInEveryOutput(t *testing.T) {
	const key, short = "t_answered_late", "answered late (throwaway)"
	saved := score.MeasureTable
	t.Cleanup(func() { score.MeasureTable = saved })
	score.MeasureTable = append(slices.Clone(saved), score.Measure{
		Key: key, Title: "Answered after 6 s (throwaway)", Short: short,
		Denominator: "T turns with an onset", Success: "the onset is after 6 s",
		PairedRank: 3,
		Of: func(ev score.Event) (score.Membership, bool) {
			if ev.T == nil {
				return score.Membership{}, false
			}
			m := score.Membership{Counted: ev.T.Onset != nil}
			m.Success = m.Counted && *ev.T.Onset > 6
			if m.Counted && !m.Success {
				m.Reason = "early"
			}
			return m, true
		},
	})

	dir := t.TempDir()
	items := fixture(4)
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = "00000000000000" + string(rune('a'+i/10)) + string(rune('0'+i%10))
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

	// The summary: every entry has the rate, over T turns with an onset (answerFresh
	// starts at 5.5 s, so every counted one is "early"), in the breakdowns, the paired
	// test and the model comparisons.
	s := score.Summarize(items, testParams(30))
	for _, e := range s.Entries {
		want := e.TOutcomes[score.OutcomeFreshOnset] // the fixture's episodes already speaking at tE have no onset
		if r := e.Rate(key); r.N != want || r.K != 0 || e.Other[key] != r {
			t.Errorf("%s %s: %s rate %+v, want 0/%d", e.Model, e.Condition, key, r, want)
		}
		n := 0
		for _, ms := range e.ByThird {
			n += ms.Rate(key).N
		}
		if n != want {
			t.Errorf("%s %s: thirds count %d events of %s, want %d", e.Model, e.Condition, n, key, want)
		}
	}
	for _, pr := range s.Paired {
		if _, ok := pr.Other[key]; !ok || pr.Test(key).Units != pr.Pairs {
			t.Errorf("paired %s: no test of %s over its %d pairs: %+v", pr.Model, key, pr.Pairs, pr.Other)
		}
	}
	var compared bool
	for _, c := range s.Comparisons {
		compared = compared || c.Measure == key
	}
	if !compared {
		t.Errorf("no model comparison of %s", key)
	}

	if err := WriteAll(dir, s, testMeta()); err != nil {
		t.Fatal(err)
	}
	for file, wants := range map[string][]string{
		JSONFile:     {`"other_measures"`, `"` + key + `"`},
		CSVFile:      {SecRate + ",alpha", "," + key + ","},
		MarkdownFile: {"| " + short + " |", short + ", T turns with an onset"},
		HTMLFile:     {key + ":0", short},
	} {
		text := read(t, dir, file)
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s lacks %q", file, w)
			}
		}
	}
	// The scored breakdowns of report.md carry it too.
	for _, heading := range []string{"Scored measures by T position", "Scored measures by elapsed-time third", "Explicit vs implicit (paired McNemar)"} {
		if rows := mdRows(read(t, dir, MarkdownFile), heading); !slices.ContainsFunc(rows, func(r []string) bool { return slices.Contains(r, short) }) &&
			!strings.Contains(sectionOf(read(t, dir, MarkdownFile), heading), short) {
			t.Errorf("report.md section %q does not show %s", heading, short)
		}
	}

	// The explorer's events and explain: the item with a fresh onset is in the measure.
	var withOnset string
	for i, it := range items {
		for _, ev := range it.Events {
			if ev.T != nil && ev.T.Onset != nil && withOnset == "" {
				withOnset = ids[i]
			}
		}
	}
	convs := viewer.Read(dir)
	found := false
	for _, c := range convs {
		for _, v := range viewer.EventsOf(c.Scored) {
			if in, ok := v.Member(key); in && !ok {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no explorer event is in %s", key)
	}
	ex, err := viewer.Explain(dir, withOnset, testParams(30), "")
	if err != nil {
		t.Fatal(err)
	}
	var ruled bool
	for _, e := range ex.Events {
		for _, r := range e.Rules {
			ruled = ruled || strings.Contains(r, short+": failure (early)")
		}
	}
	if !ruled {
		t.Errorf("explain %s does not name %s: %+v", withOnset, short, ex.Events)
	}
}

// sectionOf is the text of report.md's section under heading, up to the next one.
func sectionOf(md, heading string) string {
	_, rest, ok := strings.Cut(md, "## "+heading)
	if !ok {
		return ""
	}
	sec, _, _ := strings.Cut(rest, "\n## ")
	return sec
}
