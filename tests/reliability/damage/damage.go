// Package damage is the catalogue of damaged inputs the reliability tests apply: the ways
// a fault campaign found a built clip or a finished run-store item broken while it still
// looked usable. Each entry rewrites one file (or item directory) in place; the tests of
// core/dataset, core/construct, core/store and the reliability suite check that every
// one is caught, reported and rebuilt.
package damage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/duplexmpe/duplexmpe/core/audio"
)

// Clip is one way to damage a clip the build wrote (16-bit PCM, mono).
type Clip struct {
	Name   string
	Damage func(path string) error
}

// Clips: other formats with the same sound, non-finite samples, another sound in the
// right format, and a cut file.
var Clips = []Clip{
	{"8-bit", func(p string) error { return reencode(p, false, 8, 1) }},
	{"stereo", func(p string) error { return reencode(p, false, 16, 2) }},
	{"float", func(p string) error { return reencode(p, true, 32, 1) }},
	{"nan", func(p string) error {
		rate, err := rateOf(p)
		if err != nil {
			return err
		}
		x := make([]float64, rate)
		x[100] = math.NaN()
		return os.WriteFile(p, WAV(true, 32, 1, rate, x), 0o644)
	}},
	{"1 s tone", func(p string) error {
		rate, err := rateOf(p)
		if err != nil {
			return err
		}
		x := make([]float64, rate)
		for i := range x {
			x[i] = 0.5 * math.Sin(2*math.Pi*1000*float64(i)/float64(rate))
		}
		return os.WriteFile(p, WAV(false, 16, 1, rate, x), 0o644)
	}},
	{"truncated", func(p string) error { return truncate(p) }},
}

// Item is one way to damage a finished run-store item directory.
type Item struct {
	Name   string
	Damage func(dir string) error
}

// Items: a cut recording, a JSON file overwritten with garbage, a done marker beside a
// record that never finished, and an item.json relabelled to another model.
var Items = []Item{
	{"truncated audible audio", func(dir string) error { return truncate(audibleFile(dir)) }},
	{"garbage timeline.json", func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "timeline.json"), []byte("\x00\x17garbage{"), 0o644)
	}},
	{"stray done marker", func(dir string) error {
		// What a crash between writes would leave if the marker were not written last:
		// the marker, but not all of the record.
		for _, f := range []string{"episodes.json", "session.json", "audible.flac", "audible.wav"} {
			if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
		return os.WriteFile(filepath.Join(dir, "done"), []byte("done\n"), 0o644)
	}},
	{"relabelled item.json", func(dir string) error {
		path := filepath.Join(dir, "item.json")
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		m["model"] = fmt.Sprint(m["model"], "-relabelled")
		out, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(path, out, 0o644)
	}},
}

// audibleFile is the item's recording: audible.flac, or audible.wav in runs written
// before the FLAC store.
func audibleFile(dir string) string {
	if p := filepath.Join(dir, "audible.flac"); fileExists(p) {
		return p
	}
	return filepath.Join(dir, "audible.wav")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func truncate(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b[:len(b)/2], 0o644)
}

func rateOf(path string) (int, error) {
	p, err := audio.ReadWAV(path)
	return p.Rate, err
}

// reencode rewrites a clip in another format, keeping its sound and rate.
func reencode(path string, float bool, bits, channels int) error {
	p, err := audio.ReadWAV(path)
	if err != nil {
		return err
	}
	x := make([]float64, len(p.Samples))
	for i, v := range p.Samples {
		x[i] = float64(v)
	}
	return os.WriteFile(path, WAV(float, bits, channels, p.Rate, x), 0o644)
}

// WAV encodes samples in [-1, 1] as a WAV file of any integer (8 or 16 bits) or float
// format, each sample repeated on every channel.
func WAV(float bool, bits, channels, rate int, samples []float64) []byte {
	var data bytes.Buffer
	for _, v := range samples {
		for range channels {
			switch {
			case float:
				binary.Write(&data, binary.LittleEndian, float32(v))
			case bits == 8:
				data.WriteByte(byte(128 + int(v*127)))
			default:
				binary.Write(&data, binary.LittleEndian, int16(v*32767))
			}
		}
	}
	tag := uint16(1)
	if float {
		tag = 3
	}
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	binary.Write(&b, le, uint32(36+data.Len()))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), tag, uint16(channels), uint32(rate), uint32(rate * channels * bits / 8), uint16(channels * bits / 8), uint16(bits)} {
		binary.Write(&b, le, v)
	}
	b.WriteString("data")
	binary.Write(&b, le, uint32(data.Len()))
	b.Write(data.Bytes())
	return b.Bytes()
}
