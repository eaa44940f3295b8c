package dataset

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
)

// A set's background loop reads back as written; a clean set has none; a loop the set
// names but does not hold is an error that names the room.
func TestReadBackground(t *testing.T) {
	dir := t.TempDir()
	if p, err := (&Dataset{Dir: dir}).ReadBackground(); err != nil || len(p.Samples) != 0 {
		t.Fatalf("a clean set: %d samples, %v", len(p.Samples), err)
	}
	loop := audio.PCM{Samples: make([]float32, 1600), Rate: 16000}
	for i := range loop.Samples {
		loop.Samples[i] = float32(i%50) / 100
	}
	if err := audio.WriteWAV(filepath.Join(dir, "bed.wav"), loop); err != nil {
		t.Fatal(err)
	}
	d := &Dataset{Dir: dir, Manifest: &Manifest{Room: &Room{Preset: "kitchen", Background: &Background{Clip: "bed.wav"}}}}
	if p, err := d.ReadBackground(); err != nil || len(p.Samples) != len(loop.Samples) || p.Rate != loop.Rate {
		t.Fatalf("the loop: %d samples at %d Hz, %v", len(p.Samples), p.Rate, err)
	}
	d.Manifest.Room.Background.Clip = "missing.wav"
	if _, err := d.ReadBackground(); err == nil || !strings.Contains(err.Error(), "room kitchen") {
		t.Fatalf("a missing loop: %v", err)
	}
}
