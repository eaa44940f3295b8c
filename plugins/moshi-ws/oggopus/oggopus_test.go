package oggopus

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hraban/opus"

	"github.com/duplexmpe/duplexmpe/core/audio"
)

// chirp is a 1.5 s sweep with an amplitude envelope: a signal Opus keeps recognisable.
func chirp(rate int) []float32 {
	x := make([]float32, rate*3/2)
	for i := range x {
		t := float64(i) / float64(rate)
		x[i] = float32(0.4 * math.Sin(2*math.Pi*(200*t+300*t*t)) * (0.6 + 0.4*math.Sin(2*math.Pi*3*t)))
	}
	return x
}

// correlation is the normalised correlation of a and b[lag:], best over lags in [0, maxLag].
func correlation(a, b []float32, maxLag int) (best float64, at int) {
	for lag := 0; lag <= maxLag; lag++ {
		var ab, aa, bb float64
		for i := 0; i < len(a) && i+lag < len(b); i++ {
			x, y := float64(a[i]), float64(b[i+lag])
			ab, aa, bb = ab+x*y, aa+x*x, bb+y*y
		}
		if c := ab / math.Sqrt(aa*bb+1e-12); c > best {
			best, at = c, lag
		}
	}
	return best, at
}

func encode(t *testing.T, x []float32, chunk int) []byte {
	t.Helper()
	e, err := NewEncoder(24000, 42)
	if err != nil {
		t.Fatal(err)
	}
	var stream []byte
	for i := 0; i < len(x); i += chunk {
		b, err := e.Encode(x[i:min(i+chunk, len(x))])
		if err != nil {
			t.Fatal(err)
		}
		stream = append(stream, b...)
	}
	return stream
}

// The stream the Encoder writes is valid Ogg Opus for libopusfile (an independent
// reader: it checks the pages, checksums and headers), and both libopusfile and our
// Decoder, fed in odd-sized fragments, give back the signal.
func TestEncoderOutputDecodes(t *testing.T) {
	x := chirp(24000)
	stream := encode(t, x, 1920)

	s, err := opus.NewStream(bytes.NewReader(stream))
	if err != nil {
		t.Fatalf("libopusfile refuses the stream: %v", err)
	}
	var at48 []float32
	buf := make([]float32, 5760)
	for {
		n, err := s.ReadFloat32(buf)
		if err == io.EOF || (err == nil && n == 0) {
			break
		}
		if err != nil {
			t.Fatalf("libopusfile: %v", err)
		}
		at48 = append(at48, buf[:n]...)
	}
	s.Close()
	ref := audio.Resample(audio.PCM{Samples: at48, Rate: 48000}, 24000).Samples
	if c, lag := correlation(x, ref, 200); c < 0.9 || lag > 20 {
		t.Errorf("libopusfile decode: correlation %.3f at lag %d, want >= 0.9 near 0", c, lag)
	}
	// 1.5 s is 75 packets of 20 ms; opusfile drops the pre-skip.
	if d := len(at48) - 2*len(x); d > 0 || d < -PreSkip {
		t.Errorf("libopusfile gives %d samples at 48 kHz for %d at 24 kHz", len(at48), len(x))
	}

	d, err := NewDecoder(24000)
	if err != nil {
		t.Fatal(err)
	}
	var got []float32
	for i := 0; i < len(stream); i += 333 {
		y, err := d.Decode(stream[i:min(i+333, len(stream))])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, y...)
	}
	if len(got) != len(x)-PreSkip/2 {
		t.Errorf("decoded %d samples, want %d (input less pre-skip)", len(got), len(x)-PreSkip/2)
	}
	if c, lag := correlation(x, got, 200); c < 0.9 || lag > 20 {
		t.Errorf("our decode: correlation %.3f at lag %d, want >= 0.9 near 0", c, lag)
	}
}

