// Package adaptertest is the Go host test that every Python model adapter in plugins/
// (moshi, flm-audio, minicpm-o, voila, freeze-omni) passes: its plugin.py started by the
// real duplexmpe plugin host (go-plugin, AutoMTLS, gRPC) with the repository's .venv,
// and its model library replaced by a numpy stand-in (plugins/_standins) through the
// adapter's `factory` config field. An adapter's host_test.go describes the adapter in
// an Adapter and calls Conformance and UnderTheHost from its own test functions.
package adaptertest

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// Adapter is what differs between the adapters' host tests.
type Adapter struct {
	Name    string     // the plugin's name, as Describe reports it
	Factory string     // the stand-in's factory, e.g. "standin_moshi:load"
	Format  sdk.Format // the conversation format the adapter must announce
	// LoudFrames of a 200 Hz tone, then QuietAfter silent frames: enough for the
	// stand-in to answer.
	LoudFrames, QuietAfter int
	// BadField is a config field that must reject the string "bad" with InvalidArgument.
	BadField string
}

// Spec starts plugin.py in the test's working directory (the adapter's directory, as
// go test runs it) with the repository's .venv, the stand-ins on PYTHONPATH. It skips
// the test when the .venv is missing.
func Spec(t *testing.T, a Adapter) pluginhost.Spec {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(dir, "..", "..", ".venv", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		t.Skipf("the adapter needs the repository's .venv (%s is missing): run `make deps-py` first", python)
	}
	return pluginhost.Spec{
		Name:         a.Name,
		Command:      []string{python, "plugin.py"},
		Dir:          dir,
		Env:          map[string]string{"PYTHONPATH": filepath.Join(dir, "..", "_standins")},
		StartTimeout: startBound,
	}
}

// Conformance runs the suite every plugin passes (sdk/plugintest) on the adapter,
// configured with its stand-in.
func Conformance(t *testing.T, a Adapter) {
	plugintest.Run(t, Spec(t, a), plugintest.Options{Config: map[string]any{"factory": a.Factory}})
}

// UnderTheHost checks the adapter through the host's client: its name and kind, a bad
// config value refused with InvalidArgument naming the field, the stand-in's identity
// after Configure, an audible answer with text to speech followed by silence, and a
// second conversation with the same seed giving the same outputs.
func UnderTheHost(t *testing.T, a Adapter) {
	c := start(t, a)
	ctx := context.Background()
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != a.Name || strings.Join(info.Kinds, ",") != "model" || info.ProtocolVersion != sdk.ProtocolVersion {
		t.Fatalf("Describe = %q kinds %v protocol %d", info.Name, info.Kinds, info.ProtocolVersion)
	}
	err = c.Configure(ctx, map[string]any{"factory": a.Factory, a.BadField: "bad"})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), a.BadField) {
		t.Fatalf("Configure with a bad %s = %v, want InvalidArgument naming it", a.BadField, err)
	}
	if err := c.Configure(ctx, map[string]any{"factory": a.Factory}); err != nil {
		t.Fatal(err)
	}
	if info, err = c.Describe(ctx); err != nil || !strings.HasPrefix(info.Identity["library"], "standin_") {
		t.Fatalf("identity after Configure = %v (%v), want the stand-in's", info.Identity, err)
	}
	model, err := c.Model()
	if err != nil {
		t.Fatal(err)
	}
	first := converse(t, a, model, 5)
	var samples int
	var peak float64
	var text string
	for _, o := range first {
		samples += len(o.Samples)
		text += o.Text
		for _, s := range o.Samples {
			peak = math.Max(peak, math.Abs(float64(s)))
		}
	}
	if peak < 0.1 || text == "" {
		t.Fatalf("no answer: %d samples, peak %.3f, text %q", samples, peak, text)
	}
	// A second conversation starts from fresh state: same seed, same answer.
	if again := converse(t, a, model, 5); !reflect.DeepEqual(first, again) {
		t.Fatal("two conversations with the same seed differ")
	}
}

// startBound only bounds a plugin that hangs at start: a Python adapter importing numpy on
// a machine saturated by other work took over a minute once (it starts in 1-2 s idle).
const startBound = 5 * time.Minute

func start(t *testing.T, a Adapter) *pluginhost.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startBound)
	defer cancel()
	c, err := pluginhost.Start(ctx, Spec(t, a), nil)
	if err != nil {
		t.Fatalf("starting %s through the host: %v", a.Name, err)
	}
	t.Cleanup(c.Kill)
	return c
}

// speechThenSilence is a 200 Hz tone for a.LoudFrames frames, then a.QuietAfter silent
// ones: every stand-in answers after speech followed by silence.
func speechThenSilence(a Adapter) [][]float32 {
	size, rate := a.Format.FrameSize, float64(a.Format.InputRate)
	var frames [][]float32
	for f := 0; f < a.LoudFrames+a.QuietAfter; f++ {
		frame := make([]float32, size)
		if f < a.LoudFrames {
			for i := range frame {
				frame[i] = float32(0.4 * math.Sin(2*math.Pi*200*float64(f*size+i)/rate))
			}
		}
		frames = append(frames, frame)
	}
	return frames
}

func converse(t *testing.T, a Adapter, model sdk.Model, seed int64) []sdk.Output {
	t.Helper()
	ctx := context.Background()
	conv, err := model.Start(ctx, sdk.ConversationStart{ID: "host-test", Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if got := conv.Format(); got != a.Format {
		t.Fatalf("format = %+v, want %+v", got, a.Format)
	}
	var outs []sdk.Output
	for i, frame := range speechThenSilence(a) {
		out, err := conv.Step(ctx, frame)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		outs = append(outs, out)
	}
	if err := conv.Close(); err != nil {
		t.Fatal(err)
	}
	return outs
}
