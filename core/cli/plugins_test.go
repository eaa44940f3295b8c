package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	examplePluginOnce sync.Once
	examplePluginPath string
	examplePluginErr  error
)

// examplePlugin builds the Go example plugin (examples/plugin-go, a model plugin named
// example-beeper, version 0.1.0, config threshold/tone_hz/tone_seconds) once per test
// binary, into a temporary directory.
func examplePlugin(t *testing.T) string {
	t.Helper()
	examplePluginOnce.Do(func() {
		dir, err := os.MkdirTemp("", "duplexmpe-cli-plugin-")
		if err != nil {
			examplePluginErr = err
			return
		}
		examplePluginPath = filepath.Join(dir, "plugin-go")
		out, err := exec.Command("go", "build", "-o", examplePluginPath, "../../examples/plugin-go").CombinedOutput()
		if err != nil {
			examplePluginErr = err
			examplePluginPath = string(out)
		}
	})
	if examplePluginErr != nil {
		t.Fatalf("building examples/plugin-go: %v\n%s", examplePluginErr, examplePluginPath)
	}
	return examplePluginPath
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// inOrder checks that text contains each of want, in order.
func inOrder(t *testing.T, what, text string, want ...string) {
	t.Helper()
	rest := text
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("%s lacks %q (in order):\n%s", what, w, text)
		}
		rest = rest[i+len(w):]
	}
}

func TestPlugins(t *testing.T) {
	bin := examplePlugin(t)
	dir := t.TempDir()
	// A plugin that exits at once instead of serving.
	broken := filepath.Join(dir, "broken.sh")
	writeFile(t, broken, "#!/bin/sh\necho 'cannot load weights' >&2\nexit 3\n")
	if err := os.Chmod(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256File(t, bin)

	cases := []struct {
		name   string
		run    string
		code   int
		stdout []string
		stderr []string
	}{
		{"good", `plugin "beeper" {
  source   = "` + bin + `"
  version  = "0.1.0"
  checksum = "` + sum + `"
  config {
    threshold = 0.1
  }
}
`, ExitOK, []string{
			`plugin "beeper": ok`, "hash: " + sum, "describes: example-beeper 0.1.0, protocol 1, kinds model",
			"config schema:", "threshold (number, default 0.05)", "tone_hz (number, default 440)",
			`config: {"threshold":0.1,"tone_hz":440,"tone_seconds":0.4}`, "1 plugin: all checks passed"}, nil},
		{"version pin", `plugin "beeper" {
  source  = "` + bin + `"
  version = "9.9.9"
}
`, ExitFailed, []string{`plugin "beeper": FAILED`}, []string{
			"Error: Version mismatch", "on run.hcl line 3", `version = "9.9.9"`, `Plugin "beeper" describes itself as version "0.1.0"`, "1 plugin failed: beeper"}},
		{"checksum pin", `plugin "beeper" {
  source   = "` + bin + `"
  checksum = "sha256:` + strings.Repeat("0", 64) + `"
}
`, ExitFailed, []string{`plugin "beeper": FAILED`}, []string{
			"Error: Checksum mismatch", "on run.hcl line 3", `plugin "beeper" refused`, strings.TrimPrefix(sum, "sha256:"), "1 plugin failed: beeper"}},
		{"config typo", `plugin "beeper" {
  source = "` + bin + `"
  config {
    treshold = 0.1
  }
}
`, ExitFailed, nil, []string{"Error: Unsupported argument", "on run.hcl line 4", `Plugin "beeper": An argument named "treshold" is not expected here. Did you mean "threshold"?`}},
		{"config type", `plugin "beeper" {
  source = "` + bin + `"
  config {
    tone_hz = "high"
  }
}
`, ExitFailed, nil, []string{"Error: Incorrect attribute value type", "on run.hcl line 4", "tone_hz: a number is required"}},
		{"wrong role", `plugin "beeper" {
  source = "` + bin + `"
}
plugin "other" {
  source = "` + bin + `"
}
dataset "d" {
  scenarios = "."
  tts       = plugin.beeper
  voices    = { A = "a", B = "b", C = "c" }
}
evaluation "e" {
  dataset = dataset.d
  models  = [plugin.beeper]
  asr     = plugin.other
  judge   = plugin.other
}
`, ExitFailed, nil, []string{
			"Error: Plugin cannot play its role", "on run.hcl line 9", `Plugin "beeper" is used here as a TTS, but it serves only: model`,
			"on run.hcl line 15", `Plugin "other" is used here as an ASR`, "on run.hcl line 16", `as a judge`,
			"2 plugins failed: beeper, other"}},
		{"does not start", `plugin "broken" {
  source = "` + broken + `"
}
plugin "beeper" {
  source = "` + bin + `"
}
`, ExitFailed, []string{`plugin "broken": FAILED`, `plugin "beeper": ok`}, []string{
			"Error: Plugin did not start", "on run.hcl line 1", `plugin "broken"`, "1 plugin failed: broken"}},
		{"bad run file starts nothing", `plugin "beeper" {
  source = "` + bin + `"
  sorce  = "x"
}
`, ExitFailed, nil, []string{"Error: Unsupported argument", "on run.hcl line 3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, filepath.Join(dir, "run.hcl"), tc.run)
			code, stdout, stderr := runInDir(t, dir, nil, "plugins", "run.hcl")
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			inOrder(t, "stdout", stdout, tc.stdout...)
			inOrder(t, "stderr", stderr, tc.stderr...)
		})
	}
}

func TestPluginsJSON(t *testing.T) {
	bin := examplePlugin(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "run.hcl"), `plugin "beeper" {
  source = "`+bin+`"
  config {
    tone_seconds = 1
  }
}
`)
	code, stdout, stderr := runInDir(t, dir, nil, "plugins", "--json", "run.hcl")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var reports []pluginReport
	if err := json.Unmarshal([]byte(stdout), &reports); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if len(reports) != 1 {
		t.Fatalf("reports = %+v", reports)
	}
	r := reports[0]
	if r.Name != "beeper" || r.Failed || r.Source != bin || r.Hash != sha256File(t, bin) || r.Info == nil ||
		r.Info.Name != "example-beeper" || r.Info.Version != "0.1.0" || r.Info.ProtocolVersion != 1 ||
		len(r.Info.Kinds) != 1 || r.Info.Kinds[0] != "model" || len(r.Info.Config) != 3 ||
		r.Config["tone_seconds"] != 1.0 || r.Config["threshold"] != 0.05 {
		t.Errorf("report = %+v, info %+v", r, r.Info)
	}
}
