package main

import (
	"testing"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// The conformance suite against the real binary, over real gRPC.
func TestConformance(t *testing.T) {
	plugintest.Run(t, pluginhost.Spec{Name: "cascade", Source: pluginBin}, plugintest.Options{})
}
