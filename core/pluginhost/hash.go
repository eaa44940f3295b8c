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

	"github.com/duplexmpe/duplexmpe/core/store"
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

// harnessFile says whether a file is the harness's, not the plugin's: a run file or a
// lock file (every name ending in .hcl: run.hcl, run.lock.hcl, .duplexmpe.lock.hcl), or
// the lock that marks a folder the harness writes (store.LockFile).
func harnessFile(name string) bool {
	return strings.HasSuffix(name, ".hcl") || name == store.LockFile
}

// harnessFolder says whether dir is a folder the harness wrote: a run directory, a
// `score --out` view, a `report --out` or `merge` directory all hold store.LockFile
// (core/rundir takes it in every one of them and leaves it there).
func harnessFolder(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, store.LockFile))
	return err == nil
}

// HashDir pins a plugin directory (the Python case), with the recipe of Go's dirhash
// Hash1, which Terraform's "h1:" hashes also use:
//
//  1. Walk dir. Skip directories named __pycache__, .venv, .git and .pytest_cache, files
//     whose name ends in .pyc, what the harness writes or reads as a run (run files and
//     lock files, every name ending in .hcl; folders holding store.LockFile, which marks
//     run directories, score views and report folders), the paths in skip (relative to
//     dir, "/"-separated: a file, or a folder and all below it; Spec.HashSkip), and
//     everything that is not a regular file (symlinks, sockets, ...).
//  2. For each file, its path relative to dir with "/" separators; sort these paths
//     bytewise.
//  3. Write one line per file: the lowercase hex SHA-256 of its contents, two spaces, the
//     path, "\n".
//  4. The hash is "h1:" and the standard (padded) base64 of the SHA-256 of those lines.
//
// A path containing a newline is an error, since it would make the lines ambiguous.
func HashDir(dir string, skip ...string) (string, error) {
	h, _, err := HashDirFiles(dir, skip...)
	return h, err
}

// HashDirFiles is HashDir with the files it hashed: path (relative, "/"-separated) to
// the lowercase hex SHA-256 of its contents. A lock file keeps them so that a refusal
// can name the files that changed (DiffFiles).
func HashDirFiles(dir string, skip ...string) (string, map[string]string, error) {
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
			if skippedDirs[d.Name()] || skipped[rel] || harnessFolder(path) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(d.Name(), ".pyc") || harnessFile(d.Name()) || skipped[rel] {
			return nil
		}
		if strings.ContainsRune(rel, '\n') {
			return fmt.Errorf("%q: a file name with a newline cannot be hashed", path)
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	sort.Strings(files)
	summary := sha256.New()
	sums := make(map[string]string, len(files))
	for _, rel := range files {
		sum, err := HashFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return "", nil, err
		}
		sums[rel] = strings.TrimPrefix(sum, "sha256:")
		fmt.Fprintf(summary, "%s  %s\n", sums[rel], rel)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(summary.Sum(nil)), sums, nil
}

// DiffFiles names what differs between two file lists of HashDirFiles, sorted by path:
// "changed P", "added P" (in now only), "removed P" (in pinned only).
func DiffFiles(pinned, now map[string]string) []string {
	var out []string
	for p, sum := range now {
		switch old, ok := pinned[p]; {
		case !ok:
			out = append(out, "added "+p)
		case old != sum:
			out = append(out, "changed "+p)
		}
	}
	for p := range pinned {
		if _, ok := now[p]; !ok {
			out = append(out, "removed "+p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		pi, pj := out[i][strings.IndexByte(out[i], ' ')+1:], out[j][strings.IndexByte(out[j], ' ')+1:]
		return pi < pj
	})
	return out
}
