package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's package map ("How it fits together") names every package directly under
// core/: it listed 14 of 25, so a newcomer could not find where a thing lives.
func TestReadmeMapsEveryCorePackage(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "## How it fits together")
	if start < 0 {
		t.Fatal("README.md has no section How it fits together")
	}
	section := text[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	dirs, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		goFiles, _ := filepath.Glob(filepath.Join("..", d.Name(), "*.go"))
		if len(goFiles) == 0 && d.Name() != "cmd" {
			continue
		}
		n++
		if !strings.Contains(section, "`core/"+d.Name()+"`") && !strings.Contains(section, "`core/"+d.Name()+"/") {
			t.Errorf("README.md's package map does not name core/%s", d.Name())
		}
	}
	if n < 20 {
		t.Errorf("found only %d packages under core/", n)
	}
}

// Every Markdown document a Go file cites exists: doc comments cited an architecture
// document (.md) that was never written. A bare name is a document at the root or in docs/, or one the
// harness writes (report.md, reference.md); a path is from the repository root.
func TestGoCommentsCiteDocumentsThatExist(t *testing.T) {
	root := filepath.Join("..", "..")
	written := map[string]bool{"report.md": true, "reference.md": true, "compare.md": true}
	external := map[string]bool{"rust": true, "OUT": true} // moshi's rust/protocol.md; OUT/ of a command's help
	cite := regexp.MustCompile(`(?:\.\./)*([A-Za-z0-9_][A-Za-z0-9_./-]*\.md)\b`)
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".cache", ".venv", ".venv-whisper", "node_modules", "build", "bin", "runs":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		files++
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range cite.FindAllStringSubmatch(string(src), -1) {
			name := m[1]
			first, _, nested := strings.Cut(name, "/")
			switch {
			case nested && external[first]:
			case nested:
				if _, err := os.Stat(filepath.Join(root, name)); err != nil {
					t.Errorf("%s cites %s, which does not exist", path, name)
				}
			case written[name]:
			default:
				_, atRoot := os.Stat(filepath.Join(root, name))
				_, inDocs := os.Stat(filepath.Join(root, "docs", name))
				if atRoot != nil && inDocs != nil {
					t.Errorf("%s cites %s, which is neither at the root nor in docs/", path, name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Errorf("read only %d Go files", files)
	}
}

// The README's command table ("Commands") names every command and subcommand of the
// binary: `plugins test` was missing (issue 30).
func TestReadmeCommandTableIsComplete(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "\n## Commands")
	if start < 0 {
		t.Fatal("README.md has no section Commands")
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	root := newRoot(&State{Stdout: &strings.Builder{}, Stderr: &strings.Builder{}})
	n := 0
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		names := []string{c.Name()}
		if c.Name() == "plugins" {
			for _, sub := range c.Commands() {
				names = append(names, "plugins "+sub.Name())
			}
		}
		for _, name := range names {
			n++
			// A row starts "| `duplexmpe NAME" (or lists it among others: "dataset
			// validate|stats", "sample RUN_DIR` / `agreement").
			if !regexp.MustCompile("(`duplexmpe |` / `)" + regexp.QuoteMeta(name) + "[ `|]").MatchString(section) {
				t.Errorf("README.md's command table has no row for duplexmpe %s", name)
			}
		}
	}
	if n < 20 {
		t.Errorf("found only %d commands", n)
	}
}
