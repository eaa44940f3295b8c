package dataset

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/fault"
)

// MaxClipBytes bounds a clip file: the longest clip (the preamble, MaxPreambleSeconds)
// as 32-bit stereo at 48 kHz is 230 MB. A bigger file is no clip (a 3 GB sparse file
// took `dataset validate` past 2 GB before this bound).
const MaxClipBytes = 256 << 20

// OpenClipFile opens a clip file of the dataset in dir for reading, refusing what is
// not a clip before reading a byte of it (issue 31): a path that leads out of dir
// through a symbolic link (a clip linked to /etc/shadow is not read), anything but a
// regular file (a FIFO would block the reader forever, /dev/zero never end), and a
// file past MaxClipBytes. A link that stays inside dir is followed. The errors are
// deterministic (exit 3): the dataset must change. The caller closes the file.
func OpenClipFile(dir, path string) (*os.File, int64, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, 0, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, 0, err
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, 0, fault.Deterministicf("%s leads out of the dataset folder (to %s): a clip is read only from inside it; replace it with the clip itself (duplexmpe build writes it)", path, real)
	}
	// O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a
	// writer; O_NOFOLLOW: a link put there since EvalSymlinks is not followed.
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, 0, err
	case !st.Mode().IsRegular():
		f.Close()
		return nil, 0, fault.Deterministicf("%s is not a regular file (%s): a clip is a WAV file; replace it (duplexmpe build writes it)", path, fileKind(st.Mode()))
	case st.Size() > MaxClipBytes:
		f.Close()
		return nil, 0, fault.Deterministicf("%s is %d bytes, more than a clip can be (%d MiB): replace it (duplexmpe build writes it)", path, st.Size(), MaxClipBytes>>20)
	}
	return f, st.Size(), nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a folder"
	}
	return m.Type().String()
}

// OpenClip is OpenClipFile for a clip as the dataset records it (relative to d.Dir).
func (d *Dataset) OpenClip(clip string) (*os.File, int64, error) {
	return OpenClipFile(d.Dir, d.ClipPath(clip))
}

// ReadClip decodes a clip of the dataset (audio.DecodeWAV) through OpenClip, after
// checking its header against the file's size (a data chunk the file does not hold is
// refused before any sample is read).
func (d *Dataset) ReadClip(clip string) (audio.PCM, error) {
	f, size, err := d.OpenClip(clip)
	if err != nil {
		return audio.PCM{}, err
	}
	defer f.Close()
	if _, err := audio.ReadWAVHeader(f, size); err != nil {
		return audio.PCM{}, fault.Deterministic(fmt.Errorf("%s: %w", d.ClipPath(clip), err))
	}
	if _, err := f.Seek(0, 0); err != nil {
		return audio.PCM{}, err
	}
	p, err := audio.DecodeWAV(bufio.NewReader(f))
	if err != nil {
		return audio.PCM{}, fault.Deterministic(fmt.Errorf("%s: %w", d.ClipPath(clip), err))
	}
	return p, nil
}
