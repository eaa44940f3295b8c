package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/fault"
)

// A run directory belongs to the run file that made it: another run file is refused
// (deterministically, naming both and the two ways out), the same one by a link or
// --adopt passes, and a directory with no run.json belongs to whoever runs first.
func TestCheckOwner(t *testing.T) {
	dir := t.TempDir()
	runDir := filepath.Join(dir, "runs", "e")
	mine, other := filepath.Join(dir, "mine.hcl"), filepath.Join(dir, "other.hcl")
	for _, f := range []string{mine, other} {
		if err := os.WriteFile(f, []byte("# run file\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkOwner(runDir, other, false); err != nil {
		t.Fatalf("a new directory was refused: %v", err)
	}
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONFile(filepath.Join(runDir, RunInfoFile), RunInfo{RunFile: mine, Evaluation: "e"}); err != nil {
		t.Fatal(err)
	}
	if err := checkOwner(runDir, mine, false); err != nil {
		t.Errorf("its own run file was refused: %v", err)
	}
	link := filepath.Join(dir, "link.hcl")
	if err := os.Symlink(mine, link); err != nil {
		t.Fatal(err)
	}
	if err := checkOwner(runDir, link, false); err != nil {
		t.Errorf("a link to its run file was refused: %v", err)
	}
	err := checkOwner(runDir, other, false)
	if err == nil || !fault.IsDeterministic(err) {
		t.Fatalf("another run file: %v (deterministic: %v)", err, err != nil && fault.IsDeterministic(err))
	}
	for _, want := range []string{runDir + " was made by the run file " + mine, "not by " + other, "--adopt", "out of its own"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q: %v", want, err)
		}
	}
	if err := checkOwner(runDir, other, true); err != nil {
		t.Errorf("--adopt was refused: %v", err)
	}
	if err := os.Remove(mine); err != nil {
		t.Fatal(err)
	}
	if err := checkOwner(runDir, other, false); err == nil || !strings.Contains(err.Error(), "which is no longer there") {
		t.Errorf("a run file that is gone is not said to be: %v", err)
	}
}

// An evaluation that played to the end with failed conversations is an error (not exit
// 0) that counts them per model and says the same command plays them again.
func TestFailedConversations(t *testing.T) {
	var none *EvaluateResult
	if none.FailedConversations() != nil || (&EvaluateResult{}).FailedConversations() != nil {
		t.Error("no play, yet an error")
	}
	r := &EvaluateResult{Play: &PlayResult{Evaluation: "e", Out: "runs/e", Models: []string{"a", "b"}}}
	r.Play.Counts = make([]*evaluate.Counts, 2)
	r.Play.Counts[0] = &evaluate.Counts{}
	r.Play.Counts[1] = &evaluate.Counts{Failed: 2}
	r.Play.Total.Failed = 2
	err := r.FailedConversations()
	if err == nil {
		t.Fatal("two failed conversations, no error")
	}
	for _, want := range []string{`evaluation "e": 2 conversations failed (b: 2)`, "runs/e", "plays them again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "a: 0") {
		t.Errorf("a model with no failure is listed: %v", err)
	}
}
