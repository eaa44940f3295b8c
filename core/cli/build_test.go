package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
)

// buildFlitePlugin builds the real flite plugin for the build command's tests.
func buildFlitePlugin(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("flite is not installed (scripts/install-apt.sh)")
	}
	bin := filepath.Join(t.TempDir(), "flite")
	cmd := exec.Command("go", "build", "-o", bin, "../../plugins/flite")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestBuildCommandBuildsValidatesAndReuses(t *testing.T) {
	bin := buildFlitePlugin(t)
	dir := t.TempDir()
	run := filepath.Join(dir, "run.hcl")
	os.WriteFile(run, []byte(fmt.Sprintf(`
plugin "flite" {
  source = %q
}

dataset "gen" {
  generate {
    generator = "procedural"
    pairs     = 2
    seed      = 3
  }
  tts    = plugin.flite
  voices = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out    = "out/gen"
}
`, bin)), 0o644)

	code, stdout, stderr := runDatasetCLI(dir, "build", "run.hcl")
	if code != ExitOK || !strings.Contains(stdout, "dataset gen: 4 scenarios (2 pairs)") || !strings.Contains(stdout, " 0 reused)") {
		t.Fatalf("first build: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "synthesising gen:") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	out := filepath.Join(dir, "out", "gen")
	if code, vout, verr := runDatasetCLI(dir, "dataset", "validate", out); code != ExitOK {
		t.Fatalf("built dataset does not validate: %s %s", vout, verr)
	}
	code, stats, _ := runDatasetCLI(dir, "dataset", "stats", out)
	if code != ExitOK || !strings.Contains(stats, "explicit            2   50.0%") || !strings.Contains(stats, "implicit            2   50.0%") || !strings.Contains(stats, "preamble") {
		t.Fatalf("stats:\n%s", stats)
	}

	code, stdout, stderr = runDatasetCLI(dir, "build", "run.hcl")
	if code != ExitOK || !strings.Contains(stdout, "(0 synthesised,") {
		t.Fatalf("rebuild synthesised clips: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestBuildCommandRefusesBadScenarios(t *testing.T) {
	// The scripts are checked before any plugin starts: no plugin binary is needed.
	bin := "bin/plugins/not-built"
	dir := t.TempDir()
	src := filepath.Join(dir, "scripts")
	os.MkdirAll(src, 0o755)
	raw, _ := os.ReadFile("../../examples/scenarios/scenarios.jsonl")
	bad := strings.Replace(string(raw), `"label":"N4_R"`, `"label":"N4_X"`, 1)
	os.WriteFile(filepath.Join(src, "scenarios.jsonl"), []byte(bad), 0o644)
	os.WriteFile(filepath.Join(dir, "run.hcl"), []byte(fmt.Sprintf(`
plugin "flite" {
  source = %q
}
dataset "bad" {
  scenarios = "scripts"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
}
`, bin)), 0o644)
	code, _, stderr := runDatasetCLI(dir, "build", "run.hcl")
	if code != ExitDeterministic || !strings.Contains(stderr, "scenarios.jsonl:1: scenario hand-01-explicit: turn 5: [label]") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "build")); !os.IsNotExist(err) {
		t.Error("a refused build wrote output")
	}
}

func TestBuildCommandPreambleFileAndDatasetFlag(t *testing.T) {
	bin := buildFlitePlugin(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "duty.txt"), []byte("Aria, answer when asked.\nStay quiet otherwise.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "run.hcl"), []byte(fmt.Sprintf(`
plugin "flite" {
  source = %q
  config {
    duration_stretch = 1.2
  }
}
dataset "one" {
  generate {
    generator = "procedural"
    pairs     = 1
  }
  tts      = plugin.flite
  voices   = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  preamble = "duty.txt"
}
`, bin)), 0o644)
	if code, _, stderr := runDatasetCLI(dir, "build", "--dataset", "other", "run.hcl"); code != ExitUsage || !strings.Contains(stderr, `"other"`) {
		t.Fatalf("unknown --dataset: exit %d, %s", code, stderr)
	}
	code, stdout, stderr := runDatasetCLI(dir, "build", "--dataset", "one", "run.hcl")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	d, err := dataset.Load(filepath.Join(dir, "build", "datasets", "one"))
	if err != nil {
		t.Fatal(err)
	}
	m := d.Manifest
	if m.Preamble.Text != "Aria, answer when asked. Stay quiet otherwise." || m.Preamble.DurationS < 1 || m.Preamble.DurationS > 8 {
		t.Errorf("preamble %+v", m.Preamble)
	}
	if m.TTS.Identity["duration_stretch"] != "1.2" || m.Generator.Kind != "procedural" || m.Generator.Seed == nil {
		t.Errorf("manifest identity: tts %+v, generator %+v", m.TTS, m.Generator)
	}
}
