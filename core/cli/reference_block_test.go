package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/reference"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/stats"
)

// referenceBlocks adds two reference blocks to the run file of referenceRunFile and
// writes it as blocks.hcl.
func referenceBlocks(t *testing.T) string {
	t.Helper()
	dir := referenceRunFile(t)
	raw, err := os.ReadFile(filepath.Join(dir, "run.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(raw) + `
reference "twice" {
  llm         = plugin.rule
  judge       = plugin.lexical
  dataset     = dataset.shipped
  runs        = 2
  retries     = 1
  temperature = 0
  seed        = 7
  max_tokens  = 64
  out         = "refs/twice"
}
reference "once" {
  llm     = plugin.rule
  judge   = plugin.lexical
  dataset = dataset.shipped
}
`
	if err := os.WriteFile(filepath.Join(dir, "blocks.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func loadReference(t *testing.T, path string) reference.Result {
	t.Helper()
	r, err := reference.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReferenceCommandRunsTheFilesBlocks(t *testing.T) {
	dir := referenceBlocks(t)
	code, stdout, stderr := runDatasetCLI(dir, "reference", "blocks.hcl")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The rule LLM answers explicit T in 11 of 12 pairs and implicit T in 2: b = 10, c = 1,
	// whichever block asks.
	paired := fmt.Sprintf("paired (12 pairs): explicit 0.917 implicit 0.167 b=10 c=1 p=%.3g", stats.McNemarExact(10, 1))
	for _, want := range []string{"reference twice:\n", "reference once:\n", "run 2 " + paired, "agreement between runs 1 and 2: 100.0%"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Index(stdout, "reference twice:") > strings.Index(stdout, "reference once:") {
		t.Error("blocks not run in the file's order")
	}
	twice := loadReference(t, filepath.Join(dir, "refs", "twice", reference.JSONFile))
	o := twice.Options
	if len(twice.Runs) != 2 || twice.Agreement == nil || o.Retries != 1 || o.Temperature == nil || *o.Temperature != 0 ||
		o.Seed == nil || *o.Seed != 7 || o.MaxTokens != 64 || twice.LLM.Name != "rule" || twice.Judge.Name != "lexical" || twice.Dataset != "shipped" {
		t.Errorf("reference twice: runs %d options %+v llm %+v", len(twice.Runs), o, twice.LLM)
	}
	once := loadReference(t, filepath.Join(dir, "runs", "reference-once", reference.JSONFile))
	if o := once.Options; len(once.Runs) != 1 || once.Agreement != nil || o.Retries != reference.DefaultRetries || o.Temperature != nil || o.Seed != nil || o.MaxTokens != 0 {
		t.Errorf("reference once: runs %d options %+v", len(once.Runs), o)
	}
}

func TestReferenceCommandOneBlockWithOverrides(t *testing.T) {
	dir := referenceBlocks(t)
	code, stdout, stderr := runDatasetCLI(dir, "reference", "blocks.hcl", "--reference", "twice", "--runs", "1", "--seed", "9", "--out", "elsewhere")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "reference once:") || strings.Contains(stdout, "reference twice:") {
		t.Errorf("one block, yet headed like several:\n%s", stdout)
	}
	r := loadReference(t, filepath.Join(dir, "elsewhere", reference.JSONFile))
	if len(r.Runs) != 1 || r.Options.Seed == nil || *r.Options.Seed != 9 || r.Options.Retries != 1 || r.Options.MaxTokens != 64 {
		t.Errorf("overrides: runs %d options %+v", len(r.Runs), r.Options)
	}
	for _, p := range []string{filepath.Join(dir, "refs", "twice"), filepath.Join(dir, "runs", "reference-once")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s written, though --reference twice --out elsewhere", p)
		}
	}
}

func TestReferenceCommandBlockErrors(t *testing.T) {
	dir := referenceBlocks(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"reference", "blocks.hcl", "--reference", "twise"}, ExitUsage, `--reference "twise": blocks.hcl has no such reference block; did you mean "twice"?`},
		{[]string{"reference", "blocks.hcl", "--reference", "zzzzzzzz"}, ExitUsage, "the file declares twice, once"},
		{[]string{"reference", "blocks.hcl", "--out", "x"}, ExitUsage, "--out with 2 reference blocks"},
		{[]string{"reference", "blocks.hcl", "--reference", "once", "--llm", "nope"}, ExitUsage, `--llm "nope"`},
		{[]string{"reference", "blocks.hcl", "--max-tokens", "-1"}, ExitUsage, "--max-tokens -1"},
		{[]string{"reference", "run.hcl"}, ExitUsage, "run.hcl has no reference block"},
	} {
		code, stdout, stderr := runDatasetCLI(dir, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d and %q\nstdout %s\nstderr %s", c.args, code, c.code, c.want, stdout, stderr)
		}
	}
}

// The block's retries default is the reference package's.
func TestReferenceBlockDefaultsMatchThePackage(t *testing.T) {
	f, diags := config.Parse([]byte(`
plugin "p" { source = "p" }
dataset "d" {
  scenarios = "s"
  tts = plugin.p
  voices = { A = "a", B = "b", C = "c" }
}
reference "r" {
  llm = plugin.p
  judge = plugin.p
  dataset = dataset.d
}
`), filepath.Join(t.TempDir(), "run.hcl"), config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if r := f.Reference("r"); r.Retries != reference.DefaultRetries || r.Runs != 1 {
		t.Errorf("block defaults %+v, reference.DefaultRetries %d", r, reference.DefaultRetries)
	}
}

// An evaluation's reference = reference.x points the report at the block's out once
// reference.json is there; before, scoring goes on and says how to make it.
func TestReferenceDirFor(t *testing.T) {
	dir := referenceBlocks(t)
	raw, _ := os.ReadFile(filepath.Join(dir, "blocks.hcl"))
	src := string(raw) + `
evaluation "e" {
  dataset   = dataset.shipped
  models    = [plugin.rule]
  asr       = plugin.lexical
  judge     = plugin.lexical
  reference = reference.twice
}
evaluation "plain" {
  dataset = dataset.shipped
  models  = [plugin.rule]
  asr     = plugin.lexical
  judge   = plugin.lexical
}
`
	f, diags := config.Parse([]byte(src), filepath.Join(dir, "eval.hcl"), config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var note bytes.Buffer
	ui := app.UI{Notef: func(format string, args ...any) { fmt.Fprintf(&note, format, args...) }}
	if got := app.ReferenceDirFor(f, f.Evaluation("e"), ui); got != "" ||
		!strings.Contains(note.String(), "duplexmpe reference "+filepath.Join(dir, "eval.hcl")+" --reference twice") {
		t.Errorf("before the reference run: %q, note %q", got, note.String())
	}
	if code, stdout, stderr := runDatasetCLI(dir, "reference", "blocks.hcl", "--reference", "twice", "--runs", "1"); code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	note.Reset()
	if got := app.ReferenceDirFor(f, f.Evaluation("e"), ui); got != filepath.Join(dir, "refs", "twice") || note.Len() != 0 {
		t.Errorf("after the reference run: %q, note %q", got, note.String())
	}
	if got := app.ReferenceDirFor(f, f.Evaluation("plain"), ui); got != "" || note.Len() != 0 {
		t.Errorf("an evaluation without reference: %q, note %q", got, note.String())
	}
}

func TestReportCommandShowsAReference(t *testing.T) {
	dir := referenceBlocks(t)
	if code, stdout, stderr := runDatasetCLI(dir, "reference", "blocks.hcl", "--reference", "once"); code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	run := filepath.Join(dir, "runs", "r1")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := report.Save(run, reportSummary(), report.Meta{Run: "r1", Date: "2026-11-29"}); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runReport(t, dir, "runs/r1", "--reference", "runs/reference-once")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	md, _ := os.ReadFile(filepath.Join(run, report.MarkdownFile))
	want := fmt.Sprintf("| rule | response | 12 | 0.917 (11/12) | 0.167 (2/12) | 10 | 1 | +0.750 | %.3f |", stats.McNemarExact(10, 1))
	if !strings.Contains(string(md), "## Text reference (transcript-conditioned LLM)") || !strings.Contains(string(md), want) {
		t.Errorf("report.md lacks the reference section or its paired row %q:\n%s", want, md)
	}
	// Without the flag the stored meta has no reference: no section.
	if code, out, errs = runReport(t, dir, "runs/r1"); code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if md, _ = os.ReadFile(filepath.Join(run, report.MarkdownFile)); strings.Contains(string(md), "Text reference") {
		t.Error("a reference section without --reference")
	}
	code, _, errs = runReport(t, dir, "runs/r1", "--reference", "nowhere")
	if code != ExitFailed || !strings.Contains(errs, filepath.Join(dir, "nowhere", reference.JSONFile)) {
		t.Errorf("missing reference: exit %d, %s", code, errs)
	}
}
