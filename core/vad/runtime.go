package vad

import (
	"errors"
	"fmt"
	"math"
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
func findInCache(name string) (string, bool) { return findUp(cacheDir, name) }

func findUp(sub, name string) (string, bool) {
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
			p := filepath.Join(dir, sub, name)
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

// The model's recurrent state: [2, batch, 128] floats, 256 per stream.
const (
	stateHalf = 128
	stateLen  = 2 * stateHalf
)

// session is one stream through the model: its recurrent state and its context (the last
// Context samples of the previous window). Every window runs through the detector's
// engine, which batches the windows of the streams that step at the same time (batch.go);
// a stream that has heard nothing but digital silence since reset takes its
// probabilities from the engine's silent-prefix table instead (silence.go). Both give
// bit for bit what running the stream alone at batch 1 gives (batch_test.go).
type session struct {
	eng *engine
	st  [stateLen]float32
	ctx [Context]float32
	// zeros >= 0: every sample since reset was +0, over zeros whole windows, so the state
	// is the silent prefix's S_zeros and st is not kept up to date; -1: st and ctx are.
	zeros int
	win   [Window]float32 // the current window, zero-padded
}

// reset starts a new stream: zero state, zero context.
func (s *session) reset() {
	clear(s.st[:])
	clear(s.ctx[:])
	s.zeros = 0
}

// step runs one window (zero-padded if shorter than Window) and returns its probability.
func (s *session) step(w []float32) (float32, error) {
	p, silent, err := s.prepare(w)
	if err != nil || silent {
		return p, err
	}
	var out [1]float32
	if err := s.eng.run([]*session{s}, out[:]); err != nil {
		return 0, err
	}
	return out[0], nil
}

// prepare answers w from the silent prefix when it can (silent is true, p its
// probability); otherwise it readies the stream for a model call on w: the state of the
// silent prefix so far made explicit, and w, zero-padded, as the window.
func (s *session) prepare(w []float32) (p float32, silent bool, err error) {
	if s.zeros >= 0 {
		if digitalSilence(w) {
			p, ok, err := s.eng.silence.prob(s.zeros)
			if err != nil {
				return 0, false, err
			}
			if ok {
				s.zeros++
				return p, true, nil
			}
		}
		if err := s.eng.silence.state(s.zeros, &s.st); err != nil {
			return 0, false, err
		}
		clear(s.ctx[:])
		s.zeros = -1
	}
	copy(s.win[:], w)
	clear(s.win[len(w):])
	return 0, false, nil
}

// digitalSilence reports a window of +0 samples only. -0 is not taken for silence: the
// model is only known to give the silent prefix's values for the exact bits it was fed.
func digitalSilence(w []float32) bool {
	for _, v := range w {
		if math.Float32bits(v) != 0 {
			return false
		}
	}
	return true
}

func (s *session) destroy() error {
	s.eng.release()
	return nil
}

// runner is one ONNX Runtime session that runs up to rows streams' windows per call. Its
// tensors for each batch size are views of the same buffers, created when first used.
type runner struct {
	sess  *ort.DynamicAdvancedSession
	sr    *ort.Scalar[int64]
	rows  int
	in    []float32 // [rows, Context+Window]
	st    []float32 // [2, b, 128] for the current batch size b
	out   []float32 // [rows, 1]
	stN   []float32 // [2, b, 128]
	sizes []*batchTensors
}

type batchTensors struct {
	in, st, out, stN *ort.Tensor[float32]
}

func newRunner(path string, data []byte, rows int) (_ *runner, err error) {
	r := &runner{rows: rows, in: make([]float32, rows*(Context+Window)), st: make([]float32, rows*stateLen),
		out: make([]float32, rows), stN: make([]float32, rows*stateLen), sizes: make([]*batchTensors, rows+1)}
	defer func() {
		if err != nil {
			r.destroy()
			err = fmt.Errorf("vad: creating an ONNX Runtime session for %s: %w", path, err)
		}
	}()
	if r.sr, err = ort.NewScalar(int64(SampleRate)); err != nil {
		return nil, err
	}
	// One thread per session, as the reference does: concurrency comes from batching and
	// from running several sessions at once.
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	if err = opts.SetIntraOpNumThreads(1); err != nil {
		return nil, err
	}
	if err = opts.SetInterOpNumThreads(1); err != nil {
		return nil, err
	}
	r.sess, err = ort.NewDynamicAdvancedSessionWithONNXData(data, []string{"input", "state", "sr"}, []string{"output", "stateN"}, opts)
	if err != nil {
		return nil, err
	}
	// Run once, so that a model ONNX Runtime cannot run fails here.
	if _, err = r.tensors(1); err != nil {
		return nil, err
	}
	if err = r.runRows(1); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *runner) tensors(b int) (*batchTensors, error) {
	if t := r.sizes[b]; t != nil {
		return t, nil
	}
	t := &batchTensors{}
	var err error
	n := int64(b)
	if t.in, err = ort.NewTensor(ort.NewShape(n, Context+Window), r.in); err != nil {
		return nil, err
	}
	if t.st, err = ort.NewTensor(ort.NewShape(2, n, stateHalf), r.st); err != nil {
		return nil, err
	}
	if t.out, err = ort.NewTensor(ort.NewShape(n, 1), r.out); err != nil {
		return nil, err
	}
	if t.stN, err = ort.NewTensor(ort.NewShape(2, n, stateHalf), r.stN); err != nil {
		return nil, err
	}
	r.sizes[b] = t
	return t, nil
}

// runRows runs the first b rows of the buffers.
func (r *runner) runRows(b int) error {
	t, err := r.tensors(b)
	if err != nil {
		return err
	}
	if err := r.sess.Run([]ort.Value{t.in, t.st, r.sr}, []ort.Value{t.out, t.stN}); err != nil {
		return fmt.Errorf("vad: ONNX Runtime: %w", err)
	}
	return nil
}

// run steps each stream by its window: [context | window] in, probability, state and
// context out. len(streams) <= r.rows.
func (r *runner) run(streams []*session, probs []float32) error {
	b := len(streams)
	for i, s := range streams {
		row := r.in[i*(Context+Window) : (i+1)*(Context+Window)]
		copy(row, s.ctx[:])
		copy(row[Context:], s.win[:])
		copy(r.st[i*stateHalf:], s.st[:stateHalf])
		copy(r.st[(b+i)*stateHalf:], s.st[stateHalf:])
	}
	if err := r.runRows(b); err != nil {
		return err
	}
	for i, s := range streams {
		probs[i] = r.out[i]
		copy(s.st[:stateHalf], r.stN[i*stateHalf:(i+1)*stateHalf])
		copy(s.st[stateHalf:], r.stN[(b+i)*stateHalf:(b+i+1)*stateHalf])
		copy(s.ctx[:], s.win[Window-Context:])
	}
	return nil
}

func (r *runner) destroy() {
	for _, t := range r.sizes {
		if t == nil {
			continue
		}
		for _, x := range []*ort.Tensor[float32]{t.in, t.st, t.out, t.stN} {
			if x != nil {
				x.Destroy()
			}
		}
	}
	if r.sr != nil {
		r.sr.Destroy()
	}
	if r.sess != nil {
		r.sess.Destroy()
	}
}

// LoadRuntime loads the ONNX Runtime shared library into this process the way the
// detector does (the explicit path, else DUPLEXMPE_ORT_LIB, else .cache/vad found from
// the working folder or the executable upward) and returns the library's path. Other
// ONNX users of the repository (plugins/onnx-tts) call it so that one process never
// loads two runtimes. Calling it again is cheap.
func LoadRuntime(explicit string) (string, error) {
	lib, err := resolveLibrary(explicit)
	if err != nil {
		return "", err
	}
	if err := initEnvironment(lib); err != nil {
		return "", err
	}
	return lib, nil
}

// FindInCache looks for .cache/<dir>/<name> from the working folder and the executable's
// folder upward, as the detector finds its own files; it reports the path and whether
// it exists.
func FindInCache(dir, name string) (string, bool) {
	return findUp(filepath.Join(".cache", dir), name)
}
