package moshi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/plugins/internal/adaptertest"
)

// The upstream tier (`make test-adapters`): plugin.py on the real moshi library from PyPI
// (the version plugins/moshi/requirements.txt pins) with a tiny random model built by
// moshi's own loaders (tests_real/tiny_moshi.py), under the real plugin host, plays the
// shortest shipped conversation through the harness's session, closed-loop waits and
// Silero VAD included. Skipped unless DUPLEXMPE_ADAPTERS_PYTHON names a Python with torch
// and moshi.
func TestUpstreamShippedConversation(t *testing.T) {
	spec := adaptertest.UpstreamSpec(t, "moshi", map[string]string{"NO_TORCH_COMPILE": "1"})
	conv := adaptertest.Shipped(t, adaptertest.ShortestShipped)
	c, m := adaptertest.StartUpstream(t, spec, map[string]any{"factory": "tiny_moshi:load", "device": "cpu", "dtype": "float32"})
	info, err := c.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.Identity["library"], "moshi 0.2.") || info.Identity["checkpoint"] != "tiny-random" {
		t.Fatalf("identity %v: not the real moshi library with the tiny model", info.Identity)
	}
	rec := adaptertest.Play(t, m, conv, 1)
	adaptertest.CheckPlayed(t, conv, rec)
	if len(rec.Text) == 0 {
		t.Error("no text piece in a whole conversation: the text channel is not reaching the host")
	}
}
