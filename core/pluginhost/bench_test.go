package pluginhost_test

import (
	"context"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// BenchmarkModelRoundTrip measures one model frame through the whole path: host adapter,
// PCM encoding, gRPC over AutoMTLS on a unix socket, the plugin's Converse loop and back,
// against the example Go plugin with 80 ms frames at 24 kHz (1920 samples). ns/op is
// the per-frame round trip. "silent" replies carry no audio; "tone" replies carry 1920
// samples each.
func BenchmarkModelRoundTrip(b *testing.B) {
	ctx := context.Background()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "beeper", Source: beeperBin(b)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Kill()
	if err := c.Configure(ctx, map[string]any{"threshold": 0.1, "tone_seconds": 10.0}); err != nil {
		b.Fatal(err)
	}
	m, err := c.Model()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		amp  float64
		want int
	}{{"silent", 0.01, 0}, {"tone", 0.5, 1920}} {
		b.Run(bc.name, func(b *testing.B) {
			conv, err := m.Start(ctx, sdk.ConversationStart{ID: bc.name})
			if err != nil {
				b.Fatal(err)
			}
			defer conv.Close()
			frame := tone(1920, bc.amp)
			b.SetBytes(4 * 1920)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				out, err := conv.Step(ctx, frame)
				if err != nil {
					b.Fatal(err)
				}
				if len(out.Samples) != bc.want {
					b.Fatalf("%d output samples; want %d", len(out.Samples), bc.want)
				}
			}
		})
	}
}
