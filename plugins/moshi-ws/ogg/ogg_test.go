package ogg

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// pages writes packets (some longer than 255 bytes, one of exactly 255, one empty)
// into pages of up to three packets each.
func pages(t testing.TB, packets [][]byte) []byte {
	t.Helper()
	w := Writer{Serial: 0x1234}
	var stream []byte
	for i := 0; i < len(packets); i += 3 {
		flags := byte(0)
		if i == 0 {
			flags = First
		}
		p, err := w.Page(packets[i:min(i+3, len(packets))], int64(i), flags)
		if err != nil {
			t.Fatal(err)
		}
		stream = append(stream, p...)
	}
	return stream
}

func testPackets() [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var ps [][]byte
	for _, n := range []int{19, 0, 255, 256, 510, 1, 1275, 60, 300, 255, 7} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.IntN(256))
		}
		ps = append(ps, p)
	}
	return ps
}

func TestRoundTripAnyFragmentation(t *testing.T) {
	want := testPackets()
	stream := pages(t, want)
	for _, chunk := range []int{1, 2, 7, 27, 100, len(stream)} {
		var r Reader
		var got [][]byte
		for i := 0; i < len(stream); i += chunk {
			ps, err := r.Write(stream[i:min(i+chunk, len(stream))])
			if err != nil {
				t.Fatalf("chunk %d: %v", chunk, err)
			}
			got = append(got, ps...)
		}
		if len(got) != len(want) {
			t.Fatalf("chunk %d: %d packets, want %d", chunk, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("chunk %d: packet %d differs", chunk, i)
			}
		}
	}
}

// A packet split over two pages (as other Ogg writers do) comes back whole.
func TestContinuedPacket(t *testing.T) {
	long := bytes.Repeat([]byte{0xab}, 600)
	w := Writer{Serial: 9}
	// Hand-built: page 1 carries the first 510 bytes (two 255 lacing values, no end),
	// page 2 carries the remaining 90 with the continued flag.
	p1, _ := w.Page(nil, 0, First)
	p1 = p1[:headerSize]
	p1 = append(p1, 255, 255)
	p1[26] = 2
	p1 = append(p1, long[:510]...)
	fixCRC(p1)
	p2, _ := w.Page([][]byte{long[510:]}, 1, 0)
	p2[5] |= Continued
	fixCRC(p2)
	var r Reader
	got, err := r.Write(append(p1, p2...))
	if err != nil || len(got) != 1 || !bytes.Equal(got[0], long) {
		t.Fatalf("got %d packets, err %v", len(got), err)
	}
}

func fixCRC(p []byte) {
	clear(p[22:26])
	c := crc(p)
	p[22], p[23], p[24], p[25] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
}

func TestCorruptionIsReported(t *testing.T) {
	stream := pages(t, testPackets())
	for name, mutate := range map[string]func([]byte){
		"capture":  func(b []byte) { b[0] = 'X' },
		"checksum": func(b []byte) { b[len(b)-1] ^= 1 },
		"version":  func(b []byte) { b[4] = 1; fixCRC(b[:pageLen(b)]) },
		"not_bos":  func(b []byte) { b[5] = 0; fixCRC(b[:pageLen(b)]) },
	} {
		b := bytes.Clone(stream)
		mutate(b)
		var r Reader
		_, err := r.Write(b)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", name, err)
		}
		if _, again := r.Write(nil); again == nil {
			t.Errorf("%s: the reader recovered from a corrupt stream", name)
		}
	}
	// A lost page breaks the sequence.
	first := pageLen(stream)
	second := first + pageLen(stream[first:])
	var r Reader
	if _, err := r.Write(append(bytes.Clone(stream[:first]), stream[second:]...)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("lost page: err %v", err)
	}
}

func pageLen(b []byte) int {
	n := headerSize + int(b[26])
	for _, l := range b[headerSize : headerSize+int(b[26])] {
		n += int(l)
	}
	return n
}

func TestPageTooBig(t *testing.T) {
	var w Writer
	if _, err := w.Page([][]byte{make([]byte, 255*255)}, 0, 0); err == nil {
		t.Fatal("a packet needing 256 segments was accepted")
	}
}

// Arbitrary bytes, in arbitrary fragments, never panic the reader, and valid streams
// cut anywhere round-trip.
func FuzzReader(f *testing.F) {
	f.Add(pages(f, testPackets()), uint8(5))
	f.Add([]byte("OggS\x00\x02"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		step := int(chunk) + 1
		var r Reader
		for i := 0; i < len(data); i += step {
			if _, err := r.Write(data[i:min(i+step, len(data))]); err != nil {
				return
			}
		}
	})
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("hello, ogg"), uint16(300), uint8(3))
	f.Fuzz(func(t *testing.T, seed []byte, size uint16, chunk uint8) {
		if len(seed) > 4000 {
			return
		}
		packet := bytes.Repeat(append([]byte{1}, seed...), int(size)/(len(seed)+1)+1)[:int(size)%4000]
		want := [][]byte{packet, seed, packet}
		stream := pages(t, want)
		var r Reader
		var got [][]byte
		step := int(chunk) + 1
		for i := 0; i < len(stream); i += step {
			ps, err := r.Write(stream[i:min(i+step, len(stream))])
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ps...)
		}
		if len(got) != 3 || !bytes.Equal(got[0], packet) || !bytes.Equal(got[1], seed) || !bytes.Equal(got[2], packet) {
			t.Fatalf("round trip lost packets: %d", len(got))
		}
	})
}
