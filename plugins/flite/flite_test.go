package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

func needFlite(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("flite is not installed (scripts/install-apt.sh installs it)")
	}
}

// pluginBinary builds the plugin once for the package's tests.
func pluginBinary(t *testing.T) string {
	t.Helper()
	return plugintest.BuildGo(t, ".")
}

func TestMain(m *testing.M) {
	code := m.Run()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

// The conformance suite every plugin passes, against the real binary over real gRPC,
// with the default config and with a slower speaking rate and another default voice.
func TestConformance(t *testing.T) {
	needFlite(t)
	spec := pluginhost.Spec{Name: "flite", Source: pluginBinary(t)}
	t.Run("defaults", func(t *testing.T) { plugintest.Run(t, spec, plugintest.Options{}) })
	t.Run("slow_slt", func(t *testing.T) {
		plugintest.Run(t, spec, plugintest.Options{
			Config:  map[string]any{"binary": "flite", "default_voice": "slt", "duration_stretch": 1.3},
			TTSText: "The bus leaves at seven fifty.",
		})
	})
}

// The plugin as the host sees it: a real process over real gRPC.
func TestPluginOverGRPC(t *testing.T) {
	needFlite(t)
	bin := pluginBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "flite", Source: bin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(info.Kinds, sdk.KindTTS) || info.Identity["flite_version"] == "" {
		t.Fatalf("describe = %+v", info)
	}
	if err := c.Configure(ctx, map[string]any{"binary": "flite", "default_voice": "kal16", "duration_stretch": 1.0}); err != nil {
		t.Fatal(err)
	}
	tts, err := c.TTS()
	if err != nil {
		t.Fatal(err)
	}
	voices, err := tts.Voices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kal16", "awb", "rms", "slt"} {
		i := slices.IndexFunc(voices, func(v sdk.Voice) bool { return v.ID == want })
		if i < 0 || voices[i].Rate != 16000 {
			t.Errorf("voice %s missing or not 16 kHz: %+v", want, voices)
		}
	}
	if slices.ContainsFunc(voices, func(v sdk.Voice) bool { return v.ID == "awb_time" }) {
		t.Error("the limited-domain voice awb_time is listed")
	}
	a, err := tts.Synthesize(ctx, "The bus leaves at seven fifty.", "awb")
	if err != nil {
		t.Fatal(err)
	}
	dur := float64(len(a.Samples)) / float64(a.Rate)
	if a.Rate != 16000 || dur < 1 || dur > 4 || peak(a.Samples) < 0.05 {
		t.Fatalf("clip: rate %d, %.2f s, peak %.3f", a.Rate, dur, peak(a.Samples))
	}
	// Same text and voice, same samples (the clip cache depends on it).
	b, err := tts.Synthesize(ctx, "The bus leaves at seven fifty.", "awb")
	if err != nil || !slices.Equal(a.Samples, b.Samples) {
		t.Fatalf("flite is not deterministic (err %v)", err)
	}
	_, err = tts.Synthesize(ctx, "hello", "nosuchvoice")
	if err == nil || !strings.Contains(err.Error(), "kal16") {
		t.Fatalf("unknown voice: err = %v, want one listing the voices", err)
	}
}

func peak(xs []float32) float32 {
	var p float32
	for _, x := range xs {
		if x < 0 {
			x = -x
		}
		p = max(p, x)
	}
	return p
}

func TestTextIsNotParsedAsFlags(t *testing.T) {
	needFlite(t)
	f := newFlite()
	a, err := f.Synthesize(context.Background(), `-voice "quoted" text`, "")
	if err != nil || len(a.Samples) == 0 {
		t.Fatalf("err %v, %d samples", err, len(a.Samples))
	}
}

func TestDurationStretchSlowsSpeech(t *testing.T) {
	needFlite(t)
	ctx := context.Background()
	f := newFlite()
	normal, err := f.Synthesize(ctx, "Pass me the water, please.", "slt")
	if err != nil {
		t.Fatal(err)
	}
	slow := newFlite()
	if err := slow.Configure(ctx, map[string]any{"duration_stretch": 1.5}); err != nil {
		t.Fatal(err)
	}
	s, err := slow.Synthesize(ctx, "Pass me the water, please.", "slt")
	if err != nil {
		t.Fatal(err)
	}
	if r := float64(len(s.Samples)) / float64(len(normal.Samples)); r < 1.3 || r > 1.7 {
		t.Fatalf("stretch 1.5 made the clip %.2fx as long", r)
	}
}

func TestConfigureRejectsBadValues(t *testing.T) {
	needFlite(t)
	ctx := context.Background()
	for _, cfg := range []map[string]any{
		{"duration_stretch": 0.0},
		{"default_voice": "nosuchvoice"},
		{"binary": "/nonexistent/flite"},
	} {
		if err := newFlite().Configure(ctx, cfg); err == nil {
			t.Errorf("Configure(%v) accepted", cfg)
		}
	}
	if _, err := newFlite().Synthesize(ctx, "  ", ""); err == nil {
		t.Error("empty text accepted")
	}
}

func BenchmarkSynthesizeTurn(b *testing.B) {
	if _, err := exec.LookPath("flite"); err != nil {
		b.Skip("flite is not installed")
	}
	f := newFlite()
	ctx := context.Background()
	var audioSec float64
	for b.Loop() {
		a, err := f.Synthesize(ctx, "Okay, the chicken goes in at six twenty and needs forty-five minutes.", "kal16")
		if err != nil {
			b.Fatal(err)
		}
		audioSec += float64(len(a.Samples)) / float64(a.Rate)
	}
	b.ReportMetric(audioSec/b.Elapsed().Seconds(), "x_realtime")
}

func TestConcurrentSynthesesAreIndependent(t *testing.T) {
	needFlite(t)
	f := newFlite()
	ctx := context.Background()
	texts := []string{"One two three.", "Four five six seven.", "Eight."}
	want := make([]int, len(texts))
	for i, s := range texts {
		a, err := f.Synthesize(ctx, s, "rms")
		if err != nil {
			t.Fatal(err)
		}
		want[i] = len(a.Samples)
	}
	errs := make(chan error, len(texts))
	for i, s := range texts {
		go func() {
			a, err := f.Synthesize(ctx, s, "rms")
			if err == nil && len(a.Samples) != want[i] {
				err = fmt.Errorf("%q: %d samples concurrently, %d alone", s, len(a.Samples), want[i])
			}
			errs <- err
		}()
	}
	for range texts {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
