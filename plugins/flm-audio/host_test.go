package flmaudio_test

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

// The flm-audio adapter under the real duplexmpe plugin host (go-plugin, AutoMTLS, gRPC), with
// the model library replaced by its numpy stand-in (plugins/_standins) through the
// adapter's factory config field.
const (
	name       = "flm-audio"
	factory    = "standin_flmaudio:load"
	inputRate  = 24000
	outputRate = 24000
	frameSize  = 1920
	loudFrames = 4
	quietAfter = 30
	badField   = "top_p_text"
)

// spec starts plugin.py with the repository's .venv, the stand-ins on PYTHONPATH.
func spec(t *testing.T) pluginhost.Spec {
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
		Name:         name,
		Command:      []string{python, "plugin.py"},
		Dir:          dir,
		Env:          map[string]string{"PYTHONPATH": filepath.Join(dir, "..", "_standins")},
		StartTimeout: time.Minute,
	}
}

func start(t *testing.T) *pluginhost.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, spec(t), nil)
	if err != nil {
		t.Fatalf("starting %s through the host: %v", name, err)
	}
	t.Cleanup(c.Kill)
	return c
}

// TestConformance runs the suite every plugin passes (sdk/plugintest) on the adapter,
// configured with its stand-in.
func TestConformance(t *testing.T) {
	plugintest.Run(t, spec(t), plugintest.Options{Config: map[string]any{"factory": factory}})
}

// speechThenSilence is a 200 Hz tone for loudFrames frames, then quietAfter silent ones:
// every stand-in answers after speech followed by silence.
func speechThenSilence() [][]float32 {
	var frames [][]float32
	for f := 0; f < loudFrames+quietAfter; f++ {
		frame := make([]float32, frameSize)
		if f < loudFrames {
			for i := range frame {
				frame[i] = float32(0.4 * math.Sin(2*math.Pi*200*float64(f*frameSize+i)/inputRate))
			}
		}
		frames = append(frames, frame)
	}
	return frames
}

func converse(t *testing.T, model sdk.Model, seed int64) []sdk.Output {
	t.Helper()
	ctx := context.Background()
	conv, err := model.Start(ctx, sdk.ConversationStart{ID: "host-test", Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	want := sdk.Format{InputRate: inputRate, OutputRate: outputRate, FrameSize: frameSize}
	if got := conv.Format(); got != want {
		t.Fatalf("format = %+v, want %+v", got, want)
	}
	var outs []sdk.Output
	for i, frame := range speechThenSilence() {
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

func TestUnderTheHost(t *testing.T) {
	c := start(t)
	ctx := context.Background()
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != name || strings.Join(info.Kinds, ",") != "model" || info.ProtocolVersion != sdk.ProtocolVersion {
		t.Fatalf("Describe = %q kinds %v protocol %d", info.Name, info.Kinds, info.ProtocolVersion)
	}
	err = c.Configure(ctx, map[string]any{"factory": factory, badField: "bad"})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), badField) {
		t.Fatalf("Configure with a bad %s = %v, want InvalidArgument naming it", badField, err)
	}
	if err := c.Configure(ctx, map[string]any{"factory": factory}); err != nil {
		t.Fatal(err)
	}
	if info, err = c.Describe(ctx); err != nil || !strings.HasPrefix(info.Identity["library"], "standin_") {
		t.Fatalf("identity after Configure = %v (%v), want the stand-in's", info.Identity, err)
	}
	model, err := c.Model()
	if err != nil {
		t.Fatal(err)
	}
	first := converse(t, model, 5)
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
	if again := converse(t, model, 5); !reflect.DeepEqual(first, again) {
		t.Fatal("two conversations with the same seed differ")
	}
}
