package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/score"
)

// Issue 31 point 9: a link made after the start-of-run check was followed, and six of the
// viewer's files were written outside the run directory. Writing the report checks the
// directory again: a viewer/ folder replaced by a link to a folder outside is refused
// (exit 3, naming it), and nothing is written there.
func TestReportRefusesALinkMadeDuringTheRun(t *testing.T) {
	items := fixture(2)
	dir, _ := supersededRun(t, items)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "viewer")); err != nil {
		t.Fatal(err)
	}
	err := WriteAll(dir, score.Summarize(items, testParams(30)), testMeta())
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "viewer")) || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("report through a linked viewer/: %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("%d files written outside the run directory", len(ents))
	}
}
