package audio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
)

// WAV format tags (the wFormatTag of the fmt chunk).
const (
	wavPCM        = 1
	wavFloat      = 3
	wavExtensible = 0xFFFE
)

// ErrWAV marks input that is not a WAV file this package can read; errors.Is works on
// every error DecodeWAV returns for bad input.
var ErrWAV = errors.New("bad WAV")

func wavErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrWAV}, args...)...)
}

// ReadWAV reads a WAV file into mono PCM (see DecodeWAV); errors name the file.
func ReadWAV(path string) (PCM, error) {
	f, err := os.Open(path)
	if err != nil {
		return PCM{}, err
	}
	defer f.Close()
	p, err := DecodeWAV(bufio.NewReader(f))
	if err != nil {
		return PCM{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// DecodeWAV reads RIFF/WAVE audio: integer PCM of 8, 16, 24 or 32 bits, or 32-bit IEEE
// float, plain or WAVE_FORMAT_EXTENSIBLE. Several channels are averaged to mono. A data
// size of 0xFFFFFFFF (written by streaming encoders) means "up to the end of the input".
// Anything else (other encodings, a missing or malformed fmt chunk, a data chunk shorter
// than its header says) is an error wrapping ErrWAV.
func DecodeWAV(r io.Reader) (PCM, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return PCM{}, wavErrorf("file too short for a RIFF header (%v)", err)
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		if string(hdr[0:4]) == "RF64" {
			return PCM{}, wavErrorf("RF64 (WAV over 4 GiB) is not supported")
		}
		return PCM{}, wavErrorf("not a RIFF/WAVE file (starts with %q)", hdr[0:4])
	}
	var (
		fm     wavFormat
		haveFm bool
	)
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			if haveFm {
				return PCM{}, wavErrorf("no data chunk")
			}
			return PCM{}, wavErrorf("no fmt chunk")
		}
		id, size := string(ch[0:4]), binary.LittleEndian.Uint32(ch[4:8])
		switch id {
		case "fmt ":
			if size < 16 || size > 1<<16 {
				return PCM{}, wavErrorf("fmt chunk of %d bytes (want 16 to 65536)", size)
			}
			b := make([]byte, size+size%2)
			if _, err := io.ReadFull(r, b); err != nil {
				return PCM{}, wavErrorf("truncated fmt chunk")
			}
			var err error
			if fm, err = parseFormat(b[:size]); err != nil {
				return PCM{}, err
			}
			haveFm = true
		case "data":
			if !haveFm {
				return PCM{}, wavErrorf("data chunk before the fmt chunk")
			}
			return fm.decode(r, size)
		default:
			if _, err := io.CopyN(io.Discard, r, int64(size)+int64(size%2)); err != nil {
				return PCM{}, wavErrorf("truncated %q chunk", id)
			}
		}
	}
}

type wavFormat struct {
	tag      int // wavPCM or wavFloat after resolving WAVE_FORMAT_EXTENSIBLE
	channels int
	rate     int
	bits     int
	align    int
}

func parseFormat(b []byte) (wavFormat, error) {
	le := binary.LittleEndian
	f := wavFormat{
		tag:      int(le.Uint16(b[0:2])),
		channels: int(le.Uint16(b[2:4])),
		rate:     int(le.Uint32(b[4:8])),
		align:    int(le.Uint16(b[12:14])),
		bits:     int(le.Uint16(b[14:16])),
	}
	if f.tag == wavExtensible {
		if len(b) < 40 {
			return f, wavErrorf("WAVE_FORMAT_EXTENSIBLE fmt chunk of %d bytes (want 40)", len(b))
		}
		// The sub-format GUID starts with the plain format tag.
		f.tag = int(le.Uint16(b[24:26]))
	}
	switch {
	case f.tag != wavPCM && f.tag != wavFloat:
		return f, wavErrorf("encoding %#x is not supported (only integer PCM and 32-bit float); convert with: sox in.wav -e signed -b 16 out.wav", f.tag)
	case f.tag == wavPCM && f.bits != 8 && f.bits != 16 && f.bits != 24 && f.bits != 32:
		return f, wavErrorf("%d-bit integer PCM is not supported (8, 16, 24 or 32)", f.bits)
	case f.tag == wavFloat && f.bits != 32:
		return f, wavErrorf("%d-bit float is not supported (only 32-bit)", f.bits)
	case f.channels < 1:
		return f, wavErrorf("%d channels", f.channels)
	case f.rate < 1 || f.rate > 1_000_000:
		return f, wavErrorf("sample rate %d Hz", f.rate)
	case f.align != f.channels*f.bits/8:
		return f, wavErrorf("block align %d does not match %d channels of %d bits", f.align, f.channels, f.bits)
	}
	return f, nil
}

