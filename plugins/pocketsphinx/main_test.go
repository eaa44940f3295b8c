package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// buildPlugin builds this directory's plugin binary once for the package's tests.
func buildPlugin(t *testing.T) string {
	t.Helper()
	return plugintest.BuildGo(t, ".")
}

func TestMain(m *testing.M) {
	code := m.Run()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

// speak synthesises text with a flite voice, at that voice's own rate.
func speak(t *testing.T, voice, text string) audio.PCM {
	t.Helper()
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("flite is not installed (scripts/install-apt.sh installs it)")
	}
	wav := filepath.Join(t.TempDir(), "clip.wav")
	if out, err := exec.Command("flite", "-voice", voice, "-t", text, "-o", wav).CombinedOutput(); err != nil {
		t.Fatalf("flite: %v: %s", err, out)
	}
	clip, err := audio.ReadWAV(wav)
	if err != nil {
		t.Fatal(err)
	}
	return clip
}

// The conformance suite every plugin passes, against the real binary over real gRPC:
// with the suite's default clip (a tone) and with flite speech at 16 kHz.
func TestConformance(t *testing.T) {
	spec := pluginhost.Spec{Name: "pocketsphinx", Source: buildPlugin(t)}
	t.Run("defaults", func(t *testing.T) { plugintest.Run(t, spec, plugintest.Options{}) })
	t.Run("flite_speech", func(t *testing.T) {
		clip := speak(t, "slt", "please set a timer for twenty minutes")
		plugintest.Run(t, spec, plugintest.Options{ASRClip: sdk.Audio{Samples: clip.Samples, Rate: clip.Rate}, ASRLanguage: "en"})
	})
}

// The plugin as the host sees it: a real process over real gRPC, transcribing real
// flite speech sent at flite's 8 kHz "kal" rate (the plugin resamples to 16 kHz).
func TestPluginOverGRPC(t *testing.T) {
	bin := buildPlugin(t)
	clip := speak(t, "kal", "the ticket costs nine dollars")
	if clip.Rate == 16000 {
		t.Fatalf("expected flite's kal voice at 8 kHz, got %d Hz", clip.Rate)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "pocketsphinx", Source: bin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	asr, err := c.ASR()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := asr.Transcribe(ctx, sdk.Audio{Samples: clip.Samples, Rate: clip.Rate}, ""); err == nil {
		t.Error("Transcribe before Configure succeeded")
	}
	if err := c.Configure(ctx, map[string]any{"hmm": 3.0}); err == nil || !strings.Contains(err.Error(), "hmm") {
		t.Errorf("a number for hmm was accepted: %v", err)
	}
	if err := c.Configure(ctx, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(info.Kinds, sdk.KindASR) || len(info.Identity["model_sha256"]) != 64 || !strings.Contains(info.Identity["library"], "pocketsphinx") {
		t.Fatalf("describe = %+v", info)
	}
	got, err := asr.Transcribe(ctx, sdk.Audio{Samples: clip.Samples, Rate: clip.Rate}, "en")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "nine dollars") {
		t.Errorf("transcript %q lacks %q", got, "nine dollars")
	}
	if _, err := asr.Transcribe(ctx, sdk.Audio{Samples: clip.Samples}, ""); err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), "_", " "), "sample rate") {
		t.Errorf("a clip without a rate: %v", err)
	}
}

// TestDecoderPoolAndFastSearch configures two decoders with the one-pass search and
// transcribes two clips at once through the real plugin process.
func TestDecoderPoolAndFastSearch(t *testing.T) {
	bin := buildPlugin(t)
	clips := []audio.PCM{
		speak(t, "kal16", "the ticket costs nine dollars"),
		speak(t, "slt", "the ferry leaves at seven"),
	}
	want := []string{"nine dollars", "seven"}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "pocketsphinx", Source: bin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	for _, bad := range []map[string]any{{"decoders": 0.0}, {"decoders": 1.5}, {"decoders": 17.0}, {"fast": "yes"}} {
		if err := c.Configure(ctx, bad); err == nil {
			t.Errorf("config %v was accepted", bad)
		}
	}
	if err := c.Configure(ctx, map[string]any{"decoders": 2.0, "fast": true}); err != nil {
		t.Fatal(err)
	}
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Identity["search"] != "fast" {
		t.Errorf("identity search = %q, want fast", info.Identity["search"])
	}
	asr, err := c.ASR()
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(clips))
	errs := make([]error, len(clips))
	var wg sync.WaitGroup
	for i, clip := range clips {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = asr.Transcribe(ctx, sdk.Audio{Samples: clip.Samples, Rate: clip.Rate}, "")
		}()
	}
	wg.Wait()
	for i := range clips {
		if errs[i] != nil {
			t.Fatalf("clip %d: %v", i, errs[i])
		}
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("clip %d: transcript %q lacks %q", i, got[i], want[i])
		}
	}
}
