package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/tests/reliability/damage"
)

// Before, one damaged finished item stopped scoring for the whole run and was never
// replayed. Now score scores the rest, reports the damaged one and exits non-zero, and
// the next run plays it again, alone.
func TestDamagedItemNeverStopsScoring(t *testing.T) {
	dir, runFile := runFixture(t, "3s")
	if code, out, errs := runCLI(t, dir, "run", runFile); code != ExitOK {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	s, err := store.Open(filepath.Join(dir, "runs", "e"))
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := s.IDs()
	victim := ids[0]
	for _, f := range []string{"verdicts.json"} {
		os.Remove(filepath.Join(s.ItemDir(victim), f)) // scored again once replayed
	}
	if err := damage.Items[1].Damage(s.ItemDir(victim)); err != nil { // garbage timeline.json
		t.Fatal(err)
	}

	code, out, errs := runCLI(t, dir, "score", "runs/e")
	if code == ExitOK || !strings.Contains(out, "scored 3 conversations") ||
		!strings.Contains(errs, victim) || !strings.Contains(errs, "timeline.json does not parse") || !strings.Contains(errs, "run `duplexmpe run`") {
		t.Fatalf("score with a damaged item: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCLI(t, dir, "run", runFile)
	if code != ExitOK || !strings.Contains(out, "1 played (1 of them found damaged in the store)") || !strings.Contains(out, "scored 4 conversations (1 now, 3 reused)") {
		t.Fatalf("the run after: exit %d\n%s\n%s", code, out, errs)
	}
}
