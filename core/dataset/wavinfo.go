package dataset

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
	Frames   int64
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
	return readWAVHeader(f, fi.Size())
}

func readWAVHeader(r io.ReadSeeker, size int64) (WAVInfo, error) {
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
			if info.Channels < 1 || info.Rate < 1 || blockAlign < 1 {
				return WAVInfo{}, errors.New("WAV fmt chunk has zero channels, rate or block size")
			}
			haveFmt = true
			if _, err := r.Seek(n-16+n%2, io.SeekCurrent); err != nil {
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
