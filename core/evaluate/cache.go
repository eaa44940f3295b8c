package evaluate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
)

// CallCache keeps the answers of scoring calls (a transcript, a judge's verdict) by a
// key of everything that produced them, across scorings and re-scorings of a run:
// RUN_DIR/cache/transcripts.jsonl is keyed by (ASR identity, audio), judgements.jsonl
// by (judge identity, prompt, query). Only answers are kept; a call that failed is
// never cached, so the next scoring asks again.
//
// The file is one JSON object per line, {"k": key, "v": answer}, appended as answers
// come. A line cut short by a crash is skipped on reading, so at worst the last answer
// is asked again.
type CallCache struct {
	path string
	mu   sync.Mutex
	m    map[string]json.RawMessage
	f    *os.File
}

// OpenCallCache reads the cache file at path (none is an empty cache) and keeps it open
// for appending.
func OpenCallCache(path string) (*CallCache, error) {
	c := &CallCache{path: path, m: map[string]json.RawMessage{}}
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("scoring cache: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			K string          `json:"k"`
			V json.RawMessage `json:"v"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.K != "" && line.V != nil {
			c.m[line.K] = line.V
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("scoring cache: %w", err)
	}
	if c.f, err = atomicfile.OpenAppend(path, false); err != nil {
		return nil, fmt.Errorf("scoring cache: %w", err)
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		// A torn last line: end it, so the next answer starts a line of its own.
		if _, err := io.WriteString(c.f, "\n"); err != nil {
			c.f.Close()
			return nil, fmt.Errorf("scoring cache: %w", err)
		}
	}
	return c, nil
}

// Len is how many answers the cache holds.
func (c *CallCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Get reads the answer under key into v; false when there is none.
func (c *CallCache) Get(key string, v any) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	raw, ok := c.m[key]
	c.mu.Unlock()
	return ok && json.Unmarshal(raw, v) == nil
}

// Put keeps v, the answer under key.
func (c *CallCache) Put(key string, v any) error {
	if c == nil {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("scoring cache: %w", err)
	}
	line, _ := json.Marshal(struct {
		K string          `json:"k"`
		V json.RawMessage `json:"v"`
	}{key, raw})
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; ok {
		return nil
	}
	c.m[key] = raw
	if _, err := c.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("scoring cache %s: %w", c.path, err)
	}
	return nil
}

// Close syncs and closes the file.
func (c *CallCache) Close() error {
	if c == nil || c.f == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.f.Sync()
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	c.f = nil
	return err
}
