package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustRead(t testing.TB, path string) PCM {
	t.Helper()
	p, err := ReadWAV(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func maxAbsDiff(a, b []float32) float64 {
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

// The sox-made fixtures hold one signal in each accepted encoding; each must decode to
// the float original within its quantisation step.
func TestDecodeWAVEncodings(t *testing.T) {
	ref := mustRead(t, "testdata/wav/f32.wav")
	if ref.Rate != 16000 || len(ref.Samples) != 800 {
		t.Fatalf("f32.wav: %d Hz, %d samples; want 16000 Hz, 800", ref.Rate, len(ref.Samples))
	}
	if got := ref.PeakdBFS(); math.Abs(got-(-6.02)) > 0.05 {
		t.Fatalf("f32.wav peak %.2f dBFS, want -6.02 (amplitude 0.5)", got)
	}
	for _, c := range []struct {
		file string
		tol  float64
	}{
		{"u8.wav", 1.0 / 128},
		{"s16.wav", 1.0 / 32768},
		{"s24.wav", 1.0 / (1 << 23)},
		{"s32.wav", 1e-7},
	} {
		p := mustRead(t, "testdata/wav/"+c.file)
		if p.Rate != 16000 || len(p.Samples) != len(ref.Samples) {
			t.Errorf("%s: %d Hz, %d samples", c.file, p.Rate, len(p.Samples))
			continue
		}
		if d := maxAbsDiff(p.Samples, ref.Samples); d > c.tol {
			t.Errorf("%s: max difference %g from the float original, want <= %g", c.file, d, c.tol)
		}
	}
	st := mustRead(t, "testdata/wav/stereo_s16.wav")
	half := make([]float32, len(ref.Samples))
	for i, v := range ref.Samples {
		half[i] = v / 2
	}
	if d := maxAbsDiff(st.Samples, half); d > 1.0/32768 {
		t.Errorf("stereo: mono average differs from half the left channel by %g", d)
	}
}

func TestDecodeWAVRejects(t *testing.T) {
	for file, want := range map[string]string{
		"f64.wav":   "64-bit float is not supported",
		"a_law.wav": "encoding 0x6 is not supported",
		"adpcm.wav": "encoding 0x11 is not supported",
	} {
		_, err := ReadWAV("testdata/wav/" + file)
		if err == nil || !errors.Is(err, ErrWAV) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), file) {
			t.Errorf("%s: error %v, want ErrWAV naming the file and saying %q", file, err, want)
		}
	}
	good, err := os.ReadFile("testdata/wav/s16.wav")
	if err != nil {
		t.Fatal(err)
	}
	dataAt := bytes.Index(good, []byte("data"))
	badAlign := bytes.Clone(good)
	binary.LittleEndian.PutUint16(badAlign[32:], 3)
	for name, c := range map[string]struct {
		b    []byte
		want string
	}{
		"empty":        {nil, "too short"},
		"not riff":     {[]byte("OggS0000WAVEfmt "), "not a RIFF/WAVE"},
		"no chunks":    {good[:12], "no fmt chunk"},
		"no data":      {good[:dataAt], "no data chunk"},
		"cut in data":  {good[:len(good)-101], "truncated: data chunk declares 1600 bytes, file has 1499"},
		"cut in frame": {append(bytes.Clone(good[:dataAt+4]), append([]byte{3, 0, 0, 0}, 1, 2, 3)...), "not a whole number"},
		"bad align":    {badAlign, "block align 3"},
	} {
		_, err := DecodeWAV(bytes.NewReader(c.b))
		if err == nil || !errors.Is(err, ErrWAV) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, c.want)
		}
	}
}

func TestEncodeWAVRoundTrip(t *testing.T) {
	in := PCM{Rate: 22050, Samples: []float32{0, 0.5, -0.5, 0.25, 1, -1, 1.5, -2, 1e-6}}
	dir := t.TempDir()
	path := filepath.Join(dir, "x.wav")
	for _, enc := range []Encoding{PCM16, Float32} {
		if err := WriteWAVAs(path, in, enc); err != nil {
			t.Fatal(err)
		}
		out := mustRead(t, path)
		if out.Rate != in.Rate || len(out.Samples) != len(in.Samples) {
			t.Fatalf("enc %d: got %d Hz %d samples", enc, out.Rate, len(out.Samples))
		}
		for i, v := range in.Samples {
			want := v
			if enc == PCM16 {
				want = float32(quantize16(v)) / 32768
			}
			if out.Samples[i] != want {
				t.Errorf("enc %d sample %d: got %g, want %g", enc, i, out.Samples[i], want)
			}
		}
	}
	// Clipping happens only in the 16-bit encoding.
	if got := mustRead(t, path).Samples[7]; got != -2 {
		t.Errorf("float WAV clipped -2 to %g", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("atomic write left %d files in the folder, want 1", len(entries))
	}
	if err := WriteWAV(filepath.Join(dir, "missing", "x.wav"), in); err == nil {
		t.Error("writing into a missing folder succeeded")
	}
}

// A streaming header (data size 0xFFFFFFFF) reads to the end of the input.
func TestDecodeWAVStreamingSize(t *testing.T) {
	var buf bytes.Buffer
	if err := EncodeWAV(&buf, PCM{Rate: 8000, Samples: []float32{0.5, -0.5, 0}}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	binary.LittleEndian.PutUint32(b[40:], math.MaxUint32)
	p, err := DecodeWAV(bytes.NewReader(b))
	if err != nil || len(p.Samples) != 3 || p.Samples[0] != 0.5 {
		t.Fatalf("got %v, %v", p, err)
	}
}

func FuzzDecodeWAV(f *testing.F) {
	for _, name := range []string{"s16.wav", "u8.wav", "s24.wav", "f32.wav", "stereo_s16.wav", "adpcm.wav"} {
		b, err := os.ReadFile("testdata/wav/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 300)])
	}
	f.Add([]byte("RIFF\xff\xff\xff\xffWAVEdata\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeWAV(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrWAV) {
				t.Fatalf("error does not wrap ErrWAV: %v", err)
			}
			return
		}
		if p.Rate < 1 || len(p.Samples) > len(b) {
			t.Fatalf("decoded %d samples at %d Hz from %d bytes", len(p.Samples), p.Rate, len(b))
		}
		// What decodes must survive a float round trip unchanged (NaNs aside).
		var buf bytes.Buffer
		if err := EncodeWAVAs(&buf, p, Float32); err != nil {
			t.Fatal(err)
		}
		q, err := DecodeWAV(&buf)
		if err != nil || len(q.Samples) != len(p.Samples) {
			t.Fatalf("round trip: %v, %d vs %d samples", err, len(q.Samples), len(p.Samples))
		}
	})
}

// Before, a float WAV with NaN or infinity decoded silently, and the NaN reached the VAD
// (`duplexmpe vad`) and the session.
func TestNonFiniteFloatSamplesAreRefused(t *testing.T) {
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		var buf bytes.Buffer
		p := PCM{Samples: []float32{0, 0.5, bad, 0}, Rate: 16000}
		if err := EncodeWAVAs(&buf, p, Float32); err != nil {
			t.Fatal(err)
		}
		_, err := DecodeWAV(&buf)
		if !errors.Is(err, ErrWAV) || !strings.Contains(err.Error(), "sample 2") || !strings.Contains(err.Error(), "not a finite number") {
			t.Errorf("%v: err = %v; want the sample named", bad, err)
		}
	}
}
