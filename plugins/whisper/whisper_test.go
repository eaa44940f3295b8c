package whisper_test

import (
	"context"
	"errors"
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
	"github.com/duplexmpe/duplexmpe/plugins/lexical-judge/lexical"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// spec runs the plugin exactly as a run file does: run.sh, which execs .venv-whisper's
// Python on plugin.py.
func spec(t *testing.T) pluginhost.Spec {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "..", "..", ".venv-whisper", "bin", "python")); err != nil {
		t.Skip("the whisper plugin needs .venv-whisper: run `make deps-whisper` first (make test does)")
	}
	return pluginhost.Spec{Name: "whisper", Command: []string{"./run.sh"}, Dir: dir, StartTimeout: 2 * time.Minute}
}

// speak synthesises text with a flite voice, at that voice's own rate.
func speak(t *testing.T, voice, text string) sdk.Audio {
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
	return sdk.Audio{Samples: clip.Samples, Rate: clip.Rate}
}

// The conformance suite every plugin passes, on the real weights over real gRPC, with
// flite speech.
func TestConformance(t *testing.T) {
	plugintest.Run(t, spec(t), plugintest.Options{ASRClip: speak(t, "slt", "please set a timer for twenty minutes"), ASRLanguage: "en"})
}

// Through core/pluginhost as scoring uses it: the identity names the model and the hash
// of its weights; the transcript of a clip at flite's 8 kHz (resampled by the plugin)
// answers the gold "$9" in the lexical judge; the same clips give the same transcripts
// with one worker in order and with three in parallel in another order.
func TestTranscriptsOverGRPC(t *testing.T) {
	s := spec(t)
	clips := []sdk.Audio{
		speak(t, "kal", "the ticket costs nine dollars"),
		speak(t, "slt", "the meeting starts at three thirty"),
		speak(t, "rms", "okay understood"),
		speak(t, "awb", "the ferry leaves at seven"),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // bounds a hang only
	defer cancel()
	c, err := pluginhost.Start(ctx, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	asr, err := c.ASR()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Configure(ctx, map[string]any{"compute_type": "float16"}); err == nil || !strings.Contains(err.Error(), "compute_type") {
		t.Errorf("compute_type float16 accepted: %v", err)
	}
	transcribe := func(workers float64, order []int, parallel int) []string {
		if err := c.Configure(ctx, map[string]any{"workers": workers}); err != nil {
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
					got[k], errs[k] = asr.Transcribe(ctx, clips[order[k]], "")
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
	one := transcribe(1, []int{0, 1, 2, 3}, 1)
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(info.Kinds, sdk.KindASR) || info.Identity["model"] != "whisper-tiny.en" || len(info.Identity["weights_sha256"]) != 64 ||
		!strings.Contains(info.Identity["weights_licence"], "MIT") {
		t.Errorf("describe = %+v", info)
	}
	if ok, missing := lexical.MatchAnswer("$9", one[0]); !ok {
		t.Errorf("transcript %q does not answer $9 (missing %q)", one[0], missing)
	}
	if ok, _ := lexical.MatchAnswer("3:30", one[1]); !ok {
		t.Errorf("transcript %q does not answer 3:30", one[1])
	}
	order := []int{3, 1, 2, 0, 1}
	for k, got := range transcribe(3, order, 3) {
		if i := order[k]; got != one[i] {
			t.Errorf("clip %d: %q with three workers in parallel (call %d), %q with one in order", i, got, k, one[i])
		}
	}
	t.Logf("transcripts: %q", one)
}
