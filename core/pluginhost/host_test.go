package pluginhost_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
)

func startBeeper(t *testing.T, spec pluginhost.Spec) *pluginhost.Client {
	t.Helper()
	if spec.Name == "" {
		spec.Name = "beeper"
	}
	if spec.Source == "" && len(spec.Command) == 0 && spec.Reattach == "" {
		spec.Source = beeperBin(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, spec, nil)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(c.Kill)
	return c
}

func tone(n int, amp float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(amp * math.Sin(2*math.Pi*300*float64(i)/24000))
	}
	return x
}

func TestDescribeConfigureConverse(t *testing.T) {
	c := startBeeper(t, pluginhost.Spec{})
	ctx := context.Background()
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "example-beeper" || info.ProtocolVersion != sdk.ProtocolVersion ||
		len(info.Kinds) != 1 || info.Kinds[0] != sdk.KindModel || len(info.Config) != 3 {
		t.Fatalf("Describe = %+v", info)
	}
	if err := c.Configure(ctx, map[string]any{"threshold": 0.2, "tone_seconds": 0.16}); err != nil {
		t.Fatal(err)
	}
	if info, _ = c.Describe(ctx); info.Identity["threshold"] != "0.2" {
		t.Fatalf("identity after Configure = %v; want threshold 0.2", info.Identity)
	}
	err = c.Configure(ctx, map[string]any{"threshold": "loud"})
	if err == nil || !strings.Contains(err.Error(), "InvalidArgument") || !strings.Contains(err.Error(), `"beeper"`) {
		t.Fatalf("bad config: err = %v; want InvalidArgument naming the plugin", err)
	}

	m, err := c.Model()
	if err != nil {
		t.Fatal(err)
	}
	conv, err := m.Start(ctx, sdk.ConversationStart{ID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if f := conv.Format(); f != (sdk.Format{InputRate: 24000, OutputRate: 24000, FrameSize: 1920}) {
		t.Fatalf("format = %+v", f)
	}
	// quiet, loud, then the 0.16 s (3840 samples) tone spans two frames.
	var got []int
	for i, amp := range []float64{0.01, 0.5, 0.01, 0.01} {
		out, err := conv.Step(ctx, tone(1920, amp))
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		got = append(got, len(out.Samples))
	}
	if want := []int{0, 1920, 1920, 0}; !equalInts(got, want) {
		t.Fatalf("output samples per frame = %v; want %v", got, want)
	}
	if _, err := conv.Step(ctx, make([]float32, 100)); err == nil {
		t.Fatal("a short frame was accepted")
	}
	if err := conv.Close(); err != nil {
		t.Fatal(err)
	}

	if _, err := c.TTS(); err == nil || !strings.Contains(err.Error(), `"beeper" does not serve kind "tts"`) {
		t.Fatalf("TTS() err = %v", err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
