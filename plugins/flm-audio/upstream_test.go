package flmaudio_test

import (
	"context"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/plugins/internal/adaptertest"
)

// The upstream tier (`make test-adapters`): plugin.py on FLM-Audio's own code, the
// checkout DUPLEXMPE_UPSTREAM_FLM_AUDIO names (the snapshot of 41d768c in CI, used as
// shipped), with a tiny random model built by its own constructors
// (tests_real/tiny_flmaudio.py), under the real plugin host, plays the shortest shipped
// conversation through the harness's session, closed-loop waits and Silero VAD included.
// Skipped unless DUPLEXMPE_ADAPTERS_PYTHON and DUPLEXMPE_UPSTREAM_FLM_AUDIO are set.
func TestUpstreamShippedConversation(t *testing.T) {
	checkout := adaptertest.Upstream(t, "DUPLEXMPE_UPSTREAM_FLM_AUDIO", "cofe-ai/flm-audio")
	spec := adaptertest.UpstreamSpec(t, "flm-audio", map[string]string{
		"DUPLEXMPE_UPSTREAM_FLM_AUDIO": checkout,
		// LMGen torch.compiles the model on its first streaming state: minutes on a CPU.
		"TORCHDYNAMO_DISABLE": "1",
	})
	conv := adaptertest.Shipped(t, adaptertest.ShortestShipped)
	c, m := adaptertest.StartUpstream(t, spec, map[string]any{
		"factory": "tiny_flmaudio:load", "flmaudio_dir": checkout, "device": "cpu", "dtype": "float32"})
	info, err := c.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.Identity["library"], "flmaudio ") || !strings.HasPrefix(info.Identity["forward_audio"], "bridged:") {
		t.Fatalf("identity %v: not the upstream checkout with the bridged forward_audio", info.Identity)
	}
	rec := adaptertest.Play(t, m, conv, 1)
	adaptertest.CheckPlayed(t, conv, rec)
	if len(rec.Text) == 0 {
		t.Error("no text piece in a whole conversation: the text channel is not reaching the host")
	}
}
