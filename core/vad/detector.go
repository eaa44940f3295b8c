// Package vad finds speech in audio with the Silero VAD model (v5 or v6) run through ONNX
// Runtime, window by window exactly as the reference OnnxWrapper does, and turns the
// probabilities into episodes by protocol section 4: offline (Segment, Episodes) for
// scoring and online (Online) for the scheduler, with the same result on the same audio.
package vad

import (
	"fmt"
	"os"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// Silero's framing at 16 kHz: each call sees Context samples of the previous window (zeros
// before the first) followed by Window new samples.
const (
	SampleRate = 16000
	Window     = 512
	Context    = 64
)

// Options choose the model and where the files come from. Empty paths fall back to the
// environment (EnvLibrary, EnvModel), then to the cache that `make deps` fills
// (.cache/vad/ under the repository, found from the working folder or the executable).
type Options struct {
	Model       string // protocol.SileroV5 (default) or protocol.SileroV6
	LibraryPath string // ONNX Runtime shared library, e.g. a GPU build
	ModelPath   string // a silero_vad.onnx file, or a folder with silero_vad_v5/v6.onnx
}

// Detector runs one Silero model. Probabilities, Episodes and NewOnline may be called from
// several goroutines at once: each call uses its own session from a pool.
type Detector struct {
	model     string
	modelPath string
	data      []byte
	eng       *engine // runs every session's windows (runtime.go, batch.go)

	mu     sync.Mutex
	idle   []*session
	closed bool
}

// Open loads ONNX Runtime (once per process) and the model.
func Open(opts Options) (*Detector, error) {
	if opts.Model == "" {
		opts.Model = protocol.SileroV5
	}
	if err := checkModelName(opts.Model); err != nil {
		return nil, err
	}
	lib, err := resolveLibrary(opts.LibraryPath)
	if err != nil {
		return nil, err
	}
	modelPath, err := resolveModel(opts.Model, opts.ModelPath)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(modelPath)
	if err != nil {
		return nil, fmt.Errorf("vad: Silero model: %w; %s, or set %s", err, fetchHint, EnvModel)
	}
	if err := initEnvironment(lib); err != nil {
		return nil, err
	}
	d := &Detector{model: opts.Model, modelPath: modelPath, data: data, eng: newEngine(modelPath, data)}
	// Build one session now so that a model ONNX Runtime cannot run fails here; if it
	// fails, say what is wrong with the file.
	s, err := d.get()
	if err != nil {
		if cerr := checkModel(modelPath, data); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	d.put(s)
	return d, nil
}

// Model is the Silero version this detector runs.
func (d *Detector) Model() string { return d.model }

// ModelPath is the model file in use.
func (d *Detector) ModelPath() string { return d.modelPath }

// Close releases the idle sessions. Calls still running finish and release their own.
func (d *Detector) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	var first error
	for _, s := range d.idle {
		if err := s.destroy(); err != nil && first == nil {
			first = err
		}
	}
	d.idle = nil
	d.eng.close()
	return first
}

// Probabilities returns one speech probability per Window samples of 16 kHz audio; a
// partial last window is zero-padded (as in the reference get_speech_timestamps). The
// recurrent state and the context start from zeros and carry across all windows.
func (d *Detector) Probabilities(pcm16k []float32) ([]float32, error) {
	s, err := d.get()
	if err != nil {
		return nil, err
	}
	defer d.put(s)
	s.reset()
	probs := make([]float32, 0, (len(pcm16k)+Window-1)/Window)
	for off := 0; off < len(pcm16k); off += Window {
		p, err := s.step(pcm16k[off:min(off+Window, len(pcm16k))])
		if err != nil {
			return nil, err
		}
		probs = append(probs, p)
	}
	return probs, nil
}

// Episodes finds the speech episodes of p (any sample rate; resampled to 16 kHz), in
// seconds from the start of p.
func (d *Detector) Episodes(p audio.PCM, s protocol.VAD) ([]timeline.Episode, error) {
	if err := d.checkSettings(s); err != nil {
		return nil, err
	}
	if p.Rate < 1 {
		return nil, fmt.Errorf("vad: audio has sample rate %d", p.Rate)
	}
	p16 := audio.Resample(p, SampleRate)
	probs, err := d.Probabilities(p16.Samples)
	if err != nil {
		return nil, err
	}
	return Segment(probs, len(p16.Samples), s), nil
}

// checkSettings validates s and that it asks for this detector's model (an empty model
// means "whatever the detector runs").
func (d *Detector) checkSettings(s protocol.VAD) error {
	if s.Model == "" {
		s.Model = d.model
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if s.Model != d.model {
		return fmt.Errorf("vad: settings ask for %s but this detector runs %s", s.Model, d.model)
	}
	return nil
}

func (d *Detector) get() (*session, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, errClosed
	}
	if n := len(d.idle); n > 0 {
		s := d.idle[n-1]
		d.idle = d.idle[:n-1]
		d.mu.Unlock()
		return s, nil
	}
	d.mu.Unlock()
	return d.eng.newSession()
}

func (d *Detector) put(s *session) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		s.destroy()
		return
	}
	d.idle = append(d.idle, s)
}
