// Package plugintest runs the conformance suite (sdk/conformance) from a plugin's Go
// test, through the real process and real gRPC:
//
//	func TestConformance(t *testing.T) {
//		plugintest.Run(t, pluginhost.Spec{Name: "mine", Source: "bin/plugins/mine"}, plugintest.Options{})
//	}
//
// A Go plugin's own tests build it with BuildGo (once per test binary) instead:
//
//	spec := pluginhost.Spec{Name: "mine", Source: plugintest.BuildGo(t, ".")}
//
// or for a Python plugin: Spec{Name: "mine", Command: []string{".venv/bin/python", "-m", "mine"}, Dir: "plugins/mine"}.
//
// The plugin is started by a conformance.Target: the harness's pluginhost.Spec is one,
// so the suite tests the very process a run would start, while this package needs
// nothing from the harness. Each check is a subtest, so a failure reads as e.g.
// "TestConformance/model/wrong_size_frame" (the checks are listed in sdk/conformance).
// The same suite runs from the harness binary: `duplexmpe plugins test FILE.hcl`.
package plugintest

import (
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/sdk/conformance"
)

// Options tune the suite; the zero value works for a plugin whose config has defaults
// for every required field. A nil Logger sends the plugin's log to the test log (debug
// level: shown on failure or with -v).
type Options = conformance.Options

// Run checks the plugin target starts, failing t through named subtests on any
// deviation from the protocol; it always stops the plugin.
func Run(t *testing.T, target conformance.Target, opts Options) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "plugintest", Output: testWriter{t}, Level: hclog.Debug})
	}
	conformance.Run(testT{t}, target, opts)
}

// testT is a *testing.T as a conformance.T.
type testT struct{ *testing.T }

func (t testT) Run(name string, f func(conformance.T)) bool {
	return t.T.Run(name, func(t *testing.T) { f(testT{t}) })
}

// testWriter sends log lines to the test log (shown on failure or with -v).
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
