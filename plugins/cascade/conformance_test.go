package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// The conformance suite against the real binary, over real gRPC.
func TestConformance(t *testing.T) {
	plugintest.Run(t, pluginhost.Spec{Name: "cascade", Source: pluginBin(t)}, plugintest.Options{})
}

// After Configure, Describe names every piece that decides the results, by version or
// digest, and none by a path of this machine.
func TestIdentity(t *testing.T) {
	ctx := context.Background()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "cascade", Source: pluginBin(t)}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	if err := c.Configure(ctx, map[string]any{"compute_fixed": 1.5}); err != nil {
		t.Fatal(err)
	}
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := info.Identity
	hex64 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	if !regexp.MustCompile(`^silero-v[56] sha256:[0-9a-f]{64}$`).MatchString(id["vad"]) || !hex64.MatchString(id["flite_sha256"]) ||
		!strings.HasPrefix(id["asr"], "libpocketsphinx ") || strings.Contains(id["asr"], "unknown") ||
		id["policy"] != "name" || id["compute"] != "model: fixed 1.5 s per answer" || !strings.HasPrefix(id["tts"], "flite ") {
		t.Errorf("identity %v", id)
	}
	for k, v := range id {
		if strings.Contains(v, "/") {
			t.Errorf("identity %s = %q holds a path", k, v)
		}
	}
}
