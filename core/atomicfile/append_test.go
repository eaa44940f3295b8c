package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/fault"
)

// Issue 31: a link made after the start-of-run check was followed, and hard links were
// appended through (a plugin log or the scoring cache linked to a file outside the run
// grew that file). OpenAppend refuses both, before writing or truncating anything.
func TestOpenAppendRefusesLinks(t *testing.T) {
	dir, outside := t.TempDir(), filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sym, hard := filepath.Join(dir, "sym.log"), filepath.Join(dir, "hard.log")
	if err := os.Symlink(outside, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, hard); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, want string
		trunc      bool
	}{{sym, "symbolic link", false}, {sym, "symbolic link", true}, {hard, "hard links", false}, {hard, "hard links", true}} {
		f, err := OpenAppend(c.path, c.trunc)
		if err == nil {
			f.WriteString("appended\n")
			f.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !fault.IsDeterministic(err) {
			t.Errorf("%s (trunc %v): %v; want a deterministic refusal saying %q", c.path, c.trunc, err, c.want)
		}
		if b, _ := os.ReadFile(outside); string(b) != "precious\n" {
			t.Fatalf("the file outside became %q", b)
		}
	}
	own := filepath.Join(dir, "own.log")
	for i := 0; i < 2; i++ {
		f, err := OpenAppend(own, false)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("line\n")
		f.Close()
	}
	if b, _ := os.ReadFile(own); string(b) != "line\nline\n" {
		t.Errorf("own log %q", b)
	}
}
