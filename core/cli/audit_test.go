package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audit"
)

// dataset audit prints every check with its goal and exits 3 when one fails (open v1
// fails them all); --json carries the same checks; a missing path is exit 3 with the path.
func TestDatasetAudit(t *testing.T) {
	code, stdout, stderr := runDatasetCLI(".", "dataset", "audit", "../../datasets/open-v1")
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
	code, stdout, _ = runDatasetCLI(".", "dataset", "audit", "--json", "../../datasets/open-v1")
	var r audit.Report
	if code != ExitDeterministic || json.Unmarshal([]byte(stdout), &r) != nil || len(r.Checks) != 9 || r.Failed() != 8 {
		t.Fatalf("--json: exit %d, %d checks, %d failed", code, len(r.Checks), r.Failed())
	}
	code, _, stderr = runDatasetCLI(".", "dataset", "audit", "../../datasets/no-such-set")
	if code != ExitDeterministic || !strings.Contains(stderr, "no-such-set") {
		t.Fatalf("missing set: exit %d, %q", code, stderr)
	}
}
