package synth

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

func needAll(t *testing.T) {
	t.Helper()
	needEspeak(t)
	weightsDir(t)
	if _, err := vad.LoadRuntime(""); err != nil {
		t.Skipf("ONNX Runtime is not fetched (%v): make deps", err)
	}
}

// The conformance suite every plugin passes, on the real weights, over real gRPC (it
// synthesises with the first voice, Piper's joe).
func TestConformance(t *testing.T) {
	needAll(t)
	spec := pluginhost.Spec{Name: "onnx-tts", Source: plugintest.BuildGo(t, "..")}
	plugintest.Run(t, spec, plugintest.Options{TTSText: "Okay, see you at six."})
}

// start runs the built plugin as the host does and returns its TTS.
func start(t *testing.T, cfg map[string]any) (*pluginhost.Client, sdk.TTS) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "onnx-tts", Source: plugintest.BuildGo(t, "..")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	if err := c.Configure(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	tts, err := c.TTS()
	if err != nil {
		t.Fatal(err)
	}
	return c, tts
}

// Same text and voice, byte-identical clip: twice in one process (Piper's noise does not
// move on between runs) and once more in a second process, for a Piper and a Kokoro
// voice. The dataset's clip cache depends on it.
func TestDeterministicAcrossRunsAndProcesses(t *testing.T) {
	needAll(t)
	ctx := context.Background()
	const text = "Aria, is it three thirty?"
	_, one := start(t, map[string]any{})
	_, two := start(t, map[string]any{})
	for _, voice := range []string{"joe", "jm_kumo"} {
		a, err := one.Synthesize(ctx, text, voice)
		if err != nil {
			t.Fatal(err)
		}
		b, err := one.Synthesize(ctx, text, voice)
		if err != nil {
			t.Fatal(err)
		}
		c, err := two.Synthesize(ctx, text, voice)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Samples, b.Samples) || !slices.Equal(a.Samples, c.Samples) || a.Rate != c.Rate {
			t.Errorf("%s: not deterministic (%d, %d, %d samples)", voice, len(a.Samples), len(b.Samples), len(c.Samples))
		}
		// Speech, not silence or noise: about 1.5 s, a real level, pitched.
		pcm := audio.PCM{Samples: a.Samples, Rate: a.Rate}
		if d, l := pcm.Duration(), audio.LoudnessLUFS(pcm); d < 0.8 || d > 4 || l < -40 || l > -5 {
			t.Errorf("%s: %.2f s at %.1f LUFS", voice, d, l)
		}
	}
}

// Every offered voice speaks, at its declared rate; voice and config errors name what
// to do.
func TestVoicesAndErrors(t *testing.T) {
	needAll(t)
	ctx := context.Background()
	c, tts := start(t, map[string]any{"default_voice": "jf_alpha"})
	voices, err := tts.Voices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(voices) != len(catalogue) {
		t.Fatalf("%d voices", len(voices))
	}
	for _, v := range voices {
		want := 24000
		if v.ID == "joe" {
			want = 22050
		}
		if v.Rate != want || !strings.Contains(v.Description, "licence") {
			t.Errorf("voice %+v", v)
		}
		// One voice of each kind speaks (Piper; a Japanese style from voices.npz; a US
		// and a British style from kokoro-en): the 34 voices all at once took minutes
		// on a loaded machine. Every style's table is checked below.
		if v.ID != "joe" && v.ID != "jm_kumo" && v.ID != "af_heart" && v.ID != "bm_george" {
			continue
		}
		a, err := tts.Synthesize(ctx, "Yes.", v.ID)
		if err != nil || a.Rate != v.Rate || len(a.Samples) < a.Rate/5 {
			t.Errorf("%s: %d samples at %d, %v", v.ID, len(a.Samples), a.Rate, err)
		}
	}
	// Every Kokoro voice has a style table of 510 rows of 256.
	p := New()
	if _, err := p.Synthesize(ctx, "Yes.", "af_sky"); err != nil {
		t.Fatal(err)
	}
	for _, v := range catalogue {
		if v.Engine == "kokoro" && len(p.styles[v.ID]) != 510*kokoroStyleDim {
			t.Errorf("%s: style of %d values, want %d", v.ID, len(p.styles[v.ID]), 510*kokoroStyleDim)
		}
	}
	if a, err := tts.Synthesize(ctx, "Yes.", ""); err != nil || a.Rate != 24000 {
		t.Errorf("default voice: rate %d, %v", a.Rate, err)
	}
	if _, err := tts.Synthesize(ctx, "Yes.", "nova"); err == nil || !strings.Contains(err.Error(), "jm_kumo") {
		t.Errorf("unknown voice: %v", err)
	}
	if _, err := tts.Synthesize(ctx, " ", "joe"); err == nil {
		t.Error("empty text accepted")
	}
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"piper_joe_onnx_sha256", "piper_joe_config_sha256", "kokoro_onnx_sha256", "kokoro_voices_sha256", "kokoro_vocab_sha256", "kokoro_en_voices_sha256", "espeak_ng_sha256", "espeak_ng_en_dict_sha256", "onnxruntime_sha256"} {
		if len(info.Identity[k]) != 64 {
			t.Errorf("identity %s = %q", k, info.Identity[k])
		}
	}
	if !strings.Contains(info.Description, "Apache-2.0") || !strings.Contains(info.Description, "MIT") || !strings.Contains(info.Description, "bench.hcl") {
		t.Errorf("description %q", info.Description)
	}
	for _, cfg := range []map[string]any{{"threads": 0.0}, {"default_voice": "nova"}, {"sentence_silence": -1.0}, {"weights": t.TempDir()}, {"espeak_ng": "/nonexistent/espeak-ng"}} {
		if err := New().Configure(ctx, cfg); err == nil {
			t.Errorf("Configure(%v) accepted", cfg)
		}
	}
}

