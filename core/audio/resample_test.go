package audio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var testRates = []int{16000, 22050, 24000, 44100, 48000}

// Every rate pair the harness uses, checked against sox's resampler on a four-tone signal
// (testdata/make-sox-refs.sh). The first and last 10 ms are left out: there the two
// resamplers see different amounts of implied zeros.
func TestResampleMatchesSox(t *testing.T) {
	for _, from := range testRates {
		in := mustRead(t, fmt.Sprintf("testdata/sox/tones_%d.wav", from))
		for _, to := range testRates {
			if from == to {
				continue
			}
			ref := mustRead(t, fmt.Sprintf("testdata/sox/tones_%d_%d.wav", from, to))
			got := Resample(in, to)
			if got.Rate != to || len(got.Samples) != len(ref.Samples) {
				t.Errorf("%d -> %d: %d samples at %d Hz, sox made %d", from, to, len(got.Samples), got.Rate, len(ref.Samples))
				continue
			}
			edge := to / 100
			d := maxAbsDiff(got.Samples[edge:len(got.Samples)-edge], ref.Samples[edge:len(ref.Samples)-edge])
			// The signal peaks near 0.75; measured differences are about 2e-5 (-94 dB).
			if d > 1e-4 {
				t.Errorf("%d -> %d: differs from sox by up to %.2g", from, to, d)
			}
		}
	}
}

// A tone above the target Nyquist frequency must not fold back into the band.
func TestResampleRejectsAliases(t *testing.T) {
	in := mustRead(t, "testdata/sox/alias_48000.wav")
	ref := mustRead(t, "testdata/sox/alias_48000_16000.wav")
	got := Resample(in, 16000)
	mid := func(p PCM) PCM { return PCM{Samples: p.Samples[200 : len(p.Samples)-200], Rate: p.Rate} }
	if in.RMSdBFS() < -10 {
		t.Fatalf("input level %.1f dBFS; the fixture is wrong", in.RMSdBFS())
	}
	if lvl := mid(got).RMSdBFS(); lvl > -70 {
		t.Errorf("11 kHz tone at 48 kHz -> 16 kHz left %.1f dBFS (sox: %.1f); want below -70", lvl, mid(ref).RMSdBFS())
	}
}

// Streaming in uneven chunks gives exactly Resample's output.
func TestResamplerStreamingEqualsWhole(t *testing.T) {
	in := mustRead(t, "testdata/sox/tones_44100.wav")
	chunks := []int{1, 7, 441, 1000, 3, 2048, 0, 5}
	for _, to := range []int{16000, 24000, 48000, 22050} {
		whole := Resample(in, to)
		r := NewResampler(in.Rate, to)
		var got []float32
		rest := in.Samples
		for i := 0; len(rest) > 0; i++ {
			n := min(chunks[i%len(chunks)], len(rest))
			got = append(got, r.Process(rest[:n])...)
			rest = rest[n:]
		}
		got = append(got, r.Flush()...)
		if len(got) != len(whole.Samples) {
			t.Fatalf("-> %d: streaming gave %d samples, whole %d", to, len(got), len(whole.Samples))
		}
		for i := range got {
			if got[i] != whole.Samples[i] {
				t.Fatalf("-> %d: sample %d differs: %g vs %g", to, i, got[i], whole.Samples[i])
			}
		}
	}
}

func TestResampleLengths(t *testing.T) {
	for _, c := range []struct{ n, from, to, want int }{
		{0, 16000, 24000, 0}, {1, 48000, 16000, 1}, {3, 48000, 16000, 1}, {4, 48000, 16000, 2},
		{160, 44100, 16000, 59}, {2, 16000, 44100, 6},
	} {
		got := Resample(PCM{Samples: make([]float32, c.n), Rate: c.from}, c.to)
		if len(got.Samples) != c.want {
			t.Errorf("%d samples %d -> %d: got %d, want %d", c.n, c.from, c.to, len(got.Samples), c.want)
		}
	}
	// A constant signal stays constant away from the edges (unity gain at DC).
	dc := PCM{Samples: make([]float32, 4800), Rate: 48000}
	for i := range dc.Samples {
		dc.Samples[i] = 0.5
	}
	out := Resample(dc, 16000)
	for i := 100; i < len(out.Samples)-100; i++ {
		if math.Abs(float64(out.Samples[i])-0.5) > 1e-4 {
			t.Fatalf("DC 0.5 became %g at %d", out.Samples[i], i)
		}
	}
}

