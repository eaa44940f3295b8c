package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/tools/clitest"
)

// run --limit N is a smoke run: it plays the first N pairs (both conditions of each),
// and the run directory, the summary printed and the report say the run is partial. The
// same run without --limit then plays the rest into the same directory, reusing what the
// smoke run played, and is no longer marked.
func TestRunLimitIsAPartialRunThatAFullRunContinues(t *testing.T) {
	dir, runFile := runFixture(t, "3s")
	raw, err := os.ReadFile(filepath.Join(clitest.Root(), "examples", "scenarios", "scenarios.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(raw), "\n", 7)
	clitest.WriteFile(t, filepath.Join(dir, "scenarios", "scenarios.jsonl"), strings.Join(lines[:6], "\n")+"\n")
	runDir := filepath.Join(dir, "runs", "e")

	if code, _, errs := runCLI(t, dir, "run", runFile, "--limit", "0"); code != ExitUsage || !strings.Contains(errs, "--limit 0") {
		t.Errorf("--limit 0: exit %d\n%s", code, errs)
	}

	code, out, errs := runCLI(t, dir, "run", runFile, "--limit", "1")
	if code != ExitOK {
		t.Fatalf("run --limit 1: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "run --limit 1", out,
		"PARTIAL RUN: the first 1 of the 3 pairs of dataset one (run --limit 1)",
		"plan silent: 2 conversations: 0 reused, 2 to play",
		"plan beeper: 2 conversations: 0 reused, 2 to play",
		"scored 4 conversations",
		"PARTIAL RUN: the first 1 of the 3 pairs")
	// Only the pair played was built: the whole set's scenarios.jsonl is not written yet.
	if _, err := os.Stat(filepath.Join(dir, "build", "one", "scenarios.jsonl")); err == nil {
		t.Error("run --limit 1 built the whole dataset")
	}
	info, err := app.ReadRunInfo(runDir)
	if err != nil || info.Partial == nil || info.Partial.Pairs != 1 || info.Partial.OfPairs != 3 {
		t.Errorf("run.json after --limit 1: %+v, %v", info.Partial, err)
	}
	md, _ := os.ReadFile(filepath.Join(runDir, "report.md"))
	if !strings.Contains(string(md), "(PARTIAL RUN)") || !strings.Contains(string(md), "the first 1 of the 3 pairs") {
		t.Errorf("report.md does not say the run is partial:\n%.600s", md)
	}
	html, _ := os.ReadFile(filepath.Join(runDir, "report.html"))
	if !strings.Contains(string(html), "(PARTIAL RUN)</h1>") {
		t.Error("report.html does not say the run is partial in its title")
	}
	var results struct {
		Meta struct {
			Partial string `json:"partial"`
		} `json:"meta"`
	}
	if b, err := os.ReadFile(filepath.Join(runDir, "results.json")); err != nil || json.Unmarshal(b, &results) != nil || results.Meta.Partial == "" {
		t.Errorf("results.json does not mark the run partial (%v): %+v", err, results.Meta)
	}

	code, out, errs = runCLI(t, dir, "run", runFile)
	if code != ExitOK {
		t.Fatalf("run without --limit: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "run without --limit", out,
		"plan silent: 6 conversations: 2 reused, 4 to play",
		"plan beeper: 6 conversations: 2 reused, 4 to play",
		"scored 12 conversations (8 now, 4 reused)")
	if strings.Contains(out, "PARTIAL") {
		t.Errorf("the full run is still marked partial:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "build", "one", "scenarios.jsonl")); err != nil {
		t.Errorf("the full run did not build the whole dataset: %v", err)
	}
	if info, err := app.ReadRunInfo(runDir); err != nil || info.Partial != nil {
		t.Errorf("run.json after the full run: %+v, %v", info.Partial, err)
	}
	md, _ = os.ReadFile(filepath.Join(runDir, "report.md"))
	if strings.Contains(string(md), "PARTIAL") {
		t.Error("report.md of the full run says partial")
	}
}
