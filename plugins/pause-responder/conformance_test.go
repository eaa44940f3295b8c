package main

import (
	"os"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// The conformance suite against the real binary, over real gRPC, with the default config
// and with a MiniCPM-o-shaped format (16 kHz in, 24 kHz out, 1 s frames).
func TestConformance(t *testing.T) {
	bin := plugintest.BuildGo(t, ".")
	spec := pluginhost.Spec{Name: "pause-responder", Source: bin}
	t.Run("defaults", func(t *testing.T) { plugintest.Run(t, spec, plugintest.Options{}) })
	t.Run("one_second_frames", func(t *testing.T) {
		plugintest.Run(t, spec, plugintest.Options{Config: map[string]any{"input_rate": 16000.0, "output_rate": 24000.0, "frame_ms": 1000.0}})
	})
}

// TestMain deletes the plugin binary plugintest.BuildGo made.
func TestMain(m *testing.M) {
	code := m.Run()
	plugintest.RemoveBuilt()
	os.Exit(code)
}
