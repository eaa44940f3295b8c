package cli

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/score"
)

// `report --compare DIR DIR... --out DIR` writes one page, HTML and markdown, with each
// run's main table (what `report DIR` prints) side by side (issue 30).
func TestReportCompareShowsRunsSideBySide(t *testing.T) {
	root := t.TempDir()
	full := reportSummary()
	one := full
	one.Entries = nil
	for _, e := range full.Entries {
		if e.Model == "m1" {
			one.Entries = append(one.Entries, e)
		}
	}
	tables := map[string]string{}
	for name, s := range map[string]score.Summary{"r1": full, "r2": one} {
		dir := filepath.Join(root, "runs", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := report.Save(dir, s, report.Meta{Run: name, Date: "2026-11-29"}); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := report.MainTable(&b, s); err != nil {
			t.Fatal(err)
		}
		tables[name] = b.String()
	}
	code, out, errs := runReport(t, root, "--compare", "runs/r1", "runs/r2", "--out", "cmp")
	if code != ExitOK || !strings.Contains(out, "2 runs side by side") {
		t.Fatalf("exit %d: %s\n%s", code, out, errs)
	}
	md, err := os.ReadFile(filepath.Join(root, "cmp", report.CompareMarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "cmp", report.CompareHTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"r1", "r2"} {
		if !strings.Contains(string(md), "## Duplex-MPE report: "+name+"\n") || !strings.Contains(string(md), "```\n"+tables[name]+"```") {
			t.Errorf("%s lacks run %s's table:\n%s", report.CompareMarkdownFile, name, md)
		}
		if !strings.Contains(string(page), "<pre>"+html.EscapeString(tables[name])+"</pre>") {
			t.Errorf("%s lacks run %s's table", report.CompareHTMLFile, name)
		}
	}
	if i1, i2 := strings.Index(string(page), "report: r1"), strings.Index(string(page), "report: r2"); i1 < 0 || i2 < i1 {
		t.Errorf("the runs are not in the order given: %d, %d", i1, i2)
	}
	for _, args := range [][]string{{"--compare", "runs/r1", "--out", "cmp"}, {"--compare", "runs/r1", "runs/r2"}} {
		if code, _, errs := runReport(t, root, args...); code != ExitUsage {
			t.Errorf("report %v: exit %d, want 2: %s", args, code, errs)
		}
	}
	if code, _, errs := runReport(t, root, "--compare", "runs/r1", "runs/nosuch", "--out", "cmp"); code != ExitDeterministic || !strings.Contains(errs, "nosuch") {
		t.Errorf("a missing run: exit %d, %s", code, errs)
	}
}
