package store

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
)

// A model's float output is stored as 16-bit FLAC: each sample within half a step, the
// clipped ones at full scale, and the file says that it was not exact and what clipped.
func TestAudibleIsStoredAs16BitFLAC(t *testing.T) {
	s, _ := Create(t.TempDir(), manifest())
	id := "0123456789abcdef0123456789abcdef"
	rec := sampleRecord("")
	float := make([]float32, 24000)
	for i := range float {
		float[i] = float32(0.4*math.Sin(float64(i)/9) + 1e-6*float64(i%7))
	}
	float[10], float[11] = 1.5, -2 // beyond full scale
	rec.Audible = audio.PCM{Samples: float, Rate: 24000}
	rec.Frames = len(float) / rec.Format.FrameSize // Check wants the audio as long as the frames played
	must(t, s.Save(meta(id), rec))
	dir := s.ItemDir(id)
	if AudibleFile(dir) != filepath.Join(dir, AudibleFLAC) || exists(filepath.Join(dir, AudibleWAV)) {
		t.Fatalf("audio file %q, want audible.flac only", AudibleFile(dir))
	}
	raw, err := os.ReadFile(filepath.Join(dir, AudibleFLAC))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 2*len(float) {
		t.Errorf("audible.flac is %d bytes, more than 16-bit PCM", len(raw))
	}
	pcm, comments, err := audio.DecodeFLAC(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"DUPLEXMPE_SOURCE=float32", "DUPLEXMPE_EXACT=false", "DUPLEXMPE_CLIPPED=2"} {
		if !slices.Contains(comments, c) {
			t.Errorf("comments %v lack %s", comments, c)
		}
	}
	it, err := s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	got := it.Record.Audible
	if got.Rate != 24000 || len(got.Samples) != len(float) || !slices.Equal(got.Samples, pcm.Samples) {
		t.Fatalf("Load gave %d Hz, %d samples, not the file's", got.Rate, len(got.Samples))
	}
	if got.Samples[10] != 32767.0/32768 || got.Samples[11] != -1 {
		t.Errorf("clipped samples read %v, %v", got.Samples[10], got.Samples[11])
	}
	for i, v := range float {
		if i == 10 || i == 11 {
			continue
		}
		if d := math.Abs(float64(got.Samples[i] - v)); d > 0.5/32768 {
			t.Fatalf("sample %d moved by %g, more than half a 16-bit step", i, d)
		}
	}
	// Output that is 16-bit already (the cascade's, flite's) is exact, and says so.
	rec = sampleRecord("")
	must(t, s.Save(meta(id), rec))
	raw, _ = os.ReadFile(filepath.Join(dir, AudibleFLAC))
	if _, comments, _ := audio.DecodeFLAC(raw); !slices.Contains(comments, "DUPLEXMPE_EXACT=true") {
		t.Errorf("comments %v, want DUPLEXMPE_EXACT=true", comments)
	}
}

// A run directory written before the FLAC format (audible.wav, 32-bit float) still
// loads, every sample exactly as it was played.
func TestOldFloatWAVItemsStillLoad(t *testing.T) {
	s, _ := Create(t.TempDir(), manifest())
	id := "0123456789abcdef0123456789abcdef"
	rec := sampleRecord("")
	must(t, s.Save(meta(id), rec))
	dir := s.ItemDir(id)
	float := make([]float32, 2400)
	for i := range float {
		float[i] = float32(math.Sin(float64(i)/7)) * 0.3 // not 16-bit values
	}
	must(t, os.Remove(filepath.Join(dir, AudibleFLAC)))
	must(t, audio.WriteWAVAs(filepath.Join(dir, AudibleWAV), audio.PCM{Samples: float, Rate: 24000}, audio.Float32))
	it, err := s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(it.Record.Audible.Samples, float) || it.Record.Audible.Rate != 24000 {
		t.Fatal("the float32 audio of an old item did not load exactly")
	}
	// Verified as before: a cut audible.wav is damaged.
	wav, _ := os.ReadFile(filepath.Join(dir, AudibleWAV))
	must(t, os.WriteFile(filepath.Join(dir, AudibleWAV), wav[:len(wav)-400], 0o644))
	if st, err := s.Status(id), s.Check(id); st != Damaged || err == nil || !strings.Contains(err.Error(), "audible.wav") {
		t.Errorf("a cut audible.wav: status %v, %v", st, err)
	}
	// A damaged audio file is an error naming the item, never a shorter clip.
	must(t, s.Save(meta(id), rec))
	path := filepath.Join(dir, AudibleFLAC)
	raw, _ := os.ReadFile(path)
	must(t, os.WriteFile(path, raw[:len(raw)-3], 0o644))
	if _, err := s.Load(id); err == nil || !strings.Contains(err.Error(), id) {
		t.Errorf("a truncated audible.flac loaded: %v", err)
	}
}
