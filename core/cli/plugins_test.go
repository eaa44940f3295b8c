package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/tools/clitest"
)

var (
	builtMu      sync.Mutex
	builtPlugins = map[string]string{} // package directory -> binary
	builtDir     string
)

// buildPlugin builds the Go plugin in the repository directory pkg (such as
// "examples/plugin-go") once per test binary, into a temporary directory.
func buildPlugin(t *testing.T, pkg string) string {
	t.Helper()
	builtMu.Lock()
	defer builtMu.Unlock()
	if bin, ok := builtPlugins[pkg]; ok {
		return bin
	}
	if builtDir == "" {
		dir, err := os.MkdirTemp("", "duplexmpe-cli-plugins-")
		if err != nil {
			t.Fatal(err)
		}
		builtDir = dir
	}
	bin := filepath.Join(builtDir, filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, "../../"+pkg).CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
	builtPlugins[pkg] = bin
	return bin
}

// examplePlugin is the host tests' beeper (core/pluginhost/testdata/beeper): a model plugin named example-beeper, version
// 0.1.0, config threshold/tone_hz/tone_seconds.
func examplePlugin(t *testing.T) string { return buildPlugin(t, "core/pluginhost/testdata/beeper") }

func TestPlugins(t *testing.T) {
	bin := examplePlugin(t)
	dir := t.TempDir()
	// A plugin that exits at once instead of serving.
	broken := filepath.Join(dir, "broken.sh")
	clitest.WriteFile(t, broken, "#!/bin/sh\necho 'cannot load weights' >&2\nexit 3\n")
	if err := os.Chmod(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := clitest.Sha256File(t, bin)

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
`, ExitDeterministic, []string{`plugin "beeper": FAILED`}, []string{
			"Error: Version mismatch", "on run.hcl line 3", `version = "9.9.9"`, `Plugin "beeper" describes itself as version "0.1.0"`, "1 plugin failed: beeper"}},
		{"checksum pin", `plugin "beeper" {
  source   = "` + bin + `"
  checksum = "sha256:` + strings.Repeat("0", 64) + `"
}
`, ExitDeterministic, []string{`plugin "beeper": FAILED`}, []string{
			"Error: Checksum mismatch", "on run.hcl line 3", `plugin "beeper" refused`, strings.TrimPrefix(sum, "sha256:"), "1 plugin failed: beeper"}},
		{"config typo", `plugin "beeper" {
  source = "` + bin + `"
  config {
    treshold = 0.1
  }
}
`, ExitDeterministic, nil, []string{"Error: Unsupported argument", "on run.hcl line 4", `Plugin "beeper": An argument named "treshold" is not expected here. Did you mean "threshold"?`}},
		{"config type", `plugin "beeper" {
  source = "` + bin + `"
  config {
    tone_hz = "high"
  }
}
`, ExitDeterministic, nil, []string{"Error: Incorrect attribute value type", "on run.hcl line 4", "tone_hz: a number is required"}},
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
`, ExitDeterministic, nil, []string{
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
`, ExitDeterministic, nil, []string{"Error: Unsupported argument", "on run.hcl line 3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), tc.run)
			code, stdout, stderr := runInDir(t, dir, nil, "plugins", "run.hcl")
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			clitest.InOrder(t, "stdout", stdout, tc.stdout...)
			clitest.InOrder(t, "stderr", stderr, tc.stderr...)
		})
	}
}

func TestPluginsJSON(t *testing.T) {
	bin := examplePlugin(t)
	dir := t.TempDir()
	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), `plugin "beeper" {
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
	var reports []pluginstart.Report
	if err := json.Unmarshal([]byte(stdout), &reports); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	// The field names scripts read.
	for _, key := range []string{`"describe": {`, `"name": "example-beeper"`, `"protocol_version": 1`, `"kinds": [`, `"config": [`, `"default": 0.05`, `"uses": []`, `"failed": false`} {
		if !strings.Contains(stdout, key) {
			t.Errorf("the JSON has no %s:\n%s", key, stdout)
		}
	}
	if len(reports) != 1 {
		t.Fatalf("reports = %+v", reports)
	}
	r := reports[0]
	if r.Name != "beeper" || r.Failed || r.Source != bin || r.Hash != clitest.Sha256File(t, bin) || r.Info == nil ||
		r.Info.Name != "example-beeper" || r.Info.Version != "0.1.0" || r.Info.ProtocolVersion != 1 ||
		len(r.Info.Kinds) != 1 || r.Info.Kinds[0] != "model" || len(r.Info.Config) != 3 ||
		r.Config["tone_seconds"] != 1.0 || r.Config["threshold"] != 0.05 {
		t.Errorf("report = %+v, info %+v", r, r.Info)
	}

	// A failure is in the JSON too, with the problem spelled out.
	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), "plugin \"beeper\" {\n  source = \""+bin+"\"\n  version = \"2.0.0\"\n}\n")
	code, stdout, _ = runInDir(t, dir, nil, "plugins", "--json", "run.hcl")
	reports = nil
	if err := json.Unmarshal([]byte(stdout), &reports); err != nil || code != ExitDeterministic {
		t.Fatalf("exit %d, %v\n%s", code, err, stdout)
	}
	if !reports[0].Failed || len(reports[0].Problems) != 1 || !strings.HasPrefix(reports[0].Problems[0], "Version mismatch: ") {
		t.Errorf("failed report = %+v", reports[0])
	}
}

// pythonExample is the Python example's directory (run.sh starts it with the
// repository's .venv); the test is skipped without the .venv, and in -short mode.
func pythonExample(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real plugins")
	}
	dir, err := filepath.Abs("../../examples/plugin-python")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("../../.venv/bin/python"); err != nil {
		t.Skip("the Python example needs the repository's .venv: run `make deps-py` first")
	}
	return dir
}

