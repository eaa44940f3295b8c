package vad

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolvePaths(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvModel, dir)
	if p, err := resolveModel("silero-v6", ""); err != nil || p != filepath.Join(dir, "silero_vad_v6.onnx") {
		t.Errorf("model folder in the environment: %q, %v", p, err)
	}
	file := filepath.Join(dir, "mine.onnx")
	os.WriteFile(file, nil, 0o644)
	t.Setenv(EnvModel, file)
	if p, _ := resolveModel("silero-v5", ""); p != file {
		t.Errorf("model file in the environment: %q", p)
	}
	if p, _ := resolveModel("silero-v5", "/x/y.onnx"); p != "/x/y.onnx" {
		t.Errorf("explicit model path loses to the environment: %q", p)
	}
	t.Setenv(EnvLibrary, "/opt/ort/libonnxruntime.so")
	if p, _ := resolveLibrary(""); p != "/opt/ort/libonnxruntime.so" {
		t.Errorf("library from the environment: %q", p)
	}
	if p, _ := resolveLibrary("/a.so"); p != "/a.so" {
		t.Errorf("explicit library: %q", p)
	}

	// Without overrides the cache is found from a folder below the repository root.
	t.Setenv(EnvModel, "")
	t.Setenv(EnvLibrary, "")
	t.Chdir("testdata")
	p, err := resolveModel("silero-v5", "")
	if err != nil || !strings.HasSuffix(p, filepath.Join(".cache", "vad", "silero_vad_v5.onnx")) {
		t.Errorf("cache from testdata/: %q, %v", p, err)
	}
	if _, err := resolveLibrary(""); err != nil {
		t.Errorf("library cache from testdata/: %v", err)
	}
	// Nowhere to be found: the error says what to do.
	t.Chdir(dir)
	if _, ok := findInCache("silero_vad_v7.onnx"); ok {
		t.Error("found a file that does not exist")
	}
	if _, err := resolveModel("silero-v7", ""); err == nil || !strings.Contains(err.Error(), "make deps") || !strings.Contains(err.Error(), EnvModel) {
		t.Errorf("missing model: %v", err)
	}
}
