package pluginhost_test

import (
	"crypto/sha256"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The h1 recipe, recomputed with find, sort and sha256sum: one sha256sum line per kept
// file, sorted by path; h1 is the base64 of the sha256 of those lines.
func TestHashDirMatchesCoreutils(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"plugin.py":                   "print('hi')\n",
		"run.sh":                      "exec python3 plugin.py\n",
		"pkg/B.py":                    "b",
		"pkg/a b.py":                  "space in name",
		"pkg/__pycache__/x.cpython.p": "cache",
		"pkg/mod.pyc":                 "compiled",
		".venv/bin/python":            "venv",
		".git/HEAD":                   "ref",
		".pytest_cache/v":             "cache",
		"data/weights.txt":            strings.Repeat("w", 100000),
	})
	if err := os.Symlink("plugin.py", filepath.Join(dir, "link.py")); err != nil {
		t.Fatal(err)
	}
	got, err := pluginhost.HashDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	script := `cd "$1" && find . -type f ! -path './.venv/*' ! -path './.git/*' ! -path './.pytest_cache/*' ! -path '*/__pycache__/*' ! -name '*.pyc' -print0 |
		sed -z 's|^\./||' | LC_ALL=C sort -z | xargs -0 sha256sum`
	out, err := exec.Command("bash", "-c", script, "bash", dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(out) // the summary lines are exactly sha256sum's output
	if want := "h1:" + base64.StdEncoding.EncodeToString(sum[:]); got != want {
		t.Fatalf("HashDir = %s; coreutils say %s from\n%s", got, want, out)
	}

	// Caches do not change the hash; code does.
	writeFiles(t, dir, map[string]string{"pkg/__pycache__/y.pyc": "more cache", ".venv/lib/z": "z"})
	if again, _ := pluginhost.HashDir(dir); again != got {
		t.Fatal("a cache file changed the hash")
	}
	writeFiles(t, dir, map[string]string{"plugin.py": "print('bye')\n"})
	if changed, _ := pluginhost.HashDir(dir); changed == got {
		t.Fatal("editing plugin.py did not change the hash")
	}
	if _, err := pluginhost.HashDir(filepath.Join(dir, "absent")); err == nil {
		t.Fatal("HashDir of a missing directory succeeded")
	}
}

func TestHashFileMatchesSha256sum(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bin")
	writeFiles(t, filepath.Dir(path), map[string]string{"bin": "\x7fELF not really"})
	got, err := pluginhost.HashFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sha256sum", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "sha256:" + strings.Fields(string(out))[0]; got != want {
		t.Fatalf("HashFile = %s; sha256sum says %s", got, want)
	}
	spec := pluginhost.Spec{Name: "p", Source: "bin", Dir: filepath.Dir(path)}
	if h, err := pluginhost.SpecHash(spec); err != nil || h != got {
		t.Fatalf("SpecHash(source relative to dir) = %s, %v; want %s", h, err, got)
	}
	if _, err := pluginhost.SpecHash(pluginhost.Spec{Name: "p", Command: []string{"python3"}}); err == nil || !strings.Contains(err.Error(), "set dir") {
		t.Fatalf("SpecHash of a command without dir: err = %v", err)
	}
}

// The paths of Spec.HashSkip (the run file, its lock file and the run's output kept in
// a plugin's dir) are not part of the plugin: adding or changing them leaves its hash,
// and a file of the same name elsewhere in the tree still counts.
func TestHashDirSkipsTheRunsFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"plugin.py": "print()\n", "sub/runs/e": "mine\n"})
	spec := pluginhost.Spec{Name: "p", Command: []string{"python3", "plugin.py"}, Dir: dir, HashSkip: []string{"run.hcl", "run.lock.hcl", "runs/e"}}
	before, err := pluginhost.SpecHash(spec)
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := pluginhost.HashDir(dir); plain != before {
		t.Fatalf("skipping paths that are not there changed the hash: %s, %s", before, plain)
	}
	writeFiles(t, dir, map[string]string{"run.hcl": "plugin {}\n", "run.lock.hcl": "pins\n", "runs/e/manifest.json": "{}\n", "runs/e/items/x/session.json": "{}\n"})
	if after, err := pluginhost.SpecHash(spec); err != nil || after != before {
		t.Errorf("the run's files changed the plugin's hash: %s, %v; want %s", after, err, before)
	}
	spec.Checksum = before
	if err := pluginhost.VerifyChecksum(spec); err != nil {
		t.Errorf("the checksum pin does not skip the run's files: %v", err)
	}
	writeFiles(t, dir, map[string]string{"sub/runs/e": "changed\n"})
	if after, _ := pluginhost.SpecHash(spec); after == before {
		t.Error("a plugin file named like a skipped path did not count")
	}
}

// What the harness writes into a plugin's dir (issue 30), beyond the paths the run file
// names: other run files and their lock files (every *.hcl), and the folders rundir
// locks (a run directory of another run file, a `score --out` view, a report folder)
// are no part of the plugin. A folder without the harness's lock still counts, and the
// lock file does not hide the plugin's own top folder.
func TestHashDirSkipsWhatTheHarnessWrites(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"plugin.py": "print()\n", "lib/util.py": "x = 1\n"})
	before, err := pluginhost.HashDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"second.hcl":                       "evaluation \"b\" {}\n",
		"second.lock.hcl":                  "# pins\n",
		".duplexmpe.lock.hcl":              "# old pins\n",
		"views/strict/.duplexmpe-run.lock": "",
		"views/strict/summary.json":        "{}\n",
		"views/strict/verdicts/x.json":     "{}\n",
		"other-run/.duplexmpe-run.lock":    "",
		"other-run/items/x/episodes.json":  "[]\n",
		"report/.duplexmpe-run.lock":       "",
		"report/report.html":               "<html>\n",
	})
	after, files, err := pluginhost.HashDirFiles(dir)
	if err != nil || after != before {
		t.Fatalf("what the harness wrote changed the plugin's hash: %s, %v; want %s (files %v)", after, err, before, files)
	}
	if len(files) != 2 || files["plugin.py"] == "" || files["lib/util.py"] == "" {
		t.Errorf("HashDirFiles listed %v; want plugin.py and lib/util.py", files)
	}
	writeFiles(t, dir, map[string]string{"views/other/summary.json": "{}\n"})
	if again, _ := pluginhost.HashDir(dir); again == before {
		t.Error("a folder the harness did not lock was left out of the hash")
	}
}

func TestDiffFilesNamesWhatChanged(t *testing.T) {
	pinned := map[string]string{"a.py": "1", "b.py": "2", "c.py": "3"}
	now := map[string]string{"a.py": "1", "b.py": "9", "d.py": "4"}
	got := strings.Join(pluginhost.DiffFiles(pinned, now), "; ")
	if want := "changed b.py; removed c.py; added d.py"; got != want {
		t.Errorf("DiffFiles = %q; want %q", got, want)
	}
}
