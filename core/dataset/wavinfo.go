package dataset

import (
	"bytes"
	"crypto/sha256"
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

// WAVInfo is what a clip's header says (audio.WAVInfo).
type WAVInfo = audio.WAVInfo

// StatWAV reads a clip's header and checks that its data chunk is complete, without
// decoding the samples (the validator checks thousands of clips).
func StatWAV(path string) (WAVInfo, error) { return audio.StatWAV(path) }

func readWAVHeader(r io.ReadSeeker, size int64) (WAVInfo, error) { return audio.ReadWAVHeader(r, size) }

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
// The file is opened with OpenClipFile (dir is the dataset's folder): a link out of it,
// a FIFO, a device or a file past MaxClipBytes is refused unread, and so is a header
// whose data chunk the file does not hold.
func CheckClip(dir, path string, rate int, wantSum string) (ClipCheck, error) {
	f, size, err := OpenClipFile(dir, path)
	if err != nil {
		return ClipCheck{}, err
	}
	defer f.Close()
	if _, err := readWAVHeader(f, size); err != nil {
		return ClipCheck{}, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ClipCheck{}, err
	}
	raw, err := io.ReadAll(io.LimitReader(f, size+1))
	if err != nil {
		return ClipCheck{}, err
	}
	if int64(len(raw)) != size {
		return ClipCheck{}, fmt.Errorf("changed while being read (%d bytes, then %d)", size, len(raw))
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
