package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/tools/clitest"
)

// Before, `duplexmpe plugins` printed what a plugin describes (its description and
// identity) raw, and `validate` quoted the run file's own lines raw in its snippets: an
// ESC sequence there reached the terminal and was obeyed. Now both print escaped.
func TestPluginTextAndRunFileLinesAreEscaped(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real plugin")
	}
	bin := buildPlugin(t, "tests/reliability/faulty")
	dir := t.TempDir()
	// The fault plugin's identity repeats the conversations it is configured with.
	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), `plugin "f" {
  source = "`+bin+`"
  config {
    conversations = ["\u001b[2J\u001b]0;owned\u0007"]
  }
}
`)
	code, stdout, stderr := runInDir(t, dir, nil, "plugins", "--configure", "run.hcl")
	if code != ExitOK || !strings.Contains(stdout, `conversations = \x1b[2J\x1b]0;owned\x07`) {
		t.Fatalf("plugins: exit %d, want 0 and the identity escaped\nstdout:\n%q\nstderr:\n%s", code, stdout, stderr)
	}
	if strings.ContainsRune(stdout+stderr, '\x1b') {
		t.Errorf("plugins printed a raw ESC:\n%q", stdout+stderr)
	}

	clitest.WriteFile(t, filepath.Join(dir, "bad.hcl"), "plugin \"f\" {\n  source = \""+bin+"\"\n  start_timeout = 5\x1b[2J\n}\n")
	code, stdout, stderr = runInDir(t, dir, nil, "validate", "bad.hcl")
	if code != ExitDeterministic || !strings.Contains(stderr, `\x1b[2J`) {
		t.Fatalf("validate: exit %d, want 3 and the line escaped\nstderr:\n%q", code, stderr)
	}
	if strings.ContainsRune(stdout+stderr, '\x1b') {
		t.Errorf("validate printed a raw ESC:\n%q", stderr)
	}
}

// A block name with a zero-width space, or written in NFD, prints like another name:
// refused, naming the character; a 200 KB name is shortened in the message.
func TestBlockNamesRefuseInvisibleCharacters(t *testing.T) {
	dir := t.TempDir()
	for name, want := range map[string]string{
		"sil\u200bent":                          "invisible character U+200B",
		"cafe\u0301":                            "normal form C",
		strings.Repeat("x", 200<<10) + "\u200b": "bytes in all",
	} {
		clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), "plugin \""+name+"\" {\n  source = \"x\"\n}\n")
		code, stdout, stderr := runInDir(t, dir, nil, "validate", "run.hcl")
		if code != ExitDeterministic || !strings.Contains(stderr, want) {
			t.Errorf("plugin %.20q: exit %d, want 3 and %q in\n%.2000s", name, code, want, stderr)
		}
		if n := len(stdout + stderr); n > 20<<10 {
			t.Errorf("plugin %.20q: %d bytes of output; a long name must not be echoed whole", name, n)
		}
	}
}
