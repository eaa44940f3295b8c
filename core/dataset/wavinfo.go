package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/audio"
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

// ClipSums reads dir/clips.sha256: the SHA-256 (hex) of each clip, by its path relative
// to dir. A missing file gives an empty map: a dataset built before sums were recorded.
func ClipSums(dir string) (map[string]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ClipSumsFile))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	sums := map[string]string{}
	for i, line := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		sum, rel, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" || CheckClipPath(rel) != nil {
			return nil, fmt.Errorf("%s line %d: not \"<sha256 hex>  <clip path>\"; rebuild the dataset with 'duplexmpe build'",
				filepath.Join(dir, ClipSumsFile), i+1)
		}
		sums[rel] = sum
	}
	return sums, nil
}

// WriteClipSums writes dir/clips.sha256 atomically, one "<hex>  <path>" line per clip in
// path order.
func WriteClipSums(dir string, sums map[string]string) error {
	var b strings.Builder
	for _, rel := range SortedKeys(sums) {
		fmt.Fprintf(&b, "%s  %s\n", sums[rel], rel)
	}
	return atomicfile.WriteFile(filepath.Join(dir, ClipSumsFile), []byte(b.String()))
}

// ClipCheck is what CheckClip found.
type ClipCheck struct {
	Info WAVInfo
	Sum  string // SHA-256 of the file, hex
}

// CheckClip reads a clip a build wrote and says what is wrong with it, if anything: not
// a complete WAV, content other than the recorded SHA-256 (wantSum, when not empty), or
// not the format a build writes (16-bit PCM, mono, at rate, when rate > 0). A clip of
// other provenance (rate 0) must decode with finite samples.
func CheckClip(path string, rate int, wantSum string) (ClipCheck, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return ClipCheck{}, err
	}
	sum := sha256.Sum256(raw)
	c := ClipCheck{Sum: hex.EncodeToString(sum[:])}
	if c.Info, err = readWAVHeader(bytes.NewReader(raw), int64(len(raw))); err != nil {
		return c, err
	}
	if rate > 0 && (c.Info.Float || c.Info.Bits != 16 || c.Info.Channels != 1 || c.Info.Rate != rate) {
		return c, &ClipError{Rule: RuleClipFormat, Msg: fmt.Sprintf("is %s, not 16-bit PCM mono at %d Hz as the build writes it", c.Info.Describe(), rate)}
	}
	if wantSum != "" && c.Sum != wantSum {
		return c, &ClipError{Rule: RuleClipHash, Msg: fmt.Sprintf("content (sha256 %s) is not what the build wrote (%s in %s)", c.Sum[:12], wantSum[:12], ClipSumsFile)}
	}
	if rate == 0 {
		if _, err := audio.DecodeWAV(bytes.NewReader(raw)); err != nil {
			return c, err
		}
	}
	return c, nil
}

// ClipError is a clip that reads as a WAV but is not what the dataset recorded.
type ClipError struct {
	Rule Rule
	Msg  string
}

func (e *ClipError) Error() string { return e.Msg }
