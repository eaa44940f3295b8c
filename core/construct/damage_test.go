package construct

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/tests/reliability/damage"
)

// Before, a rebuild reused a damaged clip that was still a WAV (8-bit, stereo, float,
// NaN, another sound) and rewrote its duration; a NaN clip then stopped every run.
// Every entry of the damage catalogue is now re-synthesised, with a line saying so, and
// the rebuilt dataset validates.
func TestRebuildResynthesisesDamagedClips(t *testing.T) {
	tts, info := startFlite(t)
	scs, err := Generate(GenerateSpec{Pairs: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	spec := BuildSpec{Name: "t", Out: out, Scenarios: scs, TTS: info}
	d, _, err := Build(context.Background(), spec, tts, nil)
	if err != nil {
		t.Fatal(err)
	}
	clip := d.Scenarios[0].Turns[1].Clip
	path := d.ClipPath(clip)
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, dmg := range damage.Clips {
		t.Run(dmg.Name, func(t *testing.T) {
			if err := dmg.Damage(path); err != nil {
				t.Fatal(err)
			}
			ctr := &counting{TTS: tts}
			_, rep, err := Build(context.Background(), spec, ctr, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Synthesised != 1 || ctr.calls.Load() != 1 || len(rep.Rebuilt) != 1 {
				t.Fatalf("report %+v, %d TTS calls; want that one clip re-synthesised", rep, ctr.calls.Load())
			}
			if !strings.Contains(rep.Rebuilt[0], clip) || !strings.Contains(rep.Rebuilt[0], "synthesised it again") {
				t.Errorf("note %q does not name the clip and what was done", rep.Rebuilt[0])
			}
			if got, _ := os.ReadFile(path); string(got) != string(want) {
				t.Error("the re-synthesised clip differs from the one first built (flite is deterministic)")
			}
			if _, vs, err := dataset.ValidatePath(out); err != nil || len(vs) != 0 {
				t.Fatalf("after the rebuild: %v %v", err, vs)
			}
		})
	}

	// A dataset built before clips.sha256 existed: another sound of the right format is
	// caught by its recorded duration.
	os.Remove(filepath.Join(out, dataset.ClipSumsFile))
	if err := damage.Clips[4].Damage(path); err != nil { // the 1 s tone
		t.Fatal(err)
	}
	_, rep, err := Build(context.Background(), spec, tts, nil)
	if err != nil || len(rep.Rebuilt) != 1 || !strings.Contains(rep.Rebuilt[0], "the last build recorded") {
		t.Fatalf("without sums: err %v, report %+v", err, rep)
	}
}

// endless is a TTS that speaks every text for 200 s.
type endless struct{ sdk.TTS }

func (endless) Synthesize(context.Context, string, string) (sdk.Audio, error) {
	return sdk.Audio{Samples: make([]float32, 200*16000), Rate: 16000}, nil
}

// Before, a 100 KB turn became a 51-minute clip. The script rule stops long text; the
// clip bound stops a TTS that runs on.
func TestLongTurnsAndClipsAreRefused(t *testing.T) {
	tts, info := startFlite(t)
	scs, _ := Generate(GenerateSpec{Pairs: 1, Seed: 2})
	long := append([]dataset.Scenario(nil), scs...)
	long[0].Turns = append([]dataset.Turn(nil), long[0].Turns...)
	long[0].Turns[0].Text = strings.Repeat("word ", 20000)
	_, _, err := Build(context.Background(), BuildSpec{Out: t.TempDir(), Scenarios: long, TTS: info}, tts, nil)
	if err == nil || !strings.Contains(err.Error(), "turn-text") || !strings.Contains(err.Error(), "at most 1000") {
		t.Fatalf("a 100 KB turn: err = %v", err)
	}
	_, _, err = Build(context.Background(), BuildSpec{Out: t.TempDir(), Scenarios: scs, TTS: info, Workers: 1}, endless{tts}, nil)
	if err == nil || !strings.Contains(err.Error(), "200.0 s clip") || !strings.Contains(err.Error(), "at most") {
		t.Fatalf("a 200 s clip: err = %v", err)
	}
	_, _, err = Build(context.Background(), BuildSpec{Out: t.TempDir(), Scenarios: scs, TTS: info, Preamble: strings.Repeat("x", 6000)}, tts, nil)
	if err == nil || !strings.Contains(err.Error(), "preamble has 6000 characters") {
		t.Fatalf("a long preamble: err = %v", err)
	}
}