// The identity changes with any voice file: a weights folder whose vocabulary differs
// by one byte, and one of whose English voice styles differs in one value (the other
// files linked), is another identity, so another clip key.
func TestIdentityHashesEveryVoiceFile(t *testing.T) {
	needAll(t)
	dir := weightsDir(t)
	other := t.TempDir()
	for _, rel := range []string{piperJoeModel, piperJoeConfig, kokoroModelF, kokoroVoicesF} {
		os.MkdirAll(filepath.Join(other, filepath.Dir(rel)), 0o755)
		if err := os.Symlink(filepath.Join(dir, rel), filepath.Join(other, rel)); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, kokoroVocabF))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(other, kokoroVocabF), append(raw, '\n'), 0o644)
	os.MkdirAll(filepath.Join(other, kokoroEnDir), 0o755)
	for i, id := range englishVoices {
		src, dst := filepath.Join(dir, kokoroEnDir, id+".bin"), filepath.Join(other, kokoroEnDir, id+".bin")
		if i > 0 {
			if err := os.Symlink(src, dst); err != nil {
				t.Fatal(err)
			}
			continue
		}
		style, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		style[0] ^= 1
		os.WriteFile(dst, style, 0o644)
	}
	ctx := context.Background()
	a, b := New(), New()
	if err := a.Configure(ctx, map[string]any{"weights": dir}); err != nil {
		t.Fatal(err)
	}
	if err := b.Configure(ctx, map[string]any{"weights": other}); err != nil {
		t.Fatal(err)
	}
	ia, _ := a.Describe(ctx)
	ib, _ := b.Describe(ctx)
	if ia.Identity["kokoro_vocab_sha256"] == ib.Identity["kokoro_vocab_sha256"] || ia.Identity["kokoro_en_voices_sha256"] == ib.Identity["kokoro_en_voices_sha256"] ||
		ia.Identity["piper_joe_onnx_sha256"] != ib.Identity["piper_joe_onnx_sha256"] {
		t.Errorf("identities %v / %v", ia.Identity, ib.Identity)
	}
}

// The noise rewrite on a graph of one RandomNormalLike (mean 2, scale 3): ONNX Runtime
// runs it, the samples are normal with that mean and scale, and they are the same on
// every run of every session.
func TestFixedNoiseIsNormalAndRepeats(t *testing.T) {
	if _, err := vad.LoadRuntime(""); err != nil {
		t.Skipf("ONNX Runtime is not fetched (%v): make deps", err)
	}
	model, n, err := fixNoise(randomNormalLikeModel(2, 3))
	if err != nil || n != 1 {
		t.Fatalf("rewrote %d nodes, %v", n, err)
	}
	run := func() []float32 {
		s, err := ort.NewDynamicAdvancedSessionWithONNXData(model, []string{"x"}, []string{"y"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Destroy()
		var first []float32
		for range 2 {
			x, _ := ort.NewTensor(ort.NewShape(4, 5000), make([]float32, 20000))
			outs := []ort.Value{nil}
			if err := s.Run([]ort.Value{x}, outs); err != nil {
				t.Fatal(err)
			}
			y := append([]float32(nil), outs[0].(*ort.Tensor[float32]).GetData()...)
			if sh := outs[0].GetShape(); len(sh) != 2 || sh[0] != 4 || sh[1] != 5000 {
				t.Fatalf("shape %v", sh)
			}
			x.Destroy()
			outs[0].Destroy()
			if first != nil && !slices.Equal(first, y) {
				t.Fatal("a second run of the session drew other noise")
			}
			first = y
		}
		return first
	}
	a, b := run(), run()
	if !slices.Equal(a, b) {
		t.Fatal("another session drew other noise")
	}
	var sum, sq float64
	var within1 int
	for _, v := range a {
		sum += float64(v)
		z := (float64(v) - 2) / 3
		sq += z * z
		if math.Abs(z) < 1 {
			within1++
		}
	}
	mean, sd := sum/float64(len(a)), math.Sqrt(sq/float64(len(a)))
	frac := float64(within1) / float64(len(a))
	if math.Abs(mean-2) > 0.1 || math.Abs(sd-1) > 0.03 || math.Abs(frac-0.6827) > 0.02 {
		t.Fatalf("mean %.3f (want 2), sd/scale %.3f (want 1), within one sd %.3f (want 0.683)", mean, sd, frac)
	}
	// Any other random node is refused rather than left to chance.
	if _, _, err := fixNoise(randomOpModel("RandomUniformLike")); err == nil || !strings.Contains(err.Error(), "RandomUniformLike") {
		t.Errorf("RandomUniformLike: %v", err)
	}
}
