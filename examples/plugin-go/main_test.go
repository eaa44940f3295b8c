package main

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// build compiles this plugin once per test binary: the tests run the real binary.
func build(t *testing.T) string {
	t.Helper()
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
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "example-beeper 0.1.0 is a duplexmpe plugin") ||
			!strings.Contains(string(out), "--debug") {
			t.Fatalf("run by hand: %v\n%s", err, out)
		}
	})

	t.Run("answers_loud_input_with_a_tone", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "example", Source: bin}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Kill()
		if err := c.Configure(ctx, map[string]any{"threshold": 0.1, "tone_hz": 1000.0, "tone_seconds": 0.2}); err != nil {
			t.Fatal(err)
		}
		m, _ := c.Model()
		conv, err := m.Start(ctx, sdk.ConversationStart{ID: "t"})
		if err != nil {
			t.Fatal(err)
		}
		defer conv.Close()
		loud := make([]float32, frameSize)
		for i := range loud {
			loud[i] = 0.5 // RMS 0.5
		}
		quiet := make([]float32, frameSize)
		var outs [][]float32
		var texts []string
		for _, in := range [][]float32{quiet, loud, quiet, quiet, quiet} {
			o, err := conv.Step(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			outs, texts = append(outs, o.Samples), append(texts, o.Text)
		}
		// 0.2 s at 24 kHz = 4800 samples: 1920 + 1920 + 960, starting at the loud frame.
		want := []int{0, 1920, 1920, 960, 0}
		for i, o := range outs {
			if len(o) != want[i] {
				t.Fatalf("frame %d: %d samples; want %d (all: %v)", i, len(o), want[i], want)
			}
		}
		if texts[1] != "beep" {
			t.Errorf("text of the loud frame = %q; want beep", texts[1])
		}
		// A 1000 Hz sine at 24 kHz crosses zero 2000 times a second: ~160 times in 80 ms.
		crossings := 0
		for i := 1; i < len(outs[1]); i++ {
			if (outs[1][i-1] < 0) != (outs[1][i] < 0) {
				crossings++
			}
		}
		if math.Abs(float64(crossings)-160) > 2 {
			t.Errorf("%d zero crossings in the first tone frame; want ~160 for 1000 Hz", crossings)
		}
	})
}
