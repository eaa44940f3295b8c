package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

func runReport(t *testing.T, wd string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(&State{
		Args: append([]string{"report"}, args...), Env: map[string]string{},
		Stdout: &out, Stderr: &errb,
		Getwd: func() (string, error) { return wd, nil },
	})
	return code, out.String(), errb.String()
}

// reportSummary scores two conversations per model and condition through the score
// package: one answered with a fresh onset, one silent.
func reportSummary() score.Summary {
	tl := timeline.Timeline{Turns: []timeline.Turn{
		{Label: protocol.LabelN1, Start: 0, End: 2},
		{Label: protocol.LabelT, Start: 2.5, End: 5},
		{Label: protocol.LabelN3, Start: 8.5, End: 10},
	}}
	p := protocol.Defaults()
	p.BootstrapResamples = 50
	var items []score.Scored
	for _, model := range []string{"m1", "m2"} {
		for _, cond := range []string{protocol.Explicit, protocol.Implicit} {
			for i, eps := range [][]timeline.Episode{{{Start: 5.5, End: 8}}, nil} {
				pair := []string{"a", "b"}[i]
				items = append(items, score.Score(score.Item{Model: model, Condition: cond, PairID: pair,
					ScenarioID: pair + "-" + cond, Timeline: tl, Episodes: eps}, p))
			}
		}
	}
	return score.Summarize(items, p)
}

func TestReportCommandRendersAStoredSummary(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "runs", "r1")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := report.Save(run, reportSummary(), report.Meta{Run: "r1", Date: "2026-11-29"}); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runReport(t, root, "runs/r1")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, f := range []string{report.MarkdownFile, report.JSONFile, report.CSVFile, report.HTMLFile} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	for _, want := range []string{"m1  ", "m2  ", "explicit", "implicit", "0.500 (1/2)", "Wrote report.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// --out writes elsewhere and leaves the run directory alone.
	other := filepath.Join(root, "out")
	if code, _, errs := runReport(t, root, "runs/r1", "--out", "out"); code != ExitOK {
		t.Fatalf("--out: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(other, report.HTMLFile)); err != nil {
		t.Errorf("--out: %v", err)
	}
}

func TestReportCommandSaysWhatIsMissing(t *testing.T) {
	root := t.TempDir()
	code, _, errs := runReport(t, root, "nowhere")
	if code != ExitDeterministic || !strings.Contains(errs, "nowhere") { // the input is wrong (issue 24)
		t.Errorf("missing run directory: exit %d, %q", code, errs)
	}
	os.Mkdir(filepath.Join(root, "r"), 0o755)
	code, _, errs = runReport(t, root, "r")
	if code != ExitFailed || !strings.Contains(errs, report.SummaryFile) || !strings.Contains(errs, "duplexmpe score") {
		t.Errorf("unscored run: exit %d, %q", code, errs)
	}
	os.WriteFile(filepath.Join(root, "r", report.SummaryFile), []byte(`{"entries": [`), 0o644)
	code, _, errs = runReport(t, root, "r")
	if code != ExitFailed || !strings.Contains(errs, report.SummaryFile) || !strings.Contains(errs, "damaged") {
		t.Errorf("damaged summary: exit %d, %q", code, errs)
	}
	if code, _, errs := runReport(t, root); code != ExitUsage || !strings.Contains(errs, "one run directory") {
		t.Errorf("no argument: exit %d, %q", code, errs)
	}
}

// --recordings-budget reads bytes with the units people write, and refuses the rest.
func TestReportRecordingsBudgetFlagReadsSizes(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "500MB": 500e6, "20GiB": 20 << 30, "1.5 GB": 15e8, "64kib": 64 << 10} {
		var b byteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("%q: %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "0", "-3GB", "lots", "5 parsecs", "GB"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("%q read as %d bytes", in, b)
		}
	}
}
