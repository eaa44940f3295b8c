package pluginstart_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pluginhost.KillAll()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

// runFile writes a run file with the beeper test plugin (copied next to it, so that the
// test can change the binary) and loads it.
func runFile(t *testing.T, extra string) (*config.File, string) {
	t.Helper()
	dir := t.TempDir()
	// The host tests' tone plugin: a fixed schema to check (examples/plugin-go changes).
	b, err := os.ReadFile(plugintest.BuildGo(t, "../pluginhost/testdata/beeper"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "beeper")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "plugin \"beeper\" {\n  source = \"beeper\"\n" + extra + "}\n"
	if err := os.WriteFile(filepath.Join(dir, "run.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	f, diags := config.Load(filepath.Join(dir, "run.hcl"), config.Options{Cwd: dir})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return f, bin
}

func start(t *testing.T, f *config.File) (*pluginstart.Plugin, error) {
	t.Helper()
	s, err := pluginstart.NewStarter(f, pluginstart.Options{})
	if err != nil {
		return nil, err
	}
	p, err := s.Start(context.Background(), f.Plugin("beeper"))
	if err == nil {
		t.Cleanup(p.Kill)
	}
	return p, err
}

// Start configures the plugin with its config block, defaults filled in, and records
// what it describes once configured, with the hash that pins it.
func TestStartConfiguresAndRecords(t *testing.T) {
	f, bin := runFile(t, "  config {\n    tone_hz = 880\n  }\n")
	p, err := start(t, f)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"threshold": 0.05, "tone_hz": 880.0, "tone_seconds": 0.4}
	if !reflect.DeepEqual(p.Config, want) {
		t.Errorf("config %v; want %v", p.Config, want)
	}
	hash, _ := pluginhost.HashFile(bin)
	rec := p.Record(sdk.KindModel)
	if rec.Name != "beeper" || rec.Role != sdk.KindModel || rec.Plugin != "example-beeper" || rec.Version != "0.1.0" || rec.Hash != hash || !reflect.DeepEqual(rec.Config, want) {
		t.Errorf("record %+v", rec)
	}
	if rec.Identity["tone_hz"] != "880" {
		t.Errorf("identity %v: not the one reported after Configure", rec.Identity)
	}
}

// A config block that does not fit the schema is refused with diagnostics that point
// into the run file.
func TestStartRefusesABadConfigBlock(t *testing.T) {
	f, _ := runFile(t, "  config {\n    tone_hz = \"high\"\n  }\n")
	_, err := start(t, f)
	var de *pluginstart.DiagnosticsError
	if !errors.As(err, &de) || !strings.Contains(de.Diags[0].Subject.Filename, "run.hcl") {
		t.Fatalf("error %v; want diagnostics pointing into run.hcl", err)
	}
}

// The lock file keeps unknown code from running: with one next to the run file, a
// plugin that no longer matches it is refused before it starts.
func TestStartChecksTheLockFile(t *testing.T) {
	f, bin := runFile(t, "")
	s, _ := pluginstart.NewStarter(f, pluginstart.Options{})
	hash, _ := pluginstart.Hash(pluginstart.HostSpec(f.Plugin("beeper")))
	if err := s.Pins.CheckFiles(f.Plugin("beeper"), hash); err != nil {
		t.Errorf("no lock file: %v", err)
	}
	res, diags, err := pluginstart.LockFile(context.Background(), f, pluginstart.Options{}, false)
	if err != nil || diags.HasErrors() || !res.Written || len(res.Plugins) != 1 || res.Plugins[0].Entry.Hashes[0] != hash {
		t.Fatalf("LockFile: %+v %v %v", res, diags, err)
	}
	p, err := start(t, f)
	if err != nil {
		t.Fatalf("locked and unchanged: %v", err)
	}
	p.Kill() // a running executable cannot be written
	fh, err := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.Write([]byte{0})
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	changed, _ := pluginstart.Hash(pluginstart.HostSpec(f.Plugin("beeper")))
	want := fmt.Sprintf(`%s:%d: plugin "beeper": its files hash to %s, but %s pins %s (changed %s); if the change of the plugin is intended, re-pin it with `+"`duplexmpe lock --upgrade %s`",
		f.Path, f.Plugin("beeper").DeclRange.Start.Line, changed, f.LockPath(), hash, bin, f.Path)
	if _, err := start(t, f); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("changed binary: %v\nwant a refusal starting %q", err, want)
	}
	if err := os.WriteFile(f.LockPath(), []byte("plugin {"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := start(t, f); err == nil || !strings.Contains(err.Error(), "lock file") {
		t.Errorf("bad lock file: %v", err)
	}
}

// A value that fits the schema but that the plugin's own Configure refuses is a
// diagnostic at the attribute it names, in the plugin's words, and a deterministic
// failure: the same config is refused on every try.
func TestStartReportsAConfigThePluginRejects(t *testing.T) {
	f, _ := runFile(t, "  config {\n    threshold = 0.1\n    tone_hz   = 20000\n  }\n")
	_, err := start(t, f)
	var de *pluginstart.DiagnosticsError
	if !errors.As(err, &de) || len(de.Diags) != 1 {
		t.Fatalf("error %v; want one diagnostic", err)
	}
	d := de.Diags[0]
	if d.Summary != "Plugin rejected its config" || d.Subject == nil || d.Subject.Start.Line != 5 ||
		!strings.Contains(d.Detail, `Plugin "beeper" refused the config it was given: config tone_hz = 20000: want a frequency in (0, 12000) Hz`) {
		t.Errorf("diagnostic %q %q at %v", d.Summary, d.Detail, d.Subject)
	}
	if !fault.IsDeterministic(err) {
		t.Errorf("%v is not deterministic", err)
	}
}

// A command plugin whose dir holds the run file (dir = "."): a second run file, its
// lock file and a `score --out` view written there leave the plugin's pin alone, and a
// refusal names the file that changed (issue 30).
func TestPinIgnoresTheHarnessAndNamesTheChangedFile(t *testing.T) {
	f, _ := runFile(t, "")
	dir := filepath.Dir(f.Path)
	src := "plugin \"beeper\" {\n  command = [\"./beeper\"]\n  dir = \".\"\n}\n"
	if err := os.WriteFile(f.Path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	f, diags := config.Load(f.Path, config.Options{Cwd: dir})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	res, diags, err := pluginstart.LockFile(context.Background(), f, pluginstart.Options{}, false)
	if err != nil || diags.HasErrors() || !res.Written {
		t.Fatalf("lock: %v %v %+v", err, diags, res)
	}
	for name, content := range map[string]string{
		"second.hcl":                       src,
		"second.lock.hcl":                  "# pins of another run file\n",
		"views/strict/.duplexmpe-run.lock": "",
		"views/strict/summary.json":        "{}\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := start(t, f); err != nil {
		t.Fatalf("what the harness wrote beside the plugin refused it: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("a plugin file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = start(t, f)
	if err == nil || !strings.Contains(err.Error(), "added notes.txt") || !fault.IsDeterministic(err) {
		t.Fatalf("a new plugin file: err = %v; want a deterministic refusal naming notes.txt", err)
	}
}
