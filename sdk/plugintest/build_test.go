package plugintest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// BuildGo builds a real plugin once per process: the same path comes back on a second
// call (TestConformanceEveryKind runs that binary; TestMain checks RemoveBuilt deletes it).
func TestBuildGo(t *testing.T) {
	bin := plugintest.BuildGo(t, "./internal/testplugin")
	if got := plugintest.BuildGo(t, "internal/testplugin"); got != bin {
		t.Fatalf("second BuildGo = %q, want the cached %q", got, bin)
	}
	if filepath.Base(bin) != "testplugin" {
		t.Errorf("binary name = %q, want testplugin", filepath.Base(bin))
	}
	info, err := os.Stat(bin)
	if err != nil || info.Mode()&0o111 == 0 {
		t.Fatalf("built binary %s: %v (mode %v)", bin, err, info)
	}
}

// A package that does not compile fails the test with the compiler's output.
func TestBuildGoReportsCompilerOutput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module broken\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { undefinedThing() }\n"), 0o644)
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		plugintest.BuildGo(rec, dir)
	}()
	<-done
	if !rec.failed {
		t.Fatal("BuildGo of a broken package did not fail the test")
	}
	if want := "undefinedThing"; !strings.Contains(rec.msg, want) {
		t.Errorf("failure message %q does not name %q", rec.msg, want)
	}
}

// recorder is a testing.TB whose Fatalf records the failure and ends only the calling
// goroutine, so a test can check that a helper fails.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}
