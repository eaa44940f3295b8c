package construct

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/progress"
	"github.com/duplexmpe/duplexmpe/sdk"
)

var (
	fliteOnce sync.Once
	fliteTTS  sdk.TTS
	fliteInfo dataset.TTSInfo
	fliteErr  error
	fliteDir  string
)

// startFlite builds and starts the real flite plugin (a process over gRPC), once for
// all tests of the package.
func startFlite(t *testing.T) (sdk.TTS, dataset.TTSInfo) {
	t.Helper()
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("flite is not installed (scripts/install-apt.sh)")
	}
	fliteOnce.Do(func() { fliteTTS, fliteInfo, fliteErr = launchFlite() })
	if fliteErr != nil {
		t.Fatal(fliteErr)
	}
	return fliteTTS, fliteInfo
}

func launchFlite() (sdk.TTS, dataset.TTSInfo, error) {
	var err error
	fliteDir, err = os.MkdirTemp("", "construct-test-")
	if err != nil {
		return nil, dataset.TTSInfo{}, err
	}
	bin := filepath.Join(fliteDir, "flite")
	build := exec.Command("go", "build", "-o", bin, "../../plugins/flite")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return nil, dataset.TTSInfo{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "flite", Source: bin}, nil)
	if err != nil {
		return nil, dataset.TTSInfo{}, err
	}
	if err := c.Configure(ctx, map[string]any{}); err != nil {
		return nil, dataset.TTSInfo{}, err
	}
	info, err := c.Describe(ctx)
	if err != nil {
		return nil, dataset.TTSInfo{}, err
	}
	tts, err := c.TTS()
	if err != nil {
		return nil, dataset.TTSInfo{}, err
	}
	return tts, dataset.TTSInfo{Plugin: "flite", Name: info.Name, Version: info.Version, Identity: info.Identity}, nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	pluginhost.KillAll()
	if fliteDir != "" {
		os.RemoveAll(fliteDir)
	}
	os.Exit(code)
}

// counting passes calls through to the real TTS and counts syntheses; failAfter > 0
// makes the call after that many fail (an interrupted build).
type counting struct {
	sdk.TTS
	calls     atomic.Int64
	failAfter int64
}

func (c *counting) Synthesize(ctx context.Context, text, voice string) (sdk.Audio, error) {
	n := c.calls.Add(1)
	if c.failAfter > 0 && n > c.failAfter {
		return sdk.Audio{}, errors.New("interrupted")
	}
	return c.TTS.Synthesize(ctx, text, voice)
}

