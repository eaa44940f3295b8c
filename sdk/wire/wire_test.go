package wire

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// forEachPath runs f with the memory-copy fast path and with the portable loop.
func forEachPath(t *testing.T, f func(t *testing.T)) {
	saved := littleEndian
	defer func() { littleEndian = saved }()
	for _, fast := range []bool{saved, false} {
		littleEndian = fast
		t.Run(map[bool]string{true: "copy", false: "loop"}[fast], f)
	}
}

func TestPCMLayout(t *testing.T) { forEachPath(t, testPCMLayout) }

func testPCMLayout(t *testing.T) {
	// float32 little-endian: 1.0 is 0x3f800000, -0.5 is 0xbf000000.
	got := AppendPCM([]byte{0xaa}, []float32{1, -0.5})
	want := []byte{0xaa, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xbf}
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendPCM = % x; want % x", got, want)
	}
	samples, err := DecodePCM(nil, want[1:])
	if err != nil || len(samples) != 2 || samples[0] != 1 || samples[1] != -0.5 {
		t.Fatalf("DecodePCM = %v, %v", samples, err)
	}
	if _, err := DecodePCM(nil, []byte{1, 2, 3}); err == nil {
		t.Fatal("DecodePCM accepted 3 bytes")
	}
}

func TestPCMReusesBuffers(t *testing.T) { forEachPath(t, testPCMReusesBuffers) }

func testPCMReusesBuffers(t *testing.T) {
	samples := []float32{0.25, math.Float32frombits(0x7fc00001), float32(math.Inf(-1)), -0}
	buf := make([]byte, 0, 64)
	enc := AppendPCM(buf, samples)
	if &enc[0] != &buf[:1][0] {
		t.Error("AppendPCM reallocated although dst had capacity")
	}
	dst := make([]float32, 0, 8)
	dec, _ := DecodePCM(dst, enc)
	if &dec[0] != &dst[:1][0] {
		t.Error("DecodePCM reallocated although dst had capacity")
	}
	for i := range samples {
		if math.Float32bits(dec[i]) != math.Float32bits(samples[i]) {
			t.Errorf("sample %d: %08x -> %08x; want bit-exact", i, math.Float32bits(samples[i]), math.Float32bits(dec[i]))
		}
	}
	if n := testing.AllocsPerRun(100, func() { enc = AppendPCM(enc[:0], samples); dec, _ = DecodePCM(dec, enc) }); n != 0 {
		t.Errorf("%v allocations per encode+decode with reused buffers; want 0", n)
	}
}

func FuzzDecodePCM(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, pcm []byte) {
		samples, err := DecodePCM(nil, pcm)
		if len(pcm)%4 != 0 {
			if err == nil {
				t.Fatalf("%d bytes accepted", len(pcm))
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range samples {
			if math.Float32bits(s) != binary.LittleEndian.Uint32(pcm[4*i:]) {
				t.Fatalf("sample %d differs", i)
			}
		}
		if !bytes.Equal(AppendPCM(nil, samples), pcm) {
			t.Fatal("round trip changed the bytes")
		}
	})
}

func BenchmarkPCMFrame(b *testing.B) {
	samples := make([]float32, 1920)
	for i := range samples {
		samples[i] = float32(math.Sin(float64(i)))
	}
	var buf []byte
	var dec []float32
	b.SetBytes(4 * 1920)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendPCM(buf[:0], samples)
		dec, _ = DecodePCM(dec, buf)
	}
}
