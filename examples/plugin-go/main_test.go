package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// build compiles this plugin once per test binary: the tests run the real binary.
func build(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("flite is not installed (scripts/install-apt.sh)")
	}
	return plugintest.BuildGo(t, ".")
}

// TestMain deletes the plugin binary plugintest.BuildGo made.
func TestMain(m *testing.M) {
	code := m.Run()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

func TestConformance(t *testing.T) {
	bin := build(t)
	plugintest.Run(t, pluginhost.Spec{Name: "example", Source: bin}, plugintest.Options{})

	t.Run("refuses_to_run_by_hand", func(t *testing.T) {
		out, err := exec.Command(bin).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "example-speaker 0.2.0 is a duplexmpe plugin") ||
			!strings.Contains(string(out), "--debug") {
			t.Fatalf("run by hand: %v\n%s", err, out)
		}
	})
}

// start runs the real plugin process, configured.
func start(t *testing.T, config map[string]any) sdk.Conversation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "example", Source: build(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	if err := c.Configure(ctx, config); err != nil {
		t.Fatal(err)
	}
	m, err := c.Model()
	if err != nil {
		t.Fatal(err)
	}
	conv, err := m.Start(ctx, sdk.ConversationStart{ID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conv.Close() })
	return conv
}

func frames(level float32, n int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, frameSize)
		for j := range out[i] {
			out[i][j] = level
		}
	}
	return out
}

// The answer is speech: after loud input and a pause it says its sentence, and Silero,
// the harness's VAD, finds speech in it, so it counts as a response (a tone would not).
func TestAnswersWithSpeechTheVADHears(t *testing.T) {
	conv := start(t, map[string]any{"threshold": 0.1, "pause_s": 0.16})
	in := append(frames(0, 2), frames(0.5, 5)...) // quiet, then someone talks
	in = append(in, frames(0, 80)...)             // and stops: 6.4 s of quiet
	var outs []sdk.Output
	for _, f := range in {
		o, err := conv.Step(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, o)
	}
	first := -1
	var said []float32
	for i, o := range outs {
		if len(o.Samples) > frameSize {
			t.Fatalf("frame %d: %d samples, more than one frame's worth", i, len(o.Samples))
		}
		if len(o.Samples) > 0 && first < 0 {
			first = i
		}
		said = append(said, o.Samples...)
	}
	// Loud frames 2-6, quiet from 7: the second quiet frame (8) completes the 0.16 s pause.
	if first != 8 || outs[first].Text != "answer" {
		t.Fatalf("the answer starts at frame %d (text %q); want frame 8, text \"answer\"", first, outs[max(first, 0)].Text)
	}
	det, err := vad.Open(vad.Options{})
	if err != nil {
		t.Skipf("no VAD here (%v): run make deps", err)
	}
	defer det.Close()
	eps, err := det.Episodes(audio.PCM{Samples: said, Rate: rate}, protocol.DefaultVAD())
	if err != nil {
		t.Fatal(err)
	}
	var speech float64
	for _, e := range eps {
		speech += e.Duration()
	}
	if speech < 1.5 {
		t.Fatalf("Silero finds %.2f s of speech in the %.2f s answer (%v); want most of it", speech, float64(len(said))/rate, eps)
	}
}

// Talked over, it stops at once and drops what it queued.
func TestStopsWhenTalkedOver(t *testing.T) {
	conv := start(t, map[string]any{"threshold": 0.1, "pause_s": 0.08})
	var outs []sdk.Output
	for _, f := range append(append(frames(0.5, 1), frames(0, 4)...), frames(0.5, 2)...) {
		o, err := conv.Step(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, o)
	}
	// loud, quiet (pause over: answer), answer, answer, answer, loud (stop), loud.
	for i, want := range []int{0, frameSize, frameSize, frameSize, frameSize, 0, 0} {
		if len(outs[i].Samples) != want {
			t.Fatalf("frame %d: %d samples, want %d", i, len(outs[i].Samples), want)
		}
	}
	if !outs[5].Flush || outs[6].Flush {
		t.Errorf("flush on frames 5 and 6 = %v, %v; want the first frame talked over to flush", outs[5].Flush, outs[6].Flush)
	}
}

func TestRefusesBadConfig(t *testing.T) {
	s := &speaker{}
	for _, cfg := range []map[string]any{{"threshold": 2.0}, {"pause_s": "long"}, {"answer": "  "}} {
		if err := s.Configure(context.Background(), cfg); err == nil {
			t.Errorf("Configure(%v) accepted", cfg)
		}
	}
}
