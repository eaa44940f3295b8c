package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Before, `score` and `report` on a missing directory exited 1 (a retry might pass);
// the input is wrong, so they exit 3, and so does prune.
func TestMissingRunDirectoryExits3(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"score", "nope"}, {"report", "nope"}, {"prune", "nope"}} {
		code, out, errs := runCLI(t, dir, args...)
		if code != ExitDeterministic || !strings.Contains(errs, "nope") {
			t.Errorf("duplexmpe %s: exit %d, want %d naming the directory\n%s\n%s", strings.Join(args, " "), code, ExitDeterministic, out, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, "nope")); err == nil {
			t.Errorf("duplexmpe %s created the missing directory", strings.Join(args, " "))
		}
	}
}

// Before, `run --var out=.` swept the run file's folder of every dotfile whose name
// held ".tmp" and exited 0. Now a run into a folder that holds files and is not a run
// directory is refused (exit 3) before anything is built or started, and nothing there
// changes.
func TestRunIntoAForeignFolderIsRefused(t *testing.T) {
	dir, runFile := runFixture(t, "3s")
	b, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	hcl := strings.Replace(string(b), `out     = "runs/e"`, `out     = var.out`, 1)
	if err := os.WriteFile(runFile, []byte("variable \"out\" {\n  default = \"runs/e\"\n}\n"+hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	keep := map[string]string{".notes.tmp": "mine", ".config.tmpl": "mine too"}
	for n, v := range keep {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runCLI(t, dir, "run", "--var", "out=.", runFile)
	if code != ExitDeterministic || !strings.Contains(errs, "--into-existing") || !strings.Contains(errs, "not a run directory") {
		t.Fatalf("run into the run file's folder: exit %d, want %d with the reason\n%s\n%s", code, ExitDeterministic, out, errs)
	}
	for n, v := range keep {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(b) != v {
			t.Errorf("%s changed: %q, %v", n, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "build")); err == nil {
		t.Errorf("the refused run built its dataset")
	}
}
