package pluginhost_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The example Go model plugin (examples/plugin-go), built once, on first use, for all
// tests: every test here talks to real plugin processes over real gRPC.
var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
	buildOut  []byte
)

func beeperBin(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "pluginhost-test-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, "beeper"), "../../examples/plugin-go")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building the example plugin: %v\n%s", buildErr, buildOut)
	}
	return filepath.Join(buildDir, "beeper")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}
