package adaptertest

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/session"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// The upstream tier (`make test-adapters`): an adapter's plugin.py on the real model
// library with a tiny model, run by a Python that has torch.

// EnvPython names the interpreter of the upstream tier: a Python with torch and the model
// libraries (`make test-adapters` sets it to .venv-adapters/bin/python).
const EnvPython = "DUPLEXMPE_ADAPTERS_PYTHON"

// ShippedDataset is where `make dataset-check` builds the shipped scenarios, from the
// repository root.
const ShippedDataset = "build/datasets/shipped"

// ShortestShipped is the shipped scenario with the least speech (28.4 s of turns; with
// the 31 s preamble, the gaps and the tail about 75 s, 940 frames of 80 ms).
const ShortestShipped = "hand-11-explicit"

// Python returns the upstream tier's interpreter, or skips the test when EnvPython is unset.
func Python(t *testing.T) string {
	t.Helper()
	p := os.Getenv(EnvPython)
	if p == "" {
		t.Skipf("%s is not set: the upstream tier needs a Python with torch and the model libraries (make test-adapters uses .venv-adapters/bin/python)", EnvPython)
	}
	return p
}

// Upstream returns the checkout of a model's repository named by the environment variable
// env, or skips the test when it is unset.
func Upstream(t *testing.T, env, repo string) string {
	t.Helper()
	dir := os.Getenv(env)
	if dir == "" {
		t.Skipf("%s is not set: point it at a checkout of %s (.ci/run points it at the upstream snapshot when the machine has one)", env, repo)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// UpstreamSpec starts plugin.py in the test's working directory (the adapter's directory)
// with the upstream tier's Python, the adapter's tests_real on PYTHONPATH (where its tiny
// model's factory lives), one torch thread (tiny matrices: faster, and bitwise
// repeatable) and env on top.
func UpstreamSpec(t *testing.T, name string, env map[string]string) pluginhost.Spec {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{"PYTHONPATH": filepath.Join(dir, "tests_real"), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
	for k, v := range env {
		e[k] = v
	}
	return pluginhost.Spec{
		Name: name, Command: []string{Python(t), "plugin.py"}, Dir: dir, Env: e,
		StartTimeout: 5 * time.Minute,
	}
}

// StartUpstream starts and configures the plugin; it is killed when the test ends.
func StartUpstream(t *testing.T, spec pluginhost.Spec, config map[string]any) (*pluginhost.Client, sdk.Model) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, spec, nil)
	if err != nil {
		t.Fatalf("starting %s: %v", spec.Name, err)
	}
	t.Cleanup(c.Kill)
	if err := c.Configure(ctx, config); err != nil {
		t.Fatalf("configuring %s with %v: %v", spec.Name, config, err)
	}
	m, err := c.Model()
	if err != nil {
		t.Fatal(err)
	}
	return c, m
}

// RepoRoot is the repository root, from this file's location.
func RepoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the repository")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Shipped loads one scenario of the shipped dataset as the evaluation loop plays it: the
// preamble, then every turn's clip. It fails (not skips) when the dataset is missing:
// `make test-adapters` builds it first.
func Shipped(t *testing.T, scenarioID string) session.Conversation {
	t.Helper()
	ds, err := dataset.Load(filepath.Join(RepoRoot(t), ShippedDataset))
	if err != nil {
		t.Fatalf("%v (build it with `make dataset-check`)", err)
	}
	conv := session.Conversation{ID: scenarioID}
	if p := ds.PreamblePath(); p != "" {
		if conv.Preamble, err = audio.ReadWAV(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, sc := range ds.Scenarios {
		if sc.ScenarioID != scenarioID {
			continue
		}
		for i, turn := range sc.Turns {
			pcm, err := audio.ReadWAV(ds.ClipPath(turn.Clip))
			if err != nil {
				t.Fatalf("scenario %s turn %d: %v (rebuild with `make dataset-check`)", scenarioID, i, err)
			}
			addressee := turn.Addressee
			if addressee == "none" {
				addressee = ""
			}
			conv.Turns = append(conv.Turns, session.Turn{Index: i, Label: turn.Label, Speaker: turn.Speaker,
				Text: turn.Text, Addressee: addressee, Audio: pcm})
		}
		return conv
	}
	t.Fatalf("no scenario %s in %s", scenarioID, ShippedDataset)
	return conv
}

// Play runs the harness's session on conv (the protocol's defaults, the real Silero VAD
// from the repository's .cache) and returns the record; a failed conversation fails the
// test with the failure.
func Play(t *testing.T, m sdk.Model, conv session.Conversation, seed int64) *record.Record {
	t.Helper()
	det, err := vad.Open(vad.Options{})
	if err != nil {
		t.Fatalf("%v (run `make deps`)", err)
	}
	defer det.Close()
	rec, err := session.Run(context.Background(), m, conv, session.Options{
		Params: protocol.Defaults(), VAD: protocol.DefaultVAD(), Detector: det, Seed: seed,
		FrameDeadline: 2 * time.Minute, StartDeadline: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Failed() {
		t.Fatalf("conversation %s failed after %d frames: %s", conv.ID, rec.Frames, rec.Failure)
	}
	return rec
}

// CheckPlayed checks that rec is conv played to its end: every turn on the timeline in
// order, the session at least as long as the preamble and the turns, one Step per frame
// of it, and an audible waveform of exactly that length that is not all silence.
func CheckPlayed(t *testing.T, conv session.Conversation, rec *record.Record) {
	t.Helper()
	speech := conv.Preamble.Duration()
	for _, turn := range conv.Turns {
		speech += turn.Audio.Duration()
	}
	tl := rec.Timeline
	if len(tl.Turns) != len(conv.Turns) {
		t.Fatalf("%d of %d turns on the timeline", len(tl.Turns), len(conv.Turns))
	}
	for i := 1; i < len(tl.Turns); i++ {
		if tl.Turns[i].Start < tl.Turns[i-1].End {
			t.Fatalf("turn %d starts at %.3f s, before turn %d ends (%.3f s)", i, tl.Turns[i].Start, i-1, tl.Turns[i-1].End)
		}
	}
	if tl.Duration < speech {
		t.Fatalf("the session lasted %.1f s, less than its %.1f s of speech", tl.Duration, speech)
	}
	f := rec.Format
	if want := float64(rec.Frames*f.FrameSize) / float64(f.InputRate); math.Abs(want-tl.Duration) > 1e-6 {
		t.Fatalf("%d frames are %.3f s, the session %.3f s", rec.Frames, want, tl.Duration)
	}
	if want := rec.Frames * f.FrameSize * f.OutputRate / f.InputRate; len(rec.Audible.Samples) != want {
		t.Fatalf("%d audible samples, want %d", len(rec.Audible.Samples), want)
	}
	var peak float64
	for _, s := range rec.Audible.Samples {
		peak = math.Max(peak, math.Abs(float64(s)))
	}
	if peak == 0 {
		t.Fatal("the model was silent for the whole conversation")
	}
	t.Logf("%s: %d frames (%.1f s, %.1f s of speech), %d turns, %d speech episodes, %d text pieces, peak %.2f",
		conv.ID, rec.Frames, tl.Duration, speech, len(tl.Turns), len(rec.Episodes), len(rec.Text), peak)
}
