package pluginpython_test

import (
	"path/filepath"
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// TestConformance runs the conformance suite every plugin passes (sdk/plugintest)
// against the Python example, started through run.sh, with its default config.
func TestConformance(t *testing.T) {
	plugintest.Run(t, spec(t), plugintest.Options{})
}

// TestConformanceOtherKinds runs the suite against the SDK's own test fixture, which
// serves the tts, asr, judge and llm kinds, so every kind of the Python SDK is checked
// by the Go side of the protocol.
func TestConformanceOtherKinds(t *testing.T) {
	s := spec(t)
	s.Name = "fixture"
	s.Command = []string{filepath.Join("..", "..", ".venv", "bin", "python"), filepath.Join("..", "..", "sdk", "python", "tests", "fixture_plugin.py")}
	plugintest.Run(t, s, plugintest.Options{})
}
