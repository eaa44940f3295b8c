package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// Before, an empty run file (or one with only comments) validated as "ok".
func TestEmptyRunFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{"empty.hcl": "", "blank.hcl": "\n\n  \n", "comments.hcl": "# nothing yet\n// still nothing\n"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, diags := Load(path, Options{})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), "Empty run file") || !strings.Contains(diags.Error(), path) ||
			!strings.Contains(diags.Error(), "examples/runs/minimal.hcl") {
			t.Errorf("%s: diags = %v; want an empty-file error naming the file and a starting point", name, diags)
		}
	}
}

// A run file that starts with a UTF-8 byte-order mark (some Windows editors write one)
// reads like any other.
func TestRunFileWithBOM(t *testing.T) {
	dir := t.TempDir()
	f, diags := Parse([]byte("\xef\xbb\xbf"+`plugin "x" { source = "a" }`+"\n"), filepath.Join(dir, "run.hcl"), Options{})
	if diags.HasErrors() || f.Plugin("x") == nil {
		t.Fatalf("diags = %v", diags)
	}
}

func TestPluginDeadlinesAndLogLimit(t *testing.T) {
	dir := t.TempDir()
	src := `plugin "m" {
  source                     = "bin/m"
  start_timeout              = "20m"
  conversation_start_timeout = 30
  frame_timeout              = "5s"
  log_limit_mb               = 8
}
`
	f, diags := Parse([]byte(src), filepath.Join(dir, "run.hcl"), Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s := f.Plugin("m").Spec
	if s.StartTimeout != 20*time.Minute || s.ConversationStartTimeout != 30*time.Second || s.FrameTimeout != 5*time.Second || s.LogLimit != 8<<20 {
		t.Fatalf("spec = %+v", s)
	}
	if s.ConfigDir != dir {
		t.Fatalf("ConfigDir = %q, want the run file's directory %q", s.ConfigDir, dir)
	}
	for _, c := range []struct{ attr, want string }{
		{`frame_timeout = 0`, "would fail every call"},
		{`conversation_start_timeout = "soon"`, "is not a duration"},
		{`log_limit_mb = 0`, "must be between 1"},
	} {
		_, diags := Parse([]byte("plugin \"m\" {\n  source = \"a\"\n  "+c.attr+"\n}\n"), filepath.Join(dir, "run.hcl"), Options{})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), c.want) {
			t.Errorf("%s: diags = %v; want %q", c.attr, diags, c.want)
		}
	}
}

// A path-typed config field is a string to the run file; the host resolves it.
func TestPathConfigField(t *testing.T) {
	dir := t.TempDir()
	f, diags := Parse([]byte("plugin \"j\" {\n  source = \"a\"\n  config {\n    cache_dir = \"cache\"\n  }\n}\n"), filepath.Join(dir, "run.hcl"), Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cfg, diags := CheckPluginConfig(f.Plugin("j"), []sdk.ConfigField{{Name: "cache_dir", Type: sdk.TypePath}})
	if diags.HasErrors() || cfg["cache_dir"] != "cache" {
		t.Fatalf("cfg = %v, diags = %v; want the value as written (keys stay portable; the host resolves it)", cfg, diags)
	}
	_, diags = CheckPluginConfig(f.Plugin("j"), []sdk.ConfigField{{Name: "cache_dir", Type: sdk.TypeNumber}})
	if !diags.HasErrors() {
		t.Fatal("a string for a number field was accepted")
	}
}
