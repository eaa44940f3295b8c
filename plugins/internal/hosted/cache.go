package hosted

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Cache keeps reply bodies on disk, one file per key, written atomically (a temporary
// file renamed into place), so concurrent plugins and a killed process never leave a
// half-written reply.
type Cache struct{ dir string }

// OpenCache uses dir, creating it.
func OpenCache(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("response cache: %v; set cache_dir to a writable directory, or cache = false", err)
	}
	return &Cache{dir: dir}, nil
}

// DefaultCacheDir is <user cache dir>/duplexmpe/hosted.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory (%v); set cache_dir", err)
	}
	return filepath.Join(d, "duplexmpe", "hosted"), nil
}

// CacheKey is the hex SHA-256 of everything that changes a reply: what is called, where,
// which model, the replicate index, and the full request body. Each part is
// length-prefixed, so no two different requests share a key.
func CacheKey(kind, baseURL, model, replicate string, body []byte) string {
	h := sha256.New()
	for _, p := range [][]byte{[]byte(kind), []byte(baseURL), []byte(model), []byte(replicate), body} {
		h.Write([]byte(strconv.Itoa(len(p)) + ":"))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c *Cache) path(key string) string { return filepath.Join(c.dir, key[:2], key) }

// Get returns the body stored under key.
func (c *Cache) Get(key string) ([]byte, bool) {
	b, err := os.ReadFile(c.path(key))
	return b, err == nil
}

// Put stores body under key.
func (c *Cache) Put(key string, body []byte) error {
	p := c.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), key+".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(body)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), p)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}
