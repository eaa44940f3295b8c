package cli

import (
	"os"
	"strings"
	"testing"
)

// A judge block kept for `score --judge` is used by that command: score draws no "Unused
// plugin" warning for it (it drew one, twice), and run, which does not use it, warns once.
func TestScoreJudgeIsNotAnUnusedPlugin(t *testing.T) {
	dir, runFile := runFixture(t, "3s")
	src, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	lexical := buildPlugin(t, "plugins/lexical-judge")
	if err := os.WriteFile(runFile, append(src, []byte("plugin \"second\" { source = \""+lexical+"\" }\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, dir, "run", runFile)
	if code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	if n := strings.Count(errs, "Unused plugin"); n != 1 || !strings.Contains(errs, "score RUN_DIR --judge second") {
		t.Errorf("run warns of the unused judge %d times (want once, naming score --judge):\n%s", n, errs)
	}
	code, out, errs = runCLI(t, dir, "score", "runs/e", "--judge", "second", "--out", "views/second")
	if code != ExitOK {
		t.Fatalf("score --judge second: exit %d\n%s\n%s", code, out, errs)
	}
	if strings.Contains(out+errs, "Unused plugin") {
		t.Errorf("score --judge second warns that the judge it uses is unused:\n%s\n%s", out, errs)
	}
}