// decode reads the data chunk. It grows its buffer as bytes arrive instead of trusting the
// declared size, so a lying header cannot make it allocate gigabytes.
func (f wavFormat) decode(r io.Reader, size uint32) (PCM, error) {
	var buf bytes.Buffer
	if size == math.MaxUint32 {
		if _, err := io.Copy(&buf, r); err != nil {
			return PCM{}, wavErrorf("reading data: %v", err)
		}
		size = uint32(buf.Len())
	} else if n, err := io.CopyN(&buf, r, int64(size)); err != nil {
		if err == io.EOF {
			return PCM{}, wavErrorf("truncated: data chunk declares %d bytes, file has %d", size, n)
		}
		return PCM{}, wavErrorf("reading data: %v", err)
	}
	data := buf.Bytes()
	frames := len(data) / f.align
	if len(data)%f.align != 0 {
		return PCM{}, wavErrorf("truncated: data chunk of %d bytes is not a whole number of %d-byte frames", len(data), f.align)
	}
	out := make([]float32, frames)
	bps := f.bits / 8
	scale := 1 / float32(f.channels)
	for i := range frames {
		var sum float32
		for c := range f.channels {
			sum += f.sample(data[(i*f.channels+c)*bps:])
		}
		out[i] = sum * scale
	}
	if f.tag == wavFloat {
		// Integer samples are finite by construction; a float file can hold NaN or
		// infinity, which no stage downstream can use (the VAD, resampling and the
		// statistics would all be poisoned).
		for i, v := range out {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return PCM{}, wavErrorf("sample %d (at %.3f s) is %v, not a finite number: the file is damaged; re-create it", i, float64(i)/float64(f.rate), v)
			}
		}
	}
	return PCM{Samples: out, Rate: f.rate}, nil
}

func (f wavFormat) sample(b []byte) float32 {
	le := binary.LittleEndian
	if f.tag == wavFloat {
		return math.Float32frombits(le.Uint32(b))
	}
	switch f.bits {
	case 8:
		return (float32(b[0]) - 128) / 128
	case 16:
		return float32(int16(le.Uint16(b))) / (1 << 15)
	case 24:
		v := int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24) >> 8
		return float32(v) / (1 << 23)
	default:
		return float32(float64(int32(le.Uint32(b))) / (1 << 31))
	}
}

// Encoding of a written WAV file.
type Encoding int

const (
	PCM16   Encoding = iota // 16-bit signed integer, clipped to full scale
	Float32                 // 32-bit IEEE float, exact
)

// EncodeWAV writes p as a mono 16-bit PCM WAV.
func EncodeWAV(w io.Writer, p PCM) error { return EncodeWAVAs(w, p, PCM16) }

// EncodeWAVAs writes p as a mono WAV with the given encoding.
func EncodeWAVAs(w io.Writer, p PCM, enc Encoding) error {
	if p.Rate < 1 {
		return fmt.Errorf("audio: cannot write a WAV with sample rate %d", p.Rate)
	}
	tag, bits := wavPCM, 16
	if enc == Float32 {
		tag, bits = wavFloat, 32
	}
	dataSize := uint64(len(p.Samples)) * uint64(bits/8)
	if dataSize > math.MaxUint32-44 {
		return fmt.Errorf("audio: %d samples do not fit in a WAV file", len(p.Samples))
	}
	le := binary.LittleEndian
	hdr := make([]byte, 44)
	copy(hdr[0:], "RIFF")
	le.PutUint32(hdr[4:], uint32(36+dataSize))
	copy(hdr[8:], "WAVEfmt ")
	le.PutUint32(hdr[16:], 16)
	le.PutUint16(hdr[20:], uint16(tag))
	le.PutUint16(hdr[22:], 1)
	le.PutUint32(hdr[24:], uint32(p.Rate))
	le.PutUint32(hdr[28:], uint32(p.Rate*bits/8))
	le.PutUint16(hdr[32:], uint16(bits/8))
	le.PutUint16(hdr[34:], uint16(bits))
	copy(hdr[36:], "data")
	le.PutUint32(hdr[40:], uint32(dataSize))
	bw := bufio.NewWriter(w)
	bw.Write(hdr)
	var b [4]byte
	for _, v := range p.Samples {
		if enc == Float32 {
			le.PutUint32(b[:], math.Float32bits(v))
			bw.Write(b[:4])
			continue
		}
		le.PutUint16(b[:], uint16(quantize16(v)))
		bw.Write(b[:2])
	}
	return bw.Flush()
}

func quantize16(v float32) int16 {
	s := math.Round(float64(v) * (1 << 15))
	return int16(max(-32768, min(32767, s)))
}

// WriteWAV writes p to path as 16-bit PCM, atomically and durably (core/atomicfile): a
// reader never sees a half-written file.
func WriteWAV(path string, p PCM) error { return WriteWAVAs(path, p, PCM16) }

// WriteWAVAs is WriteWAV with a chosen encoding.
func WriteWAVAs(path string, p PCM, enc Encoding) error {
	return atomicfile.Write(path, func(w io.Writer) error { return EncodeWAVAs(w, p, enc) })
}
