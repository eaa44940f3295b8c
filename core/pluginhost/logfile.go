package pluginhost

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
)

// minLogLimit keeps room for the rotation note in the smallest log.
const minLogLimit = 4 << 10

// logWriter appends a plugin's output to its log file and keeps the file under a limit:
// a plugin printing a megabyte per frame must not fill the disk. When the file would grow
// past the limit it is renamed to <file>.1 (dropping the previous <file>.1) and a new
// file begins with a note saying where the earlier part is and what was dropped. Writes
// never fail towards the plugin: a write the disk refuses is counted as dropped.
type logWriter struct {
	mu      sync.Mutex
	path    string
	limit   int64
	f       *os.File
	size    int64
	dropped int64 // bytes dropped by this writer (rotated away or refused by the disk)
}

func openLog(path string, limit int64) (*logWriter, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := atomicfile.OpenAppend(path, false)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &logWriter{path: path, limit: max(limit, minLogLimit), f: f, size: st.Size()}, nil
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		if w.f == nil {
			w.dropped += int64(len(p)) // closed, or the rotation failed
			break
		}
		if w.size >= w.limit {
			w.rotate()
			continue
		}
		chunk := p[:min(int64(len(p)), w.limit-w.size)]
		m, err := w.f.Write(chunk)
		w.size += int64(m)
		if err != nil {
			w.dropped += int64(len(p) - m)
			break
		}
		p = p[m:]
	}
	return n, nil
}

func (w *logWriter) rotate() {
	old := w.path + ".1"
	var lost int64
	if st, err := os.Stat(old); err == nil {
		lost = st.Size()
	}
	w.f.Close()
	w.f = nil
	if err := os.Rename(w.path, old); err != nil {
		return
	}
	f, err := atomicfile.OpenAppend(w.path, true)
	if err != nil {
		return
	}
	w.f, w.size = f, 0
	w.dropped += lost
	note := fmt.Sprintf("duplexmpe: this log reached its limit of %d bytes (the plugin block's log_limit); the part before this line is in %s",
		w.limit, filepath.Base(old))
	if lost > 0 {
		note += fmt.Sprintf(", and the %d bytes before that were dropped", lost)
	}
	note += fmt.Sprintf(" (%d bytes of this plugin's output dropped since it started)\n", w.dropped)
	m, _ := f.WriteString(note)
	w.size += int64(m)
}

// Close closes the file; later writes are counted as dropped.
func (w *logWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