// `plugins --configure` configures real plugin processes, the Go example and the
// Python example, with their config blocks: a good value prints the identity each then
// reports; a value each one's own check rejects (the schema allows it) is an error at
// the run file's line, in the plugin's words, and exits 3, since checking again fails
// the same way. A plugin that does not start still exits 1.
func TestPluginsConfigure(t *testing.T) {
	pyDir := pythonExample(t)
	goBin := buildPlugin(t, "examples/plugin-go")
	dir := t.TempDir()
	runFile := func(goThreshold, pyPause string) string {
		return `plugin "go" {
  source = "` + goBin + `"
  config {
    threshold = ` + goThreshold + `
  }
}
plugin "py" {
  command = ["./run.sh"]
  dir     = "` + pyDir + `"
  config {
    threshold = 0.2
    pause_ms  = ` + pyPause + `
  }
}
`
	}

	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), runFile("0.1", "500"))
	code, stdout, stderr := runInDir(t, dir, nil, "plugins", "run.hcl")
	if code != ExitOK || strings.Contains(stdout, "configured:") {
		t.Fatalf("without --configure: exit %d, want 0 and no configure\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runInDir(t, dir, nil, "plugins", "--configure", "run.hcl")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	clitest.InOrder(t, "stdout", stdout,
		`plugin "go": ok`, "configured: ok", "identity after configure:", "flite = ", "threshold = 0.1",
		`plugin "py": ok`, "configured: ok", "identity after configure:", "pause_ms = 500", "threshold = 0.2",
		"2 plugins: all checks passed")

	code, stdout, _ = runInDir(t, dir, nil, "plugins", "--configure", "--json", "run.hcl")
	var reports []pluginstart.Report
	if err := json.Unmarshal([]byte(stdout), &reports); err != nil || code != ExitOK || len(reports) != 2 {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, stdout)
	}
	if r := reports[1]; !r.Configured || r.Identity["pause_ms"] != "500" || !strings.Contains(stdout, `"configured_identity": {`) {
		t.Errorf("--json report of py: %+v", r)
	}

	// Values inside the schema's types that each plugin's own check refuses.
	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), runFile("2", "5"))
	if code, _, stderr := runInDir(t, dir, nil, "plugins", "run.hcl"); code != ExitOK {
		t.Fatalf("without --configure the bad values pass the schema; exit %d\n%s", code, stderr)
	}
	code, stdout, stderr = runInDir(t, dir, nil, "plugins", "--configure", "run.hcl")
	if code != ExitDeterministic {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitDeterministic, stdout, stderr)
	}
	clitest.InOrder(t, "stdout", stdout, `plugin "go": FAILED`, `plugin "py": FAILED`)
	clitest.InOrder(t, "stderr", stderr,
		"Error: Plugin rejected its config", "on run.hcl line 4", "threshold = 2",
		`Plugin "go" refused the config it was given: config threshold = 2: want a number in [0, 1]`,
		"Error: Plugin rejected its config", "on run.hcl line 12", "pause_ms  = 5",
		`Plugin "py" refused the config it was given: plugin speaker: Configure: pause_ms = 5.0: want 80 to 10000 ms`,
		"2 plugins failed: go, py")

	// A plugin that does not start may start on another try: exit 1, even beside a
	// rejected config.
	broken := filepath.Join(dir, "broken.sh")
	clitest.WriteFile(t, broken, "#!/bin/sh\necho 'cannot load weights' >&2\nexit 1\n")
	if err := os.Chmod(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), runFile("2", "500")+"plugin \"broken\" {\n  source = \""+broken+"\"\n}\n")
	code, _, stderr = runInDir(t, dir, nil, "plugins", "--configure", "run.hcl")
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d\nstderr:\n%s", code, ExitFailed, stderr)
	}
	clitest.InOrder(t, "stderr", stderr, `Plugin "go" refused`, "Error: Plugin did not start", "2 plugins failed: go, broken")
}