func TestBuildSynthesisesEachDistinctClipOnceAndReusesThem(t *testing.T) {
	tts, info := startFlite(t)
	scs, err := Generate(GenerateSpec{Pairs: 2, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	for _, s := range scs {
		for _, tu := range s.Turns {
			distinct[DefaultVoices[tu.Speaker]+"\x00"+tu.Text] = true
		}
	}
	want := len(distinct) + 1 // + the preamble
	out := t.TempDir()
	spec := BuildSpec{Name: "t", Out: out, Scenarios: scs, Generator: dataset.Generator{Kind: "procedural"}, TTS: info}

	ctr := &counting{TTS: tts}
	var shown bytes.Buffer
	count := progress.New(progress.Lines(&shown), "synthesising", "t", "clips")
	d, rep, err := Build(context.Background(), spec, ctr, count)
	count.Finish(err == nil)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "clips", "*.wav"))
	if rep.Clips != want || rep.Synthesised != want || int(ctr.calls.Load()) != want || len(files) != want {
		t.Fatalf("distinct (voice, text) = %d; report %+v, TTS calls %d, files %d", want, rep, ctr.calls.Load(), len(files))
	}
	if s := count.Total().Read(); s.Total != want || s.Done != want {
		t.Errorf("progress counted %d of %d clips, want %d of %d", s.Done, s.Total, want, want)
	}
	lines := strings.Split(strings.TrimSpace(shown.String()), "\n")
	if first, last := lines[0], lines[len(lines)-1]; first != fmt.Sprintf("synthesising t: 0/%d clips, 0%%, -, time left unknown", want) ||
		!strings.HasPrefix(last, fmt.Sprintf("synthesising t: %d/%d clips, 100%%, ", want, want)) || !strings.HasSuffix(last, ", done") {
		t.Errorf("progress shown:\n%s", shown.String())
	}
	if d.Manifest.SampleRate != 16000 || d.Manifest.Preamble.DurationS < 15 {
		t.Errorf("manifest: rate %d, preamble %.1f s", d.Manifest.SampleRate, d.Manifest.Preamble.DurationS)
	}
	// The built dataset validates, clips and durations included.
	loaded, vs, err := dataset.ValidatePath(out)
	if err != nil || len(vs) != 0 {
		t.Fatalf("built dataset: err %v, violations %v", err, vs)
	}
	if loaded.PreamblePath() == "" || loaded.Scenarios[0].Turns[0].DurationS <= 0 {
		t.Fatal("loaded dataset lacks preamble or durations")
	}
	first, _ := os.ReadFile(filepath.Join(out, dataset.ScenariosFile))

	// A rebuild synthesises nothing and writes the same scripts.
	ctr2 := &counting{TTS: tts}
	_, rep, err = Build(context.Background(), spec, ctr2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Synthesised != 0 || rep.Reused != want || ctr2.calls.Load() != 0 {
		t.Fatalf("rebuild: %+v, TTS calls %d", rep, ctr2.calls.Load())
	}
	second, _ := os.ReadFile(filepath.Join(out, dataset.ScenariosFile))
	if !bytes.Equal(first, second) {
		t.Fatal("rebuild changed scenarios.jsonl")
	}

	// A lost clip and a truncated clip are remade, and only they.
	os.Remove(files[0])
	raw, _ := os.ReadFile(files[1])
	os.WriteFile(files[1], raw[:len(raw)/2], 0o644)
	ctr3 := &counting{TTS: tts}
	_, rep, err = Build(context.Background(), spec, ctr3, nil)
	if err != nil || rep.Synthesised != 2 || ctr3.calls.Load() != 2 {
		t.Fatalf("repair: err %v, %+v", err, rep)
	}
	if _, vs, _ := dataset.ValidatePath(out); len(vs) != 0 {
		t.Fatalf("repaired dataset: %v", vs)
	}

	// The validator notices a clip removed after the build.
	os.Remove(files[2])
	_, vs, _ = dataset.ValidatePath(out)
	if len(vs) == 0 || vs[0].Rule != dataset.RuleClipUnreadable && vs[0].Rule != dataset.RulePreamble {
		t.Fatalf("missing clip: %v", vs)
	}
}

func TestInterruptedBuildLosesNothing(t *testing.T) {
	tts, info := startFlite(t)
	scs, _ := Generate(GenerateSpec{Pairs: 1, Seed: 9})
	out := t.TempDir()
	spec := BuildSpec{Name: "t", Out: out, Scenarios: scs, TTS: info, Workers: 1}
	ctr := &counting{TTS: tts, failAfter: 5}
	_, rep, err := Build(context.Background(), spec, ctr, nil)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, dataset.ScenariosFile)); !os.IsNotExist(err) {
		t.Fatal("an interrupted build wrote scenarios.jsonl")
	}
	if rep.Synthesised != 5 {
		t.Fatalf("first run synthesised %d, want 5", rep.Synthesised)
	}
	ctr2 := &counting{TTS: tts}
	_, rep2, err := Build(context.Background(), spec, ctr2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Reused != 5 || rep2.Synthesised != rep2.Clips-5 {
		t.Fatalf("resumed build: %+v", rep2)
	}
	leftovers, _ := filepath.Glob(filepath.Join(out, "clips", ".*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
}

func TestBuildRefusesBadInput(t *testing.T) {
	tts, info := startFlite(t)
	scs, _ := Generate(GenerateSpec{Pairs: 1, Seed: 2})
	ctx := context.Background()

	bad := append([]dataset.Scenario(nil), scs...)
	bad[0].GoldAnswer = ""
	_, _, err := Build(ctx, BuildSpec{Out: t.TempDir(), Scenarios: bad, TTS: info}, tts, nil)
	var ve *ViolationsError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "gold-answer") {
		t.Fatalf("invalid scripts: err = %v", err)
	}

	_, _, err = Build(ctx, BuildSpec{Out: t.TempDir(), Scenarios: scs, TTS: info, Voices: map[string]string{"B": "nosuch"}}, tts, nil)
	if err == nil || !strings.Contains(err.Error(), `"nosuch"`) || !strings.Contains(err.Error(), "kal16") {
		t.Fatalf("unknown voice: err = %v", err)
	}
}

func TestClipKeyDependsOnEverythingThatChangesTheAudio(t *testing.T) {
	base := dataset.TTSInfo{Name: "flite", Version: "1", Identity: map[string]string{"v": "2.2"}}
	k := ClipKey(base, "awb", "hello", 16000)
	other := dataset.TTSInfo{Name: "flite", Version: "1", Identity: map[string]string{"v": "2.3"}}
	for i, k2 := range []string{
		ClipKey(base, "rms", "hello", 16000),
		ClipKey(base, "awb", "hello.", 16000),
		ClipKey(base, "awb", "hello", 24000),
		ClipKey(other, "awb", "hello", 16000),
	} {
		if k2 == k {
			t.Errorf("case %d: same key", i)
		}
	}
	if ClipKey(base, "awb", "hello", 16000) != k {
		t.Error("key is not stable")
	}
}

func TestPreambleVoiceFollowsTheVoiceMap(t *testing.T) {
	for _, c := range []struct {
		spec BuildSpec
		want string
	}{
		{BuildSpec{}, DefaultPreambleVoice},
		{BuildSpec{Voices: map[string]string{"A": "alloy"}}, "alloy"},
		{BuildSpec{Voices: map[string]string{"A": "alloy", "D": "nova"}}, "nova"},
		{BuildSpec{PreambleVoice: "echo", Voices: map[string]string{"D": "nova"}}, "echo"},
	} {
		if got := preambleVoice(c.spec); got != c.want {
			t.Errorf("preambleVoice(%+v) = %q, want %q", c.spec, got, c.want)
		}
	}
}

// quieter scales one voice's audio down by 20 dB, so that voice would be a level cue.
type quieter struct {
	sdk.TTS
	voice string
}

func (q quieter) Synthesize(ctx context.Context, text, voice string) (sdk.Audio, error) {
	a, err := q.TTS.Synthesize(ctx, text, voice)
	if err == nil && voice == q.voice {
		s := make([]float32, len(a.Samples))
		for i, v := range a.Samples {
			s[i] = v * 0.1
		}
		a.Samples = s
	}
	return a, err
}

// Every clip of a build, every speaker's and the preamble's, reads back at the one
// loudness the build targets (within 16-bit rounding and resampling); the manifest
// records the target and the narrator; another target is another clip.
func TestBuildNormalisesEveryClipToOneLoudness(t *testing.T) {
	tts, info := startFlite(t)
	scs, err := Generate(GenerateSpec{Pairs: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []float64{0, -20} {
		out := t.TempDir()
		spec := BuildSpec{Name: "t", Out: out, Scenarios: scs, TTS: info, Loudness: target, PreambleVoice: "kal",
			Voices: map[string]string{"A": "kal16", "B": "awb", "C": "rms", "D": "slt"}}
		d, rep, err := Build(context.Background(), spec, quieter{tts, "awb"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := target
		if want == 0 {
			want = DefaultLoudness
		}
		if d.Manifest.Loudness != want || d.Manifest.Preamble.Voice != "kal" {
			t.Fatalf("manifest: loudness %g, preamble voice %q", d.Manifest.Loudness, d.Manifest.Preamble.Voice)
		}
		clips := []string{d.PreamblePath()}
		for _, s := range d.Scenarios {
			for _, tu := range s.Turns {
				clips = append(clips, d.ClipPath(tu.Clip))
			}
		}
		for _, c := range clips {
			pcm, err := audio.ReadWAV(c)
			if err != nil {
				t.Fatal(err)
			}
			if l := audio.LoudnessLUFS(pcm); l > want+0.1 || l < want-0.1 && rep.Limited == 0 {
				t.Errorf("target %g: %s reads %.2f LUFS", want, filepath.Base(c), l)
			}
		}
	}
	base := dataset.TTSInfo{Name: "flite", Version: "1"}
	if ClipKeyLoudness(base, "awb", "hi", 16000, -23) == ClipKeyLoudness(base, "awb", "hi", 16000, -20) ||
		ClipKeyLoudness(base, "awb", "hi", 16000, -23) == ClipKey(base, "awb", "hi", 16000) {
		t.Error("the loudness target is not part of the clip key")
	}
}