// Our Decoder reads a stream written by another encoder (libopus's test file, from
// opus-tools) the same way libopusfile does.
func TestDecoderReadsForeignStream(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/hraban/opus").Output()
	if err != nil {
		t.Skipf("cannot locate the hraban/opus module: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "testdata", "speech_8.opus"))
	if err != nil {
		t.Skipf("no foreign test stream: %v", err)
	}
	d, err := NewDecoder(48000)
	if err != nil {
		t.Fatal(err)
	}
	var got []float32
	for i := 0; i < len(data); i += 100 {
		y, err := d.Decode(data[i:min(i+100, len(data))])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, y...)
	}
	s, err := opus.NewStream(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ref []float32
	buf := make([]float32, 5760*2)
	for {
		n, err := s.ReadFloat32(buf)
		if n == 0 || err != nil {
			break
		}
		ref = append(ref, buf[:n]...)
	}
	if len(ref) < 48000 || len(got) < len(ref) {
		t.Fatalf("decoded %d samples, libopusfile %d", len(got), len(ref))
	}
	if c, lag := correlation(ref[:48000], got, 10); c < 0.999 || lag != 0 {
		t.Errorf("our decode differs from libopusfile: correlation %.4f at lag %d", c, lag)
	}
}

func TestDecoderRejectsNonOpus(t *testing.T) {
	stream := encode(t, chirp(24000), 1920)
	// Replace the OpusHead magic, keeping the Ogg page valid.
	bad := bytes.Clone(stream)
	i := bytes.Index(bad, []byte("OpusHead"))
	copy(bad[i:], "OpusHexd")
	clear(bad[22:26])
	var c uint32
	for _, v := range bad[:i+19] {
		c = c<<8 ^ crcTab(byte(c>>24)^v)
	}
	bad[22], bad[23], bad[24], bad[25] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
	d, _ := NewDecoder(24000)
	if _, err := d.Decode(bad); !errors.Is(err, ErrStream) {
		t.Errorf("bad head: err %v, want ErrStream", err)
	}
	d, _ = NewDecoder(24000)
	if _, err := d.Decode([]byte("not an ogg stream at all")); err == nil {
		t.Error("garbage accepted")
	}
}

func crcTab(i byte) uint32 {
	r := uint32(i) << 24
	for range 8 {
		if r&0x80000000 != 0 {
			r = r<<1 ^ 0x04c11db7
		} else {
			r <<= 1
		}
	}
	return r
}

func FuzzDecoder(f *testing.F) {
	f.Add([]byte("OggS"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		d, err := NewDecoder(24000)
		if err != nil {
			t.Fatal(err)
		}
		step := int(chunk) + 1
		for i := 0; i < len(data); i += step {
			if _, err := d.Decode(data[i:min(i+step, len(data))]); err != nil {
				return
			}
		}
	})
}

// One 80 ms Moshi frame through the encoder and back through the decoder: the codec
// work the plugin adds per step (and, for the stream size, kbit/s on the wire).
func BenchmarkFrameRoundTrip(b *testing.B) {
	x := chirp(24000)
	e, _ := NewEncoder(24000, 1)
	d, _ := NewDecoder(24000)
	var bytes int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := (i * 1920) % (len(x) - 1920)
		page, err := e.Encode(x[k : k+1920])
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.Decode(page); err != nil {
			b.Fatal(err)
		}
		bytes += len(page)
	}
	b.ReportMetric(float64(bytes)*8/(float64(b.N)*0.08)/1000, "kbit/s")
}

// A stream that declares more pre-skip than its encoder's delay (what the Moshi servers'
// sphn and kaudio write: 3840 at 48 kHz for libopus's 312) loses its first samples and
// comes out early when the declaration is trusted; dropping the real delay instead gives
// back the signal where it belongs, whatever the stream declares.
func TestDecoderSkippingTheRealDelay(t *testing.T) {
	x := chirp(24000)
	e, err := NewEncoder(24000, 7)
	if err != nil {
		t.Fatal(err)
	}
	e.DeclarePreSkip(3840)
	stream, err := e.Encode(x)
	if err != nil {
		t.Fatal(err)
	}
	decode := func(d *Decoder) []float32 {
		got, err := d.Decode(stream)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	trusting, _ := NewDecoder(24000)
	early := decode(trusting)
	if trusting.Declared() != 3840 || len(early) != len(x)-1920 {
		t.Fatalf("declared %d, decoded %d samples: want 3840 and %d", trusting.Declared(), len(early), len(x)-1920)
	}
	if c, lag := correlation(early, x, 2000); c < 0.9 || lag < 1700 || lag > 1800 {
		t.Errorf("trusting the declaration: correlation %.3f with the input %d samples later, want about 1764", c, lag)
	}
	real, _ := NewDecoderSkipping(24000, PreSkip)
	got := decode(real)
	if real.Declared() != 3840 || real.Decoded() != int64(len(x)) || len(got) != len(x)-PreSkip/2 {
		t.Fatalf("declared %d, decoded %d (%d kept) of %d", real.Declared(), real.Decoded(), len(got), len(x))
	}
	if c, lag := correlation(x, got, 200); c < 0.9 || lag > 20 {
		t.Errorf("dropping the real delay: correlation %.3f at lag %d, want >= 0.9 near 0", c, lag)
	}
}
