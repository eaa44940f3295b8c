package plugintest_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
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

// Identities mean behaviour (issue 12): an untracked file or a new commit must not
// change a plugin's sha256 on rebuild, a change of its code must. The plugin lives in a
// temporary git repository, built as the Makefile builds plugins.
func TestReproducibleBuildHashMovesWithTheCodeOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := func(args ...string) string {
		t.Helper()
		bin := filepath.Join(t.TempDir(), "p")
		cmd := exec.Command("go", append(args, "-o", bin, ".")...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOPROXY=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
		b, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", sha256.Sum256(b))
	}
	reproducible := func() string { return build(plugintest.ReproducibleBuild()...) }
	stamped := func() string { return build("build", "-buildvcs=true") }

	write("go.mod", "module example.com/p\n\ngo 1.22\n")
	write("main.go", "package main\n\nfunc main() { println(\"one\") }\n")
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "first")
	first, firstStamped := reproducible(), stamped()

	write("screenshot.png", "an untracked file")
	if got := reproducible(); got != first {
		t.Errorf("an untracked file changed the hash: %s, then %s", first, got)
	}
	if stamped() == firstStamped {
		t.Error("control: a VCS-stamped build did not change with an untracked file; the test proves nothing")
	}
	git("add", ".")
	git("commit", "-q", "-m", "second")
	if got := reproducible(); got != first {
		t.Errorf("a commit changed the hash: %s, then %s", first, got)
	}
	write("main.go", "package main\n\nfunc main() { println(\"two\") }\n")
	if got := reproducible(); got == first {
		t.Error("a change of the plugin's code left its hash alone")
	}
}

// The Makefile builds plugins with ReproducibleBuild's flags.
func TestMakefileBuildsPluginsReproducibly(t *testing.T) {
	raw, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	want := "PLUGIN_BUILD_FLAGS := " + strings.Join(plugintest.ReproducibleBuild()[1:], " ")
	if !strings.Contains(string(raw), want+"\n") {
		t.Errorf("the Makefile does not define %q", want)
	}
	if !strings.Contains(string(raw), "$(GO) build $(PLUGIN_BUILD_FLAGS) -o $(BIN)/plugins/") {
		t.Error("the Makefile does not build plugins with $(PLUGIN_BUILD_FLAGS)")
	}
}