func BenchmarkResample24kTo16k(b *testing.B) {
	in := Silence(24000, 10)
	for i := range in.Samples {
		in.Samples[i] = float32(math.Sin(float64(i) * 0.01))
	}
	b.ResetTimer()
	for b.Loop() {
		Resample(in, 16000)
	}
	b.ReportMetric(10*float64(b.N)/b.Elapsed().Seconds(), "audio-s/s")
}

// Any chunking of any input gives Resample's samples, for every rate pair used.
func FuzzResamplerChunks(f *testing.F) {
	f.Add([]byte{1, 2, 3, 200, 7}, uint8(3), uint8(7))
	f.Fuzz(func(t *testing.T, b []byte, pair, chunk uint8) {
		from, to := testRates[int(pair)%5], testRates[int(pair/5)%5]
		in := PCM{Samples: make([]float32, 0, len(b)*8), Rate: from}
		for _, v := range b {
			for range 8 {
				in.Samples = append(in.Samples, float32(v)/128-1)
			}
		}
		whole := Resample(in, to)
		r := NewResampler(from, to)
		var got []float32
		step := int(chunk) + 1
		for i := 0; i < len(in.Samples); i += step {
			got = append(got, r.Process(in.Samples[i:min(i+step, len(in.Samples))])...)
		}
		got = append(got, r.Flush()...)
		if len(got) != len(whole.Samples) {
			t.Fatalf("%d -> %d in chunks of %d: %d samples, whole %d", from, to, step, len(got), len(whole.Samples))
		}
		for i := range got {
			if got[i] != whole.Samples[i] {
				t.Fatalf("%d -> %d in chunks of %d: sample %d differs", from, to, step, i)
			}
		}
	})
}

// plainResample is the resampler's arithmetic written out plainly, one output at a time:
// out[n] = 0 + h[0]*x[0] + h[1]*x[1] + ... over the taps that meet the input.
func plainResample(in []float32, from, to int) []float32 {
	b := bankFor(from, to)
	k := int64(len(b.taps) / int(b.up))
	n := (int64(len(in))*b.up + b.down - 1) / b.down
	out := make([]float32, n)
	for i := range n {
		pos := i * b.down
		h := b.taps[(pos%b.up)*k : (pos%b.up+1)*k]
		lo := pos/b.up - int64(b.left)
		var acc float32
		for j := range k {
			if x := lo + j; x >= 0 && x < int64(len(in)) {
				acc += h[j] * in[x]
			}
		}
		out[i] = acc
	}
	return out
}

// The fast paths (spans of digital silence, four outputs summed side by side) give the
// plain loop's samples bit for bit, streamed in uneven chunks or whole, on signals with
// runs of +0 and -0 between sound.
func TestResamplerExact(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	sig := make([]float32, 30000)
	for i := range sig {
		switch (i / 1500) % 4 {
		case 0:
			sig[i] = float32(r.NormFloat64() * 0.3)
		case 1: // digital silence
		case 2:
			sig[i] = float32(math.Copysign(0, -1))
		case 3:
			sig[i] = float32(math.Sin(float64(i) * 0.05))
		}
	}
	sig[9001] = 0.5 // a click inside the silence
	for _, from := range testRates {
		for _, to := range testRates {
			if from == to {
				continue
			}
			want := plainResample(sig, from, to)
			whole := Resample(PCM{Samples: sig, Rate: from}, to).Samples
			rs := NewResampler(from, to)
			var chunked []float32
			for off := 0; off < len(sig); {
				n := min(1+r.IntN(3000), len(sig)-off)
				chunked = append(chunked, rs.Process(sig[off:off+n])...)
				off += n
			}
			chunked = append(chunked, rs.Flush()...)
			for name, got := range map[string][]float32{"whole": whole, "chunked": chunked} {
				if len(got) != len(want) {
					t.Fatalf("%d -> %d %s: %d samples, want %d", from, to, name, len(got), len(want))
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%d -> %d %s: sample %d is %g (%#x), the plain loop gives %g (%#x)", from, to, name, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
			}
		}
	}
}
