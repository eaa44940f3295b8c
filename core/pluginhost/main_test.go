package pluginhost_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// beeperBin is the example Go model plugin (examples/plugin-go), built once for all
// tests: every test here talks to real plugin processes over real gRPC.
var beeperBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pluginhost-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	beeperBin = filepath.Join(dir, "beeper")
	build := exec.Command("go", "build", "-o", beeperBin, "../../examples/plugin-go")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the example plugin:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
