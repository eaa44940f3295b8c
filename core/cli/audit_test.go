package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audit"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// dataset audit prints every check with its goal and exits 3 when one fails (open v1
// fails all but the answers check, which puts the wrong answers to the real lexical judge
// started as a plugin); --json carries the same checks; --no-judge leaves the answers
// check not run; a missing path or judge is exit 3 naming it.
func TestDatasetAudit(t *testing.T) {
	judge := plugintest.BuildGo(t, "../../plugins/lexical-judge")
	code, stdout, stderr := runDatasetCLI(".", "dataset", "audit", "--no-judge", "../../datasets/open-v1")
	if code != ExitDeterministic {
		t.Fatalf("exit %d, want %d: %s", code, ExitDeterministic, stderr)
	}
	for _, want := range []string{"FAIL text", "FAIL phrases", "FAIL who asks T", "FAIL pause", "--   answers", "tuned on dev, scored on test"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("audit output lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "shortcut checks fail") {
		t.Errorf("stderr %q", stderr)
	}
	code, stdout, _ = runDatasetCLI(".", "dataset", "audit", "--json", "--judge", judge, "../../datasets/open-v1")
	var r audit.Report
	if code != ExitDeterministic || json.Unmarshal([]byte(stdout), &r) != nil || len(r.Checks) != 11 || r.Failed() != 9 {
		t.Fatalf("--json: exit %d, %d checks, %d failed:\n%s", code, len(r.Checks), r.Failed(), stdout)
	}
	// The wrong answers pass the judge in no pair, and every gold form passes it; v1's six
	// yes/no golds (5 yes, 1 no) are unbalanced.
	for _, c := range r.Checks {
		if c.Name == "answers" && (!c.Pass || c.NotRun || !strings.HasPrefix(c.Value, "0 of 430 pairs")) {
			t.Errorf("answers check: %+v", c)
		}
		if c.Name == "answers: golds accepted" && !c.Pass {
			t.Errorf("golds check: %+v", c)
		}
		if c.Name == "answers: yes/no golds" && (c.Pass || !strings.Contains(c.Value, "5 yes, 1 no")) {
			t.Errorf("yes/no check: %+v", c)
		}
	}
	code, _, stderr = runDatasetCLI(".", "dataset", "audit", "--judge", "no-such-judge", "../../datasets/open-v1")
	if code != ExitDeterministic || !strings.Contains(stderr, "no-such-judge") || !strings.Contains(stderr, "--judge") {
		t.Fatalf("missing judge: exit %d, %q", code, stderr)
	}
	code, _, stderr = runDatasetCLI(".", "dataset", "audit", "../../datasets/no-such-set")
	if code != ExitDeterministic || !strings.Contains(stderr, "no-such-set") {
		t.Fatalf("missing set: exit %d, %q", code, stderr)
	}
}