// A dataset's voices are checked against the voices its TTS plugin offers (the real
// flite plugin here).
func TestPluginsVoices(t *testing.T) {
	flite := buildPlugin(t, "plugins/flite")
	dir := t.TempDir()
	run := func(voices string) string {
		return `plugin "flite" {
  source = "` + flite + `"
}

dataset "d" {
  scenarios = "."
  tts       = plugin.flite
  voices    = ` + voices + `
}
`
	}
	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), run(`{ A = "kal16", B = "awb", C = "rms", D = "slt" }`))
	code, stdout, stderr := runInDir(t, dir, nil, "plugins", "run.hcl")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	clitest.InOrder(t, "stdout", stdout, `plugin "flite": ok`, "used as: tts", "voices: ", "kal16", "1 plugin: all checks passed")

	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), run(`{ A = "kal16", B = "abw", C = "rms", D = "nobody" }`))
	code, _, stderr = runInDir(t, dir, nil, "plugins", "run.hcl")
	if code != ExitDeterministic {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	clitest.InOrder(t, "stderr", stderr,
		"Error: Unknown voice", "on run.hcl line 8", `gives speaker B the voice "abw", which plugin "flite" does not offer`, `Did you mean "awb"?`,
		"Error: Unknown voice", `gives speaker D the voice "nobody"`, "1 plugin failed: flite")
}

// `plugins test` runs the conformance suite against real plugin processes of a run file:
// a Go baseline with its config block, the Go example and the Python example (through
// its run.sh). A plugin that breaks a rule fails, named with the check it failed.
func TestPluginsTestRunsTheConformanceSuite(t *testing.T) {
	pyDir := pythonExample(t)
	dir := t.TempDir()
	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), `plugin "silent" {
  source = "`+buildPlugin(t, "plugins/silent")+`"
  config {
    frame_ms = 1000
  }
}
plugin "beeper" {
  source = "`+examplePlugin(t)+`"
}
plugin "py" {
  command = ["./run.sh"]
  dir     = "`+pyDir+`"
}
plugin "loud" {
  source = "`+buildPlugin(t, "sdk/plugintest/internal/testplugin")+`"
  env    = { TESTPLUGIN_FAULT = "loud" }
}
`)
	code, stdout, stderr := runInDir(t, dir, nil, "plugins", "test", "run.hcl")
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitFailed, stdout, stderr)
	}
	clitest.InOrder(t, "stdout", stdout, `plugin "silent": ok`, `plugin "beeper": ok`, `plugin "py": ok`,
		`plugin "loud": FAILED`, "model/frames", "output sample")
	if !strings.Contains(stderr, "loud: model/frames") || strings.Contains(stderr, "silent:") {
		t.Errorf("stderr does not name exactly the failed check:\n%s", stderr)
	}

	code, stdout, stderr = runInDir(t, dir, nil, "plugins", "test", "run.hcl", "--plugin", "py")
	if code != ExitOK || !strings.Contains(stdout, `plugin "py": ok`) || strings.Contains(stdout, "silent") {
		t.Errorf("--plugin py: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr = runInDir(t, dir, nil, "plugins", "test", "run.hcl", "--plugin", "nosuch"); code != ExitUsage || !strings.Contains(stderr, "nosuch") {
		t.Errorf("--plugin nosuch: exit %d, %s", code, stderr)
	}
}
