package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// The plugin as the host sees it: a real process over real gRPC, transcribing real
// flite speech sent at flite's 8 kHz "kal" rate (the plugin resamples to 16 kHz).
func TestPluginOverGRPC(t *testing.T) {
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("flite is not installed (scripts/install-apt.sh installs it)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "pocketsphinx")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatal(err)
	}
	wav := filepath.Join(dir, "clip.wav")
	if out, err := exec.Command("flite", "-voice", "kal", "-t", "the ticket costs nine dollars", "-o", wav).CombinedOutput(); err != nil {
		t.Fatalf("flite: %v: %s", err, out)
	}
	clip, err := audio.ReadWAV(wav)
	if err != nil {
		t.Fatal(err)
	}
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
