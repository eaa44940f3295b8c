package pluginhost_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// The beeper test plugin (testdata/beeper: a tone on loud input), built once, on first use, for all
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
		cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, "beeper"), "./testdata/beeper")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building the example plugin: %v\n%s", buildErr, buildOut)
	}
	return filepath.Join(buildDir, "beeper")
}

var (
	allOnce sync.Once
	allErr  error
	allOut  []byte
)

// allKindsBin is sdk/plugintest's test plugin, which serves all five kinds.
func allKindsBin(t testing.TB) string {
	t.Helper()
	beeperBin(t) // creates buildDir
	allOnce.Do(func() {
		cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, "testplugin"), "../../sdk/plugintest/internal/testplugin")
		allOut, allErr = cmd.CombinedOutput()
	})
	if allErr != nil {
		t.Fatalf("building the test plugin: %v\n%s", allErr, allOut)
	}
	return filepath.Join(buildDir, "testplugin")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	plugintest.RemoveBuilt()
	os.Exit(code)
}
