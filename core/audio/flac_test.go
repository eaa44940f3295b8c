package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func needFLAC(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("flac"); err != nil {
		t.Skip("Debian's flac is not installed (scripts/install-apt.sh)")
	}
}

// flacSignals are the kinds of audio the store writes: digital silence, speech-like
// tones under noise, clipping, and block lengths around the 4096-sample block.
func flacSignals() map[string]PCM {
	rng := rand.New(rand.NewPCG(1, 2))
	sig := func(n, rate int, f func(i int) float64) PCM {
		p := PCM{Samples: make([]float32, n), Rate: rate}
		for i := range p.Samples {
			p.Samples[i] = float32(f(i))
		}
		return p
	}
	tone := func(i int) float64 {
		t := float64(i) / 24000
		return 0.3*math.Sin(2*math.Pi*220*t)*math.Sin(2*math.Pi*3*t) + 0.05*math.Sin(2*math.Pi*1800*t)
	}
	return map[string]PCM{
		"silence":         sig(24000*3, 24000, func(int) float64 { return 0 }),
		"tone-noise":      sig(24000*2+123, 24000, func(i int) float64 { return tone(i) + 0.002*rng.NormFloat64() }),
		"white-noise":     sig(9000, 16000, func(int) float64 { return 0.5 * rng.NormFloat64() }),
		"clipped":         sig(5000, 44100, func(i int) float64 { return 3 * math.Sin(float64(i)/7) }),
		"full-scale-edge": sig(4096, 48000, func(i int) float64 { return []float64{-1, 1, 32767.0 / 32768, -32767.0 / 32768}[i%4] }),
		"one-sample":      sig(1, 24000, func(int) float64 { return 0.25 }),
		"ten-samples":     sig(10, 24000, func(i int) float64 { return float64(i) / 20 }),
		"two-blocks":      sig(8192, 24000, tone),
		"block-plus-one":  sig(4097, 11025, tone), // a rate outside the header's table
		"rate-192k":       sig(6000, 192000, tone),
		"rate-8k":         sig(6000, 8000, tone),
		"rate-22050":      sig(6000, 22050, tone),
		"rate-100k":       sig(6000, 100000, tone), // written in tens of Hz
		"rate-96001":      sig(6000, 96001, tone),  // only in STREAMINFO
		"empty":           {Rate: 24000},
	}
}

// quantised is what a 16-bit stream of p holds: the int16 samples, little-endian.
func quantised(p PCM) []byte {
	var b []byte
	for _, v := range p.Samples {
		b = binary.LittleEndian.AppendUint16(b, uint16(quantize16(v)))
	}
	return b
}

// Every stream EncodeFLAC writes passes `flac --test` (frame CRCs and the MD5) and
// decodes with Debian's flac to exactly the 16-bit samples, and our decoder gives the
// same samples back.
func TestEncodeFLACDecodesWithDebianFlac(t *testing.T) {
	needFLAC(t)
	dir := t.TempDir()
	for name, p := range flacSignals() {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".flac")
			if err := WriteFLAC(path, p, "DUPLEXMPE_SOURCE=float32", "TITLE="+name); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("flac", "--test", "--silent", path).CombinedOutput(); err != nil {
				t.Fatalf("flac --test: %v\n%s", err, out)
			}
			raw := filepath.Join(dir, name+".raw")
			cmd := exec.Command("flac", "--decode", "--silent", "--force", "--force-raw-format",
				"--endian=little", "--sign=signed", "-o", raw, path)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("flac --decode: %v\n%s", err, out)
			}
			got, err := os.ReadFile(raw)
			if err != nil {
				t.Fatal(err)
			}
			if want := quantised(p); !bytes.Equal(got, want) {
				t.Fatalf("flac decoded %d bytes that differ from the %d bytes of the 16-bit samples", len(got), len(want))
			}
			mine, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if mine.Rate != p.Rate || !bytes.Equal(quantised(mine), got) {
				t.Fatalf("our decoder: %d Hz, %d samples; want %d Hz and flac's samples", mine.Rate, len(mine.Samples), p.Rate)
			}
			info, err := StatFLAC(path)
			if err != nil || info != (FLACInfo{Rate: p.Rate, Channels: 1, Bits: 16, Samples: int64(len(p.Samples))}) {
				t.Fatalf("StatFLAC = %+v, %v", info, err)
			}
		})
	}
}

