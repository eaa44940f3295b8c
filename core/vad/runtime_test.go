package vad

import (
	"os"
	"os/exec"
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

// A library that cannot be loaded fails Open with a message saying what to do. ONNX
// Runtime loads once per process, so this runs in a child test process.
func TestOpenBadLibrary(t *testing.T) {
	if lib := os.Getenv("VAD_TEST_BAD_LIBRARY"); lib != "" {
		_, err := Open(Options{LibraryPath: lib})
		if err == nil {
			t.Fatal("Open succeeded with a library that is not ONNX Runtime")
		}
		t.Log("ERROR: " + err.Error())
		return
	}
	notLib := filepath.Join(t.TempDir(), "libonnxruntime.so")
	os.WriteFile(notLib, []byte("not a shared library"), 0o644)
	for _, c := range []struct{ lib, want string }{
		{notLib, "loading ONNX Runtime from " + notLib},
		{filepath.Join(t.TempDir(), "absent.so"), "absent.so: no such file or directory; run `make deps`"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOpenBadLibrary$", "-test.v")
		cmd.Env = append(os.Environ(), "VAD_TEST_BAD_LIBRARY="+c.lib)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.want) || !strings.Contains(string(out), EnvLibrary) {
			t.Errorf("%s: %v\n%s\nwant an error containing %q and naming %s", c.lib, err, out, c.want, EnvLibrary)
		}
	}
}
