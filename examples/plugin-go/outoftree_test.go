package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// recipe is the fenced block after <!-- recipe: name --> in docs/adding-a-model.md.
func recipe(t *testing.T, doc, name string) string {
	t.Helper()
	m := regexp.MustCompile("(?s)<!-- recipe: " + regexp.QuoteMeta(name) + " -->\n```[a-z]*\n(.*?)```").FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/adding-a-model.md has no recipe block %q", name)
	}
	return m[1]
}

// The out-of-tree Go plugin recipe of docs/adding-a-model.md works as written: its
// commands, run in a temporary directory outside the repository (with DUPLEXMPE set to
// this checkout, the one thing a reader changes), make a binary that passes the
// conformance suite.
func TestOutOfTreeRecipeBuildsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module outside the repository")
	}
	raw, err := os.ReadFile("../../docs/adding-a-model.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	setup := recipe(t, doc, "setup")
	line := regexp.MustCompile(`(?m)^DUPLEXMPE=\S+`)
	if !line.MatchString(setup) {
		t.Fatalf("the setup recipe does not start by naming the checkout:\n%s", setup)
	}
	setup = line.ReplaceAllLiteralString(setup, "DUPLEXMPE="+repo)
	dir := t.TempDir()
	run := func(script, in string) {
		t.Helper()
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir = in
		// Outside the repository: no workspace of ours, and the module comes only
		// through the recipe's replace line.
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s\n--- script:\n%s", err, out, script)
		}
	}
	run(setup, dir)
	mod := filepath.Join(dir, "my-model")
	if err := os.WriteFile(filepath.Join(mod, "main.go"), []byte(recipe(t, doc, "main.go")), 0o644); err != nil {
		t.Fatal(err)
	}
	run(recipe(t, doc, "build"), mod)
	gomod, _ := os.ReadFile(filepath.Join(mod, "go.mod"))
	if !strings.Contains(string(gomod), "replace github.com/duplexmpe/duplexmpe => "+repo) {
		t.Errorf("go.mod lacks the replace line:\n%s", gomod)
	}
	bin := filepath.Join(mod, "my-model")
	plugintest.Run(t, pluginhost.Spec{Name: "my_model", Source: bin}, plugintest.Options{})
	if t.Failed() {
		fmt.Fprintf(os.Stderr, "the recipe's module: %s\n", mod)
	}
}
