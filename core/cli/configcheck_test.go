package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/tools/clitest"
)

// configTypoRun is a run file of real plugins whose silent model has a typo in its
// config block (line 7: "frame_mss" for frame_ms).
func configTypoRun(t *testing.T) (dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real plugins")
	}
	flite := buildFlitePlugin(t)
	silent, asr, judge := buildPlugin(t, "plugins/silent"), buildPlugin(t, "plugins/pocketsphinx"), buildPlugin(t, "plugins/lexical-judge")
	dir = t.TempDir()
	clitest.FirstPair(t, dir)
	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), fmt.Sprintf(`plugin "flite" { source = %q }
plugin "pocketsphinx" { source = %q }
plugin "lexical" { source = %q }
plugin "silent" {
  source = %q
  config {
    frame_mss = 80
  }
}

dataset "one" {
  scenarios = "scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out       = "build/one"
}

evaluation "e" {
  dataset = dataset.one
  models  = [plugin.silent]
  asr     = plugin.pocketsphinx
  judge   = plugin.lexical
  out     = "runs/e"
}
`, flite, asr, judge, silent))
	return dir
}

// Issue 30: a typo inside a plugin's config block was reported only after the dataset
// was built (hours with neural voices). validate now checks every config block against
// the schema its plugin describes, exit 3 at the line; --no-start skips that check.
func TestValidateChecksPluginConfigAgainstItsSchema(t *testing.T) {
	dir := configTypoRun(t)
	code, stdout, stderr := runInDir(t, dir, nil, "validate", "run.hcl")
	if code != ExitDeterministic || strings.Contains(stdout, "ok") {
		t.Fatalf("validate: exit %d, want 3\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, want := range []string{"Error: Unsupported argument", "on run.hcl line 7", "frame_mss", `Did you mean "frame_ms"?`, `Plugin "silent"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("validate: stderr lacks %q:\n%s", want, stderr)
		}
	}
	if code, _, stderr := runInDir(t, dir, nil, "validate", "--no-start", "run.hcl"); code != ExitOK {
		t.Errorf("validate --no-start: exit %d, want 0 (the schema check is skipped):\n%s", code, stderr)
	}
	fixed, _ := os.ReadFile(filepath.Join(dir, "run.hcl"))
	clitest.WriteFile(t, filepath.Join(dir, "fixed.hcl"), strings.Replace(string(fixed), "frame_mss", "output_rate", 1))
	if code, stdout, stderr := runInDir(t, dir, nil, "validate", "fixed.hcl"); code != ExitOK || !strings.Contains(stdout, "ok") {
		t.Errorf("validate of the fixed file: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "build")); err == nil {
		t.Error("validate built something")
	}
}

// run makes the same check for every plugin of the evaluation before it builds the
// dataset: the dataset's out folder is not even created.
func TestRunChecksPluginConfigBeforeBuilding(t *testing.T) {
	dir := configTypoRun(t)
	code, _, stderr := runInDir(t, dir, nil, "run", "run.hcl")
	if code != ExitDeterministic {
		t.Fatalf("run: exit %d, want 3\n%s", code, stderr)
	}
	for _, want := range []string{"on run.hcl line 7", "frame_mss", `Did you mean "frame_ms"?`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("run: stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "build", "one")); err == nil {
		t.Error("run created the dataset's out folder before refusing the config block")
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "e")); err == nil {
		t.Error("run created the run directory before refusing the config block")
	}
}