// Streams written by Debian's flac, at every compression level (LPC subframes, Rice2,
// partition orders, stereo decorrelation, wasted bits, 24-bit), decode with ours to
// exactly the samples that went in.
func TestDecodeFLACReadsDebianFlac(t *testing.T) {
	needFLAC(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 20000
	type input struct {
		name     string
		channels int
		bits     int
		sample   func(i, ch int) int32
	}
	speechy := func(i, ch int) int32 {
		t := float64(i) / 16000
		v := 9000*math.Sin(2*math.Pi*(180+float64(ch)*3)*t)*math.Sin(2*math.Pi*2*t) + 40*rng.NormFloat64()
		return int32(v)
	}
	inputs := []input{
		{"mono16", 1, 16, speechy},
		{"stereo16", 2, 16, speechy},
		{"mono24", 1, 24, func(i, ch int) int32 { return speechy(i, ch) * 256 }},
		{"wasted-bits", 1, 16, func(i, ch int) int32 { return speechy(i, ch) &^ 7 }},
		{"stereo-identical", 2, 16, func(i, _ int) int32 { return speechy(i, 0) }},
	}
	for _, in := range inputs {
		var raw []byte
		samples := make([][]int32, in.channels)
		for i := range n {
			for ch := range in.channels {
				v := in.sample(i, ch)
				samples[ch] = append(samples[ch], v)
				for k := range in.bits / 8 {
					raw = append(raw, byte(uint32(v)>>(8*k)))
				}
			}
		}
		rawPath := filepath.Join(dir, in.name+".raw")
		if err := os.WriteFile(rawPath, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, level := range []string{"-0", "-5", "-8", "--lax"} {
			args := []string{level, "--silent", "--force", "--force-raw-format", "--endian=little", "--sign=signed",
				fmt.Sprintf("--channels=%d", in.channels), fmt.Sprintf("--bps=%d", in.bits), "--sample-rate=16000"}
			if level == "--lax" {
				args = append(args, "-8", "--blocksize=1152", "-r", "8", "-l", "32")
			}
			out := filepath.Join(dir, in.name+level+".flac")
			args = append(args, "-o", out, rawPath)
			if msg, err := exec.Command("flac", args...).CombinedOutput(); err != nil {
				t.Fatalf("%s %s: flac: %v\n%s", in.name, level, err, msg)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			p, _, err := DecodeFLAC(b)
			if err != nil {
				t.Fatalf("%s %s: %v", in.name, level, err)
			}
			// flac's own streams (seek table, padding, 1152-sample blocks) end where
			// their STREAMINFO says; cut, they do not.
			if info, err := StatFLAC(out); err != nil || info.Samples != n || info.Channels != in.channels || info.Bits != in.bits {
				t.Fatalf("%s %s: StatFLAC = %+v, %v", in.name, level, info, err)
			}
			cut := filepath.Join(dir, "cut.flac")
			if err := os.WriteFile(cut, b[:len(b)-len(b)/5], 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := StatFLAC(cut); !errors.Is(err, ErrFLAC) {
				t.Fatalf("%s %s: StatFLAC of a cut stream: %v, want ErrFLAC", in.name, level, err)
			}
			if p.Rate != 16000 || len(p.Samples) != n {
				t.Fatalf("%s %s: %d Hz, %d samples", in.name, level, p.Rate, len(p.Samples))
			}
			scale := float64(int64(1)<<(in.bits-1)) * float64(in.channels)
			for i, v := range p.Samples {
				var sum int64
				for ch := range in.channels {
					sum += int64(samples[ch][i])
				}
				if want := float32(float64(sum) / scale); v != want {
					t.Fatalf("%s %s: sample %d = %v, want %v", in.name, level, i, v, want)
				}
			}
		}
	}
}

// A sample that is a multiple of 1/32768 in [-1, 1) survives the round trip exactly;
// any other is rounded to the nearest such value and clipped to full scale.
func TestFLACRoundTripQuantisesAsWAV(t *testing.T) {
	p := flacSignals()["tone-noise"]
	var buf bytes.Buffer
	if err := EncodeFLAC(&buf, p); err != nil {
		t.Fatal(err)
	}
	got, _, err := DecodeFLAC(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range p.Samples {
		if d := math.Abs(float64(got.Samples[i]) - float64(v)); d > 0.5/32768+1e-9 {
			t.Fatalf("sample %d moved by %g, more than half a 16-bit step", i, d)
		}
		// Decoding the decoded samples again changes nothing: exact values are exact.
	}
	buf.Reset()
	if err := EncodeFLAC(&buf, got); err != nil {
		t.Fatal(err)
	}
	again, _, err := DecodeFLAC(buf.Bytes())
	if err != nil || !slices.Equal(again.Samples, got.Samples) {
		t.Fatalf("a 16-bit signal did not come back exactly (err %v)", err)
	}
	var wav bytes.Buffer
	if err := EncodeWAV(&wav, p); err != nil {
		t.Fatal(err)
	}
	w, err := DecodeWAV(&wav)
	if err != nil || !slices.Equal(w.Samples, got.Samples) {
		t.Fatalf("FLAC and 16-bit WAV quantise differently (err %v)", err)
	}
}

// Silence costs almost nothing, and other audio no more than 5% above what Debian's flac
// makes of it with the same tools (-2: fixed predictors only, no LPC). Its default level
// (-5, with LPC) is logged for comparison.
func TestFLACIsCompact(t *testing.T) {
	needFLAC(t)
	dir := t.TempDir()
	for _, name := range []string{"silence", "tone-noise", "two-blocks", "white-noise", "clipped"} {
		p := flacSignals()[name]
		var buf bytes.Buffer
		if err := EncodeFLAC(&buf, p); err != nil {
			t.Fatal(err)
		}
		wav, ref := filepath.Join(dir, name+".wav"), filepath.Join(dir, name+".flac")
		if err := WriteWAV(wav, p); err != nil {
			t.Fatal(err)
		}
		size := map[string]int64{}
		for _, level := range []string{"-2", "-5"} {
			if out, err := exec.Command("flac", level, "--silent", "--force", "--no-seektable", "--no-padding", "-o", ref, wav).CombinedOutput(); err != nil {
				t.Fatalf("flac: %v\n%s", err, out)
			}
			fi, err := os.Stat(ref)
			if err != nil {
				t.Fatal(err)
			}
			size[level] = fi.Size()
		}
		pcm := 2 * len(p.Samples)
		t.Logf("%s: %d bytes; flac -2 %d, -5 %d; 16-bit PCM %d", name, buf.Len(), size["-2"], size["-5"], pcm)
		if float64(buf.Len()) > 1.05*float64(size["-2"]) {
			t.Errorf("%s: %d bytes, more than 1.05 times flac -2's %d", name, buf.Len(), size["-2"])
		}
		if name == "silence" && buf.Len() > pcm/100 {
			t.Errorf("silence: %d bytes, over 1%% of 16-bit PCM's %d", buf.Len(), pcm)
		}
	}
}

// A damaged or truncated stream is an error, never a shorter or different clip.
func TestDecodeFLACRefusesDamage(t *testing.T) {
	p := flacSignals()["two-blocks"]
	var buf bytes.Buffer
	if err := EncodeFLAC(&buf, p, "A=b"); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	if _, c, err := DecodeFLAC(good); err != nil || !slices.Equal(c, []string{"A=b"}) {
		t.Fatalf("comments %v, err %v", c, err)
	}
	cases := map[string][]byte{
		"truncated in a frame":  good[:len(good)-100],
		"truncated at a frame":  good[:len(good)/2],
		"no frames":             good[:42],
		"not FLAC":              []byte("RIFF....WAVEfmt                                  "),
		"empty":                 {},
		"flipped sample bit":    flip(good, len(good)-50),
		"flipped header bit":    flip(good, 60),
		"flipped STREAMINFO md": flip(good, 30),
	}
	dir := t.TempDir()
	for name, b := range cases {
		if _, _, err := DecodeFLAC(b); !errors.Is(err, ErrFLAC) {
			t.Errorf("%s: err = %v, want ErrFLAC", name, err)
		}
		// StatFLAC reads only the header and the last frame, so it finds a cut
		// stream (and not a bit flipped inside an earlier frame).
		if strings.HasPrefix(name, "flipped") && name != "flipped sample bit" {
			continue
		}
		path := filepath.Join(dir, "damaged.flac")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := StatFLAC(path); !errors.Is(err, ErrFLAC) {
			t.Errorf("StatFLAC, %s: err = %v, want ErrFLAC", name, err)
		}
	}
	// A cut at every byte of the last frames, and one block's worth short.
	path := filepath.Join(dir, "cut.flac")
	for cut := 1; cut < 600; cut += 7 {
		if err := os.WriteFile(path, good[:len(good)-cut], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := StatFLAC(path); !errors.Is(err, ErrFLAC) {
			t.Fatalf("StatFLAC with %d bytes cut: err = %v, want ErrFLAC", cut, err)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := slices.Clone(b)
	c[i] ^= 0x10
	return c
}

func BenchmarkEncodeFLAC(b *testing.B) {
	p := flacSignals()["tone-noise"]
	b.SetBytes(int64(2 * len(p.Samples)))
	for b.Loop() {
		if err := EncodeFLAC(&bytes.Buffer{}, p); err != nil {
			b.Fatal(err)
		}
	}
}
