// Package clitest holds what the end-to-end tests of the command line share: the first
// shipped scenario pair copied into a test's directory, files written with their
// directories, and a check that output says things in order. It does not import
// core/cli, so that package's own tests can use it; clitest/clirun runs the CLI.
package clitest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Root is the repository's root, found from this file's place in it, so that a test in
// any package reaches the shipped examples without counting "../".
func Root() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("clitest: no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// WriteFirstPair copies the first shipped pair (the explicit and implicit versions of
// examples/scenarios' first scenario, its first two lines) to dir/scenarios/scenarios.jsonl.
func WriteFirstPair(dir string) error {
	raw, err := os.ReadFile(filepath.Join(Root(), "examples", "scenarios", "scenarios.jsonl"))
	if err != nil {
		return err
	}
	lines := strings.SplitN(string(raw), "\n", 3)
	if len(lines) < 3 {
		return fmt.Errorf("examples/scenarios/scenarios.jsonl holds fewer than two lines")
	}
	if err := os.MkdirAll(filepath.Join(dir, "scenarios"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "scenarios", "scenarios.jsonl"), []byte(lines[0]+"\n"+lines[1]+"\n"), 0o644)
}

// FirstPair is WriteFirstPair that fails the test.
func FirstPair(t testing.TB, dir string) {
	t.Helper()
	if err := WriteFirstPair(dir); err != nil {
		t.Fatal(err)
	}
}

// WriteFile writes content to path, making its directories first.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// InOrder checks that text contains each of want, in order; what names the text in the
// failure.
func InOrder(t testing.TB, what, text string, want ...string) {
	t.Helper()
	rest := text
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("%s lacks %q (in order):\n%s", what, w, text)
		}
		rest = rest[i+len(w):]
	}
}

// Sha256File is the file's digest as a run file pins it: "sha256:" and 64 hex digits.
func Sha256File(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
