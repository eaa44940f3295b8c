package vad

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// Environment variables that override where the ONNX Runtime library and the Silero
// model come from. DUPLEXMPE_VAD_MODEL may name a model file or a folder holding
// silero_vad_v5.onnx / silero_vad_v6.onnx.
const (
	EnvLibrary = "DUPLEXMPE_ORT_LIB"
	EnvModel   = "DUPLEXMPE_VAD_MODEL"
)

// cacheDir is where scripts/fetch-vad.sh (make deps) puts the pinned files, relative to
// the repository root.
var cacheDir = filepath.Join(".cache", "vad")

const (
	libraryFile = "libonnxruntime.so.1"
	fetchHint   = "run `make deps` (or scripts/fetch-vad.sh) in the duplexmpe repository"
)

func modelFile(model string) string {
	return "silero_vad_" + strings.TrimPrefix(model, "silero-") + ".onnx"
}

// resolveLibrary picks the ONNX Runtime shared library: the explicit path, the
// environment, or the fetched cache.
func resolveLibrary(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if env := os.Getenv(EnvLibrary); env != "" {
		return env, nil
	}
	if p, ok := findInCache(libraryFile); ok {
		return p, nil
	}
	return "", fmt.Errorf("vad: ONNX Runtime library %s not found in %s (searched from the working folder and the executable upward): %s, or set %s to an ONNX Runtime >= 1.24 shared library",
		libraryFile, cacheDir, fetchHint, EnvLibrary)
}

// resolveModel picks the model file for a Silero version: the explicit path, the
// environment, or the fetched cache. An explicit or environment path may be a folder
// holding silero_vad_v5.onnx / silero_vad_v6.onnx.
func resolveModel(model, explicit string) (string, error) {
	for _, p := range []string{explicit, os.Getenv(EnvModel)} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return filepath.Join(p, modelFile(model)), nil
		}
		return p, nil
	}
	if p, ok := findInCache(modelFile(model)); ok {
		return p, nil
	}
	return "", fmt.Errorf("vad: Silero model %s (%s) not found in %s: %s, or set %s to a silero_vad.onnx file",
		model, modelFile(model), cacheDir, fetchHint, EnvModel)
}

// findInCache looks for .cache/vad/name in the working folder, the executable's folder,
// and their parents (bin/duplexmpe and bin/plugins/x live under the repository root).
func findInCache(name string) (string, bool) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for {
			p := filepath.Join(dir, cacheDir, name)
			if _, err := os.Stat(p); err == nil {
				return p, true
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", false
}

// The ONNX Runtime environment is process-wide: it is created once, from one library, and
// never destroyed (sessions of any number of Detectors share it).
var (
	envMu  sync.Mutex
	envLib string
)

func initEnvironment(lib string) error {
	envMu.Lock()
	defer envMu.Unlock()
	if envLib != "" {
		if envLib != lib {
			return fmt.Errorf("vad: ONNX Runtime is already loaded from %s in this process; cannot also load %s (use one library per process)", envLib, lib)
		}
		return nil
	}
	if ort.IsInitialized() { // initialised by other code in this process: share it
		envLib = lib
		return nil
	}
	if _, err := os.Stat(lib); err != nil {
		return fmt.Errorf("vad: ONNX Runtime library: %w; %s, or set %s", err, fetchHint, EnvLibrary)
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("vad: loading ONNX Runtime from %s: %w (it must be ONNX Runtime >= 1.24 for this CPU; %s, or set %s)", lib, err, fetchHint, EnvLibrary)
	}
	envLib = lib
	return nil
}

// checkModel verifies that the file is a Silero v5/v6 graph with the inputs and outputs
// this package binds, so that a wrong file fails at Open with a clear message.
func checkModel(path string, data []byte) error {
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(data)
	if err != nil {
		return fmt.Errorf("vad: %s is not a loadable ONNX model: %w", path, err)
	}
	has := func(list []ort.InputOutputInfo, names ...string) bool {
		for _, n := range names {
			found := false
			for _, io := range list {
				found = found || io.Name == n
			}
			if !found {
				return false
			}
		}
		return true
	}
	if !has(ins, "input", "state", "sr") || !has(outs, "output", "stateN") {
		var names []string
		for _, io := range append(ins, outs...) {
			names = append(names, io.Name)
		}
		return fmt.Errorf("vad: %s is not a Silero v5/v6 model (inputs input, state, sr; outputs output, stateN); it has %s", path, strings.Join(names, ", "))
	}
	return nil
}

func checkModelName(model string) error {
	if model != protocol.SileroV5 && model != protocol.SileroV6 {
		return fmt.Errorf("vad: model %q: want %q or %q", model, protocol.SileroV5, protocol.SileroV6)
	}
	return nil
}

var errClosed = errors.New("vad: detector is closed")
