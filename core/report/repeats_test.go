package report

import (
	"encoding/csv"
	"regexp"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/score"
)

// repeated is fixture(pairs) played twice: repeat 1 is repeat 0 with alpha's explicit
// fresh onsets dropped on pair 1 (it goes silent there).
func repeated(pairs int) []score.Scored {
	var out []score.Scored
	for r := range 2 {
		for _, it := range fixture(pairs) {
			it.Repeat = r
			if r == 1 && it.Model == "alpha" && it.Condition == "explicit" && it.PairID == "p001" {
				it = scored("alpha", "explicit", 1, it.TPosition, true, true)
				it.Repeat = 1
			}
			out = append(out, it)
		}
	}
	return out
}

// The report of a repeated run states how its rates pool the repeats, shows the
// run-to-run section and its CSV rows; a single play shows neither.
func TestReportWithRepeats(t *testing.T) {
	one := writeAll(t, summary(8, 1))
	for _, name := range []string{"report.md", "results.csv"} {
		if text := read(t, one, name); strings.Contains(text, "Run-to-run") || strings.Contains(text, "repeat_") || strings.Contains(text, "repeats") {
			t.Errorf("%s of a single play mentions repeats", name)
		}
	}

	s := score.Summarize(repeated(8), testParams(1))
	if s.Repeats != 2 {
		t.Fatalf("repeats %d", s.Repeats)
	}
	dir := writeAll(t, s)
	md := read(t, dir, "report.md")
	for _, want := range []string{
		"every rate pools all repeats, so each event counts once per repeat",
		"## Run-to-run agreement and spread (2 repeats)",
		"pairs count (pair, repeat) units",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if !regexp.MustCompile(`\| alpha \| test \| explicit \| 16 \(2 repeats\) \|`).MatchString(md) {
		t.Errorf("the main table does not count alpha's 16 plays:\n%s", md)
	}
	// alpha explicit fresh onset: pair 1 had a fresh onset in repeat 0 and none in
	// repeat 1; the seven other pairs decided alike.
	var e score.Entry
	for _, x := range s.Entries {
		if x.Model == "alpha" && x.Condition == "explicit" {
			e = x
		}
	}
	fo := e.Repeatability.Measures[0]
	if fo.Measure != score.MeasureFreshOnset || fo.Agreed != 7 || fo.Decisions != 8 {
		t.Fatalf("alpha explicit fresh onset: %d of %d agreed, want 7 of 8", fo.Agreed, fo.Decisions)
	}
	if !strings.Contains(md, "| alpha | explicit | fresh onset | 8 | 0.875 (7/8) |") {
		t.Errorf("the run-to-run table lacks alpha's fresh-onset row:\n%s", md)
	}

	rows, err := csv.NewReader(strings.NewReader(read(t, dir, "results.csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	idx := map[string]int{}
	for i, h := range rows[0] {
		idx[h] = i
	}
	found := map[string]bool{}
	for _, r := range rows[1:] {
		if r[idx["model"]] != "alpha" || r[idx["condition"]] != "explicit" || r[idx["measure"]] != score.MeasureFreshOnset {
			continue
		}
		switch sec := r[0]; sec {
		case SecRepeatAgreement:
			found[sec] = r[idx["k"]] == "7" && r[idx["n"]] == "8" && r[idx["rate"]] == "0.875" && r[idx["value"]] == "8"
		case SecRepeatRate:
			// Fresh onsets: 6 of 8 pairs in repeat 0, 5 of 8 in repeat 1.
			found[sec+r[idx["group"]]] = r[idx["k"]] == map[string]string{"0": "6", "1": "5"}[r[idx["group"]]] && r[idx["n"]] == "8"
		case SecRepeatSpread:
			found[sec+r[idx["group"]]] = r[idx["value"]] != ""
		}
	}
	for _, k := range []string{SecRepeatAgreement, SecRepeatRate + "0", SecRepeatRate + "1", SecRepeatSpread + "min", SecRepeatSpread + "max", SecRepeatSpread + "sd"} {
		if !found[k] {
			t.Errorf("results.csv: no correct %s row for alpha explicit fresh onset (%v)", k, found)
		}
	}
}
