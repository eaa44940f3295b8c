package plugintest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// built caches BuildGo's binaries for the life of the test process, by absolute
// package directory, so each plugin is compiled once however many tests use it.
var built struct {
	sync.Mutex
	dir  string
	bins map[string]string
}

// ReproducibleBuild is the `go build` command line, less "go", that builds a plugin the
// way the Makefile does: -trimpath and -buildvcs=false, so the binary, and with it the
// sha256 that pins it, depends on the plugin's code and nothing else (no checkout path,
// no VCS revision or dirty flag: an untracked file or a new commit leaves it alone).
func ReproducibleBuild(args ...string) []string {
	return append([]string{"build", "-trimpath", "-buildvcs=false"}, args...)
}

// BuildGo compiles the Go main package in pkgDir (relative to the test's working
// directory, typically ".") into a temporary directory shared by the whole test
// process, once per process, and returns the binary's path for a pluginhost.Spec's
// Source. A build failure fails the test with the compiler's output. Call RemoveBuilt
// from TestMain after m.Run to delete the binaries.
func BuildGo(t testing.TB, pkgDir string) string {
	t.Helper()
	abs, err := filepath.Abs(pkgDir)
	if err != nil {
		t.Fatalf("plugintest.BuildGo: %v", err)
	}
	built.Lock()
	defer built.Unlock()
	if bin, ok := built.bins[abs]; ok {
		return bin
	}
	if built.dir == "" {
		if built.dir, err = os.MkdirTemp("", "plugintest-build-"); err != nil {
			t.Fatalf("plugintest.BuildGo: %v", err)
		}
		built.bins = map[string]string{}
	}
	sub, err := os.MkdirTemp(built.dir, "pkg-")
	if err != nil {
		t.Fatalf("plugintest.BuildGo: %v", err)
	}
	bin := filepath.Join(sub, filepath.Base(abs))
	cmd := exec.Command("go", ReproducibleBuild("-o", bin, ".")...)
	cmd.Dir = abs
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkgDir, err, out)
	}
	built.bins[abs] = bin
	return bin
}

// RemoveBuilt deletes every binary BuildGo made in this process. Call it from TestMain
// after m.Run; a later BuildGo builds again.
func RemoveBuilt() {
	built.Lock()
	defer built.Unlock()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	built.dir, built.bins = "", nil
}
