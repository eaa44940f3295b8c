package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run whose conversations failed scores and reports the rest, then exits 1: it could
// not finish its work, and running it again may (it plays them again). A model that
// answers with tones, which Silero does not call speech, is named under the main table
// with the VAD command to check it. Real plugin processes throughout: the reliability
// tests' faulty model sends a NaN sample (every conversation fails), the host tests'
// beeper answers loud input with a tone.
func TestRunSaysWhatFailedAndWhatWasNotSpeech(t *testing.T) {
	dir, runFile := runFixture(t, "3s")
	src, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	hcl := strings.Replace(string(src), "models  = [plugin.silent, plugin.beeper]", "models  = [plugin.silent, plugin.tone, plugin.nan]", 1)
	hcl += `
plugin "tone" { source = "` + examplePlugin(t) + `" }
plugin "nan" {
  source = "` + buildPlugin(t, "tests/reliability/faulty") + `"
  config {
    fault = "nan"
  }
}
`
	if err := os.WriteFile(runFile, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, dir, "run", runFile)
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitFailed, out, errs)
	}
	runDir := filepath.Join(dir, "runs", "e")
	inOrder(t, "stdout", out,
		"model silent: 2 conversations: 0 reused, 2 played, 0 failed",
		"model nan: 2 conversations: 0 reused, 0 played, 2 failed",
		"model nan: 2 failed conversations are not scored",
		"fresh onset",
		"model tone: audio but no speech in 2 of 2 conversations with audio",
		"so every measure above treats it as silence, and it never spoke at all",
		"duplexmpe vad "+filepath.Join(runDir, "items"),
		"report: "+filepath.Join(runDir, "report.html"))
	if strings.Contains(out, "model silent: audio but no speech") || strings.Contains(out, "model nan: audio but no speech") {
		t.Errorf("a model without audio is named as audio without speech:\n%s", out)
	}
	inOrder(t, "stderr", errs, `Error: evaluation "e": 2 conversations failed (nan: 2); each item's failure.json in `+runDir+` says why`)
	if _, err := os.Stat(filepath.Join(runDir, "report.html")); err != nil {
		t.Errorf("no report despite the failures: %v", err)
	}
}
