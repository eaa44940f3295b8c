package pluginhost

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// HashFile pins a binary: "sha256:" and the lowercase hex SHA-256 of the file.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// skippedDirs are never part of a plugin's identity: caches, environments, VCS data.
var skippedDirs = map[string]bool{"__pycache__": true, ".venv": true, ".git": true, ".pytest_cache": true}

// HashDir pins a plugin directory (the Python case), with the recipe of Go's dirhash
// Hash1, which Terraform's "h1:" hashes also use:
//
//  1. Walk dir. Skip directories named __pycache__, .venv, .git and .pytest_cache, files
//     whose name ends in .pyc, the paths in skip (relative to dir, "/"-separated: a
//     file, or a folder and all below it; Spec.HashSkip), and everything that is not a
//     regular file (symlinks, sockets, ...).
//  2. For each file, its path relative to dir with "/" separators; sort these paths
//     bytewise.
//  3. Write one line per file: the lowercase hex SHA-256 of its contents, two spaces, the
//     path, "\n".
//  4. The hash is "h1:" and the standard (padded) base64 of the SHA-256 of those lines.
//
// A path containing a newline is an error, since it would make the lines ambiguous.
func HashDir(dir string, skip ...string) (string, error) {
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == dir && d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skippedDirs[d.Name()] || skipped[rel] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(d.Name(), ".pyc") || skipped[rel] {
			return nil
		}
		if strings.ContainsRune(rel, '\n') {
			return fmt.Errorf("%q: a file name with a newline cannot be hashed", path)
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	summary := sha256.New()
	for _, rel := range files {
		sum, err := HashFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(summary, "%s  %s\n", strings.TrimPrefix(sum, "sha256:"), rel)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(summary.Sum(nil)), nil
}
