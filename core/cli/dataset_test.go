package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
)

func runDatasetCLI(dir string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(&State{Args: args, Stdout: &out, Stderr: &errb, Env: map[string]string{},
		Getwd: func() (string, error) { return dir, nil }})
	return code, out.String(), errb.String()
}

func TestDatasetValidateShippedScenarios(t *testing.T) {
	code, stdout, stderr := runDatasetCLI(".", "dataset", "validate", "../../examples/scenarios")
	if code != ExitOK || !strings.Contains(stdout, "valid (24 scenarios, 12 pairs") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestDatasetValidateReportsEveryViolation(t *testing.T) {
	raw, err := os.ReadFile("../../examples/scenarios/scenarios.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	// Line 2: break the gold answer of the implicit version; line 3: not JSON.
	lines[1] = strings.Replace(lines[1], `"gold_answer":"7:05"`, `"gold_answer":"7:06"`, 1)
	lines[2] = "{oops\n"
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)

	code, _, stderr := runDatasetCLI(".", "dataset", "validate", path)
	if code != ExitDeterministic {
		t.Fatalf("exit %d, want 3; stderr %q", code, stderr)
	}
	for _, want := range []string{
		path + ":2: scenario hand-01-implicit: [pair-gold]",
		path + ":3: [parse]",
		"[pair-missing] pair hand-02 has 0 explicit and 1 implicit versions",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	code, stdout, _ := runDatasetCLI(".", "dataset", "validate", "--json", path)
	var vs []dataset.Violation
	if code != ExitDeterministic || json.Unmarshal([]byte(stdout), &vs) != nil || len(vs) != 3 {
		t.Fatalf("--json: exit %d, %d violations from %q", code, len(vs), stdout)
	}
}

// Issue 11, finding 9: an implicit version whose turns differ outside T and the turn
// before it (as after the paper's N4 edits) is valid with a warning; --strict refuses it.
func TestDatasetValidateStrict(t *testing.T) {
	raw, err := os.ReadFile("../../examples/scenarios/scenarios.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var sc dataset.Scenario
	lines := strings.SplitAfter(string(raw), "\n")
	if err := json.Unmarshal([]byte(lines[1]), &sc); err != nil || sc.Condition != "implicit" {
		t.Fatalf("line 2 is not an implicit version: %v", err)
	}
	write := func(edit func(*dataset.Scenario)) string {
		c := sc
		c.Turns = append([]dataset.Turn(nil), sc.Turns...)
		edit(&c)
		edited, _ := json.Marshal(c)
		out := append([]string(nil), lines...)
		out[1] = string(edited) + "\n"
		path := filepath.Join(t.TempDir(), "edited.jsonl")
		os.WriteFile(path, []byte(strings.Join(out, "")), 0o644)
		return path
	}
	// An N4 edit is allowed: a warning, and a violation under --strict.
	n4 := write(func(c *dataset.Scenario) {
		for i := range c.Turns {
			if c.Turns[i].Label == "N4_R" {
				c.Turns[i].Text += " Anyway."
				return
			}
		}
	})
	code, stdout, stderr := runDatasetCLI(".", "dataset", "validate", n4)
	if code != ExitOK || !strings.Contains(stdout, "valid (24 scenarios, 12 pairs") || !strings.Contains(stdout, "; 1 warnings") ||
		!strings.Contains(stderr, "warning: [pair-n4-edit]") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want valid with one pair-n4-edit warning", code, stdout, stderr)
	}
	code, _, stderr = runDatasetCLI(".", "dataset", "validate", "--strict", n4)
	if code != ExitDeterministic || !strings.Contains(stderr, "[pair-n4-edit]") || strings.Contains(stderr, "warning:") || !strings.Contains(stderr, "1 violations") {
		t.Fatalf("--strict: exit %d, stderr %q; want the difference as a violation (exit 3: the dataset must change)", code, stderr)
	}
	code, stdout, _ = runDatasetCLI(".", "dataset", "validate", "--json", n4)
	var vs []dataset.Violation
	if code != ExitOK || json.Unmarshal([]byte(stdout), &vs) != nil || len(vs) != 1 || !vs[0].Warning {
		t.Fatalf("--json: exit %d, %v from %q; want one warning", code, vs, stdout)
	}
	// Issue 21: a reworded last turn is an error without --strict.
	last := write(func(c *dataset.Scenario) { c.Turns[len(c.Turns)-1].Text += " Anyway." })
	code, _, stderr = runDatasetCLI(".", "dataset", "validate", last)
	if code != ExitDeterministic || !strings.Contains(stderr, "[pair-rewrite]") || strings.Contains(stderr, "warning:") {
		t.Fatalf("reworded last turn: exit %d, stderr %q; want a pair-rewrite violation", code, stderr)
	}
}

func TestDatasetStats(t *testing.T) {
	code, stdout, stderr := runDatasetCLI(".", "dataset", "stats", "../../examples/scenarios")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"explicit           12   50.0%", "implicit           12   50.0%", "3 speakers", "4 speakers", "N4 events", "not synthesised"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stats lack %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = runDatasetCLI(".", "dataset", "stats", "--json", "../../examples/scenarios")
	var st dataset.Stats
	if code != ExitOK || json.Unmarshal([]byte(stdout), &st) != nil || st.Pairs != 12 || st.N4ByAsker == 0 || st.N4ByOther == 0 {
		t.Fatalf("--json: exit %d, %+v", code, st)
	}
}

// stats names the release and prints its hash, the one in MANIFEST.json, for the
// release directory and for one of its split files (issue 30).
func TestDatasetStatsPrintsTheReleaseHash(t *testing.T) {
	r, err := dataset.LoadRelease("../../datasets/open-v1")
	if err != nil {
		t.Fatal(err)
	}
	for path, label := range map[string]string{
		"../../datasets/open-v1":                     r.Name + " " + r.Version + " (" + r.SHA256 + ")",
		"../../datasets/open-v1/dev/scenarios.jsonl": r.Name + " " + r.Version + ", split dev (" + r.SHA256 + ")",
	} {
		code, stdout, stderr := runDatasetCLI(".", "dataset", "stats", path)
		if code != ExitOK || !strings.Contains(stdout, "release    "+label+"\n") {
			t.Errorf("stats %s: exit %d, %s; want the line %q in\n%s", path, code, stderr, label, stdout)
		}
	}
	code, stdout, _ := runDatasetCLI(".", "dataset", "stats", "--json", "../../datasets/open-v1")
	var st dataset.Stats
	if code != ExitOK || json.Unmarshal([]byte(stdout), &st) != nil || st.ReleaseSHA256 != r.SHA256 {
		t.Errorf("--json: exit %d, release_sha256 %q; want %q", code, st.ReleaseSHA256, r.SHA256)
	}
	if code, stdout, _ := runDatasetCLI(".", "dataset", "stats", "../../examples/scenarios"); code != ExitOK || strings.Contains(stdout, "release") {
		t.Errorf("a set that is no release's names one: %s", stdout)
	}
}

func TestDatasetGenerateIsReproducible(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	for _, p := range []string{a, b} {
		if code, _, stderr := runDatasetCLI(dir, "dataset", "generate", "--pairs", "20", "--seed", "4", "--out", p); code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	ra, _ := os.ReadFile(a)
	rb, _ := os.ReadFile(b)
	if !bytes.Equal(ra, rb) || len(ra) == 0 {
		t.Fatal("same seed, different files")
	}
	if code, _, stderr := runDatasetCLI(dir, "dataset", "validate", a); code != ExitOK {
		t.Fatalf("generated file does not validate: %s", stderr)
	}
	if code, _, _ := runDatasetCLI(dir, "dataset", "generate", "--pairs", "0", "--out", a); code != ExitUsage {
		t.Fatalf("--pairs 0: exit %d, want 2", code)
	}
}

func TestDatasetBadPaths(t *testing.T) {
	code, _, stderr := runDatasetCLI(".", "dataset", "validate", "/nonexistent/set")
	if code != ExitFailed || !strings.Contains(stderr, "/nonexistent/set") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := runDatasetCLI(".", "dataset", "validate"); code != ExitUsage {
		t.Fatalf("no path: exit %d, want 2", code)
	}
}

// CITATION.cff and the datasheet's BibTeX cite the release by the hash its manifest
// holds: a new release that forgets them fails here.
func TestCitationsNameTheReleaseHash(t *testing.T) {
	for release, sheet := range map[string]string{"open-v1": "datasheet.md", "open-v2": "datasheet-v2.md"} {
		r, err := dataset.LoadRelease("../../datasets/" + release)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"../../CITATION.cff", "../../docs/" + sheet} {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), r.SHA256) || !strings.Contains(string(b), r.Version) {
				t.Errorf("%s does not cite release %s %s", f, r.Version, r.SHA256)
			}
		}
	}
}
