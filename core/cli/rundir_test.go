package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/tools/clitest"
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

// Issue 23: a second run file with the same evaluation name and out took the run
// directory over (exit 0), reported its own models only, and offered a prune that
// would delete the first one's results. A run directory belongs to the run file that
// made it: another is refused (exit 3) and nothing there changes; the same run file,
// edited, resumes; moved or renamed, it takes the directory back with --adopt.
func TestRunDirectoryBelongsToItsRunFile(t *testing.T) {
	dir, runFile, src := playedFixture(t)
	runDir := filepath.Join(dir, "runs", "e")
	snapshot := func() string {
		var b strings.Builder
		for _, f := range []string{"manifest.json", "run.json"} {
			data, err := os.ReadFile(filepath.Join(runDir, f))
			if err != nil {
				t.Fatal(err)
			}
			b.Write(data)
		}
		return b.String()
	}
	before := snapshot()

	other := filepath.Join(dir, "other.hcl")
	clitest.WriteFile(t, other, strings.Replace(string(src), "models  = [plugin.silent, plugin.beeper]", "models  = [plugin.beeper]", 1))
	code, out, errs := runCLI(t, dir, "run", "--no-score", other)
	if code != ExitDeterministic {
		t.Fatalf("another run file into the run directory: exit %d, want %d\n%s\n%s", code, ExitDeterministic, out, errs)
	}
	clitest.InOrder(t, "the refusal", errs, runDir+" was made by the run file "+runFile+", not by "+other,
		"an out of its own", "--adopt")
	if strings.Contains(out, "model beeper:") || snapshot() != before {
		t.Errorf("the refused run played or rewrote the run directory:\n%s", out)
	}

	// The same run file, edited (a model added), resumes: only the new model plays.
	edited := strings.Replace(string(src), "models  = [plugin.silent, plugin.beeper]", "models  = [plugin.silent, plugin.beeper, plugin.quiet]", 1)
	edited = strings.Replace(edited, `plugin "beeper"`, fmt.Sprintf("plugin \"quiet\" { source = %q }\nplugin \"beeper\"", buildPlugin(t, "plugins/silent")), 1)
	clitest.WriteFile(t, runFile, edited)
	code, out, errs = runCLI(t, dir, "run", "--no-score", runFile)
	if code != ExitOK {
		t.Fatalf("the edited run file: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "the edited run file", out, "plan silent: 2 conversations: 2 reused", "plan quiet: 2 conversations: 0 reused, 2 to play")

	// Renamed, it is refused until it adopts the directory; then it owns it.
	moved := filepath.Join(dir, "renamed.hcl")
	if err := os.Rename(runFile, moved); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, dir, "run", "--no-score", moved)
	if code != ExitDeterministic || !strings.Contains(errs, runFile+", which is no longer there, not by "+moved) {
		t.Fatalf("the renamed run file: exit %d, want %d saying the first is gone\n%s", code, ExitDeterministic, errs)
	}
	for i, args := range [][]string{{"--adopt", moved}, {moved}} {
		code, out, errs = runCLI(t, dir, append([]string{"run", "--no-score"}, args...)...)
		if code != ExitOK {
			t.Fatalf("run %q: exit %d\n%s\n%s", args, code, out, errs)
		}
		clitest.InOrder(t, fmt.Sprint("run ", args), out, "plan silent: 2 conversations: 2 reused", "plan quiet: 2 conversations: 2 reused", "plugins started: none")
		if i == 0 && strings.Contains(out, "earlier plans") {
			t.Errorf("adopting left items of an earlier plan:\n%s", out)
		}
	}
	// A link to the run file is the run file.
	link := filepath.Join(dir, "link.hcl")
	if err := os.Symlink(moved, link); err != nil {
		t.Fatal(err)
	}
	if code, out, errs = runCLI(t, dir, "run", "--no-score", link); code != ExitOK {
		t.Fatalf("run through a link to the run file: exit %d\n%s\n%s", code, out, errs)
	}
}

// playedFixture is runFixture (n4_gap 3 s) played once without scoring; src is the run
// file as it played.
func playedFixture(t *testing.T) (dir, runFile string, src []byte) {
	t.Helper()
	dir, runFile = runFixture(t, "3s")
	if code, out, errs := runCLI(t, dir, "run", "--no-score", runFile); code != ExitOK {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	src, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	return dir, runFile, src
}

// Issue 31: `report --out DIR` and `score --out DIR` overwrote a user's report.md,
// results.json and summary.json (exit 0) and deleted dotfiles named like old temporary
// files. A folder that is not this project's output is refused (exit 3) and nothing in it
// changes; a truncated manifest.json is deterministic (exit 3), not "retry" (1).
func TestOutFolderOfReportAndScoreAndDamagedManifest(t *testing.T) {
	dir, _, _ := playedFixture(t)
	runDir := filepath.Join(dir, "runs", "e")
	user := filepath.Join(dir, "mine")
	keep := map[string]string{"report.md": "my report", "results.json": "{}", "summary.json": "{}", ".draft.1.tmp": "draft", ".x.tmp-12": "x"}
	if err := os.MkdirAll(user, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, v := range keep {
		if err := os.WriteFile(filepath.Join(user, n), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"report", "--out", user, runDir}, {"score", "--out", user, runDir}} {
		code, out, errs := runCLI(t, dir, args...)
		if code != ExitDeterministic || !strings.Contains(errs, "not this project's output") {
			t.Errorf("duplexmpe %s: exit %d, want %d with the reason\n%s\n%s", strings.Join(args, " "), code, ExitDeterministic, out, errs)
		}
	}
	ents, _ := os.ReadDir(user)
	if len(ents) != len(keep) {
		t.Errorf("the refused commands left %d entries in the folder, want the user's %d", len(ents), len(keep))
	}
	for n, v := range keep {
		if b, err := os.ReadFile(filepath.Join(user, n)); err != nil || string(b) != v {
			t.Errorf("%s changed: %q, %v", n, b, err)
		}
	}
	// A new folder is this project's from then on: report writes there, and again.
	if code, out, errs := runCLI(t, dir, "score", runDir); code != ExitOK {
		t.Fatalf("score: exit %d\n%s\n%s", code, out, errs)
	}
	fresh := filepath.Join(dir, "view")
	for i := 0; i < 2; i++ {
		if code, out, errs := runCLI(t, dir, "report", "--out", fresh, runDir); code != ExitOK {
			t.Fatalf("report --out a new folder (%d): exit %d\n%s\n%s", i, code, out, errs)
		}
	}
	manifest := filepath.Join(runDir, "manifest.json")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"score", runDir}} { // report reads summary.json only
		code, out, errs := runCLI(t, dir, args...)
		if code != ExitDeterministic || !strings.Contains(errs, "manifest.json") {
			t.Errorf("duplexmpe %s on a truncated manifest: exit %d, want %d naming it\n%s\n%s", strings.Join(args, " "), code, ExitDeterministic, out, errs)
		}
	}
}
