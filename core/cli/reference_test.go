package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/reference"
	"github.com/duplexmpe/duplexmpe/core/stats"
)

// referenceRunFile writes a run file with the rule LLM of core/reference/testdata, the
// real lexical judge and the shipped scenarios; the tts block is declared (a dataset
// needs one) but never started by `reference`.
func referenceRunFile(t *testing.T) string {
	t.Helper()
	llm := buildPlugin(t, "core/reference/testdata/rulellm")
	judge := buildPlugin(t, "plugins/lexical-judge")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "run.hcl"), []byte(fmt.Sprintf(`
plugin "rule" {
  source = %q
  config {
    respond_also = ["you up there on the fence post", "You had the ranger's times"]
    garble       = ["Aria, if we start the fire"]
  }
}
plugin "lexical" {
  source = %q
}
plugin "tts" {
  source = %q
}
dataset "shipped" {
  scenarios = %q
  tts       = plugin.tts
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out       = "out/shipped"
}
`, llm, judge, judge, mustAbs(t, "../../examples/scenarios"))), 0o644)
	return dir
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestReferenceCommandPairedTableAndAgreement(t *testing.T) {
	dir := referenceRunFile(t)
	code, stdout, stderr := runDatasetCLI(dir, "reference", "run.hcl", "--llm", "rule", "--judge", "lexical", "--runs", "2", "--out", "ref")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Explicit T names Aria in all 12 pairs; hand-07's explicit reply never parses;
	// two implicit T turns are answered: b = 10, c = 1.
	p := stats.McNemarExact(10, 1)
	for _, want := range []string{
		fmt.Sprintf("run 1 paired (12 pairs): explicit 0.917 implicit 0.167 b=10 c=1 p=%.3g", p),
		fmt.Sprintf("run 2 paired (12 pairs): explicit 0.917 implicit 0.167 b=10 c=1 p=%.3g", p),
		"run 1 explicit  response 0.917 (11/12)",
		"unparseable 1/",
		"agreement between runs 1 and 2: 100.0%",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "ref", reference.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), fmt.Sprintf("| rule | response | 12 | 0.917 (11/12) | 0.167 (2/12) | 10 | 1 | +0.750 | %.3f |", p)) {
		t.Errorf("reference.md paired table:\n%s", md)
	}
	r, err := reference.Load(filepath.Join(dir, "ref", reference.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if r.LLM.Plugin != "rulellm" || r.Judge.Plugin != "lexical-judge" || r.Options.Retries != reference.DefaultRetries ||
		!strings.HasPrefix(r.PromptHash, "sha256:") || !strings.HasPrefix(r.Options.Duty, "Hello, Aria.") || len(r.Runs) != 2 {
		t.Errorf("reference.json: llm %+v judge %+v options %+v runs %d", r.LLM, r.Judge, r.Options, len(r.Runs))
	}
}

func TestReferenceCommandErrors(t *testing.T) {
	dir := referenceRunFile(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"reference", "run.hcl", "--llm", "rule", "--out", "x"}, ExitUsage, "--judge"},
		{[]string{"reference", "run.hcl", "--llm", "rule", "--judge", "lexical", "--out", "x", "--runs", "0"}, ExitUsage, "--runs 0"},
		{[]string{"reference", "run.hcl", "--llm", "nope", "--judge", "lexical", "--out", "x"}, ExitUsage, `--llm "nope"`},
		{[]string{"reference", "run.hcl", "--llm", "rule", "--judge", "lexical", "--dataset", "other", "--out", "x"}, ExitUsage, `--dataset "other"`},
		{[]string{"reference", "run.hcl", "--llm", "lexical", "--judge", "lexical", "--out", "x"}, ExitFailed, `plugin "lexical"`},
	} {
		code, stdout, stderr := runDatasetCLI(dir, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d and %q\nstdout %s\nstderr %s", c.args, code, c.code, c.want, stdout, stderr)
		}
	}
}

func TestReferenceCommandNeedsABuiltGeneratedDataset(t *testing.T) {
	dir := referenceRunFile(t)
	raw, _ := os.ReadFile(filepath.Join(dir, "run.hcl"))
	gen := strings.Replace(string(raw), "scenarios = "+fmt.Sprintf("%q", mustAbs(t, "../../examples/scenarios")),
		"generate {\n    generator = \"procedural\"\n    pairs = 2\n    seed = 1\n  }", 1)
	os.WriteFile(filepath.Join(dir, "gen.hcl"), []byte(gen), 0o644)
	code, stdout, stderr := runDatasetCLI(dir, "reference", "gen.hcl", "--llm", "rule", "--judge", "lexical", "--out", "ref")
	if code != ExitFailed || !strings.Contains(stderr, "is generated and not built yet") || !strings.Contains(stderr, "duplexmpe build gen.hcl") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestReferenceCommandKeepsDecisionsWhenThePluginFails(t *testing.T) {
	dir := referenceRunFile(t)
	raw, _ := os.ReadFile(filepath.Join(dir, "run.hcl"))
	// The first turn of hand-02 (the third scenario) makes the llm fail.
	failing := strings.Replace(string(raw), "garble       = [", "fail         = \"a hundred and twenty miles left to the lake\"\n    garble       = [", 1)
	os.WriteFile(filepath.Join(dir, "fail.hcl"), []byte(failing), 0o644)
	code, stdout, stderr := runDatasetCLI(dir, "reference", "fail.hcl", "--llm", "rule", "--judge", "lexical", "--out", "ref")
	if code != ExitFailed || !strings.Contains(stderr, "reference run 1 stopped after 20 decisions") || !strings.Contains(stderr, "scenario hand-02-explicit turn 0: llm:") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r, err := reference.Load(filepath.Join(dir, "ref", reference.JSONFile))
	if err != nil || len(r.Runs) != 1 || len(r.Runs[0].Decisions) != 20 {
		t.Fatalf("partial result: %v", err)
	}
}
