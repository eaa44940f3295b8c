package main

import (
	"context"
	"errors"
	"math/rand/v2"
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
	for _, bad := range []map[string]any{{"decoders": -1.0}, {"decoders": 1.5}, {"decoders": 17.0}, {"fast": "yes"}} {
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

// noisy is a flite clip at its own rate, scaled, over white noise, with a quarter second
// of noise before and after.
func noisy(t *testing.T, voice, text string, gain, noise float64, r *rand.Rand) sdk.Audio {
	clip := speak(t, voice, text)
	lead := clip.Rate / 4
	out := make([]float32, lead+len(clip.Samples)+clip.Rate/4)
	for j := range out {
		v := r.NormFloat64() * noise
		if k := j - lead; k >= 0 && k < len(clip.Samples) {
			v += float64(clip.Samples[k]) * gain
		}
		out[j] = float32(v)
	}
	return sdk.Audio{Samples: out, Rate: clip.Rate}
}

// Deterministic ASR (issue 16), through the real plugin process: the same clips give the
// same transcripts whatever the order, the pool size and which decoder of the pool takes
// a clip. Before every utterance was decoded from the decoder's fresh state, a decoder's
// noise estimate carried over from the previous clip and this failed.
func TestTranscriptsIndependentOfOrderAndPool(t *testing.T) {
	bin := buildPlugin(t)
	r := rand.New(rand.NewPCG(5, 6))
	clips := []sdk.Audio{
		noisy(t, "kal16", "the ticket costs nine dollars", 1, 0, r),
		noisy(t, "slt", "please set a timer for twenty minutes", 0.3, 0.004, r),
		noisy(t, "rms", "the meeting starts at three thirty", 1.2, 0.012, r),
		noisy(t, "awb", "okay understood", 0.6, 0.002, r),
		noisy(t, "slt", "the ferry leaves at seven", 0.9, 0.008, r),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // bounds a hang only
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
	// transcribe returns the transcript of clips[order[k]] at k.
	transcribe := func(decoders float64, order []int, parallel int) []string {
		if err := c.Configure(ctx, map[string]any{"decoders": decoders}); err != nil {
			t.Fatal(err)
		}
		got := make([]string, len(order))
		errs := make([]error, len(order))
		next := make(chan int)
		var wg sync.WaitGroup
		for range parallel {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range next {
					got[k], errs[k] = asr.Transcribe(ctx, clips[order[k]], "en")
				}
			}()
		}
		for k := range order {
			next <- k
		}
		close(next)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		return got
	}
	one := transcribe(1, []int{0, 1, 2, 3, 4}, 1)
	// Reversed, then clips 0 and 2 again, on whichever of three decoders is free.
	order := []int{4, 3, 2, 1, 0, 2, 0}
	for k, got := range transcribe(3, order, 3) {
		if i := order[k]; got != one[i] {
			t.Errorf("clip %d: %q with three decoders in parallel (call %d), %q with one decoder in order", i, got, k, one[i])
		}
	}
	t.Logf("transcripts: %q", one)
}
