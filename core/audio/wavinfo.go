package audio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// WAVInfo is what a clip's header says.
type WAVInfo struct {
	Rate     int
	Channels int
	Bits     int
	Float    bool // IEEE float samples (else integer PCM)
	Frames   int64
}

// Describe says what the header says, as "16-bit PCM mono at 16000 Hz".
func (w WAVInfo) Describe() string {
	kind, ch := "PCM", "mono"
	if w.Float {
		kind = "float"
	}
	if w.Channels != 1 {
		ch = fmt.Sprintf("%d channels", w.Channels)
	}
	return fmt.Sprintf("%d-bit %s %s at %d Hz", w.Bits, kind, ch, w.Rate)
}

// Duration in seconds.
func (w WAVInfo) Duration() float64 {
	if w.Rate == 0 {
		return 0
	}
	return float64(w.Frames) / float64(w.Rate)
}

// StatWAV reads a WAV file's header and checks that its data chunk is complete, without
// decoding the samples (the validator checks thousands of clips).
func StatWAV(path string) (WAVInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return WAVInfo{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return WAVInfo{}, err
	}
	return ReadWAVHeader(f, fi.Size())
}

// ReadWAVHeader reads a WAV header from r (of size bytes) and checks that the data chunk
// is complete, without decoding the samples.
func ReadWAVHeader(r io.ReadSeeker, size int64) (WAVInfo, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return WAVInfo{}, errors.New("not a WAV file: too short")
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return WAVInfo{}, errors.New("not a WAV file: no RIFF/WAVE header")
	}
	var info WAVInfo
	var blockAlign int
	haveFmt := false
	pos := int64(12)
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return WAVInfo{}, errors.New("WAV file has no data chunk")
		}
		pos += 8
		id := string(ch[0:4])
		n := int64(binary.LittleEndian.Uint32(ch[4:8]))
		switch id {
		case "fmt ":
			if n < 16 {
				return WAVInfo{}, errors.New("WAV fmt chunk too short")
			}
			var fm [16]byte
			if _, err := io.ReadFull(r, fm[:]); err != nil {
				return WAVInfo{}, errors.New("WAV fmt chunk truncated")
			}
			format := binary.LittleEndian.Uint16(fm[0:2])
			info.Channels = int(binary.LittleEndian.Uint16(fm[2:4]))
			info.Rate = int(binary.LittleEndian.Uint32(fm[4:8]))
			blockAlign = int(binary.LittleEndian.Uint16(fm[12:14]))
			info.Bits = int(binary.LittleEndian.Uint16(fm[14:16]))
			if format != 1 && format != 3 && format != 0xFFFE {
				return WAVInfo{}, fmt.Errorf("WAV format %d is not PCM or float", format)
			}
			info.Float = format == 3
			read := int64(16)
			if format == 0xFFFE {
				// WAVE_FORMAT_EXTENSIBLE: the sub-format GUID starts with the plain tag.
				var ext [24]byte
				if n < 40 {
					return WAVInfo{}, errors.New("WAVE_FORMAT_EXTENSIBLE fmt chunk too short")
				}
				if _, err := io.ReadFull(r, ext[:]); err != nil {
					return WAVInfo{}, errors.New("WAV fmt chunk truncated")
				}
				info.Float = binary.LittleEndian.Uint16(ext[8:10]) == 3
				read += 24
			}
			if info.Channels < 1 || info.Rate < 1 || blockAlign < 1 {
				return WAVInfo{}, errors.New("WAV fmt chunk has zero channels, rate or block size")
			}
			haveFmt = true
			if _, err := r.Seek(n-read+n%2, io.SeekCurrent); err != nil {
				return WAVInfo{}, err
			}
		case "data":
			if !haveFmt {
				return WAVInfo{}, errors.New("WAV data chunk before fmt chunk")
			}
			if pos+n > size {
				return WAVInfo{}, fmt.Errorf("WAV data chunk truncated: header says %d bytes, file has %d", n, size-pos)
			}
			info.Frames = n / int64(blockAlign)
			return info, nil
		default:
			if _, err := r.Seek(n+n%2, io.SeekCurrent); err != nil {
				return WAVInfo{}, err
			}
		}
		pos += n + n%2
	}
}
