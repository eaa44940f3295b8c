// Command pocketsphinx is the embedded default ASR plugin: CMU PocketSphinx (Debian's
// libpocketsphinx with the pocketsphinx-en-us model) through cgo, the decoder loaded once
// at Configure and kept for every call.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/plugins/pocketsphinx/sphinx"
	"github.com/duplexmpe/duplexmpe/sdk"
)

const version = "1.1.0"

// asr keeps a pool of loaded decoders: a decoder serves one clip at a time, so the pool
// size is how many clips the plugin transcribes at once.
type asr struct {
	mu       sync.Mutex
	pool     chan *sphinx.Decoder
	all      []*sphinx.Decoder
	identity map[string]string
}

// maxDecoders bounds the pool; each decoder holds the model (about 50 MB).
const maxDecoders = 16

// defaultDecoders is one decoder per CPU core (at most maxDecoders): as many clips are
// transcribed at once as the machine can run.
func defaultDecoders() int { return min(runtime.NumCPU(), maxDecoders) }

func (a *asr) Describe(context.Context) (sdk.Info, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := sphinx.DefaultModel()
	return sdk.Info{
		Name:        "pocketsphinx",
		Version:     version,
		Description: "CMU PocketSphinx speech recognition (Debian libpocketsphinx, US English model), offline on the CPU.",
		Config: []sdk.ConfigField{
			{Name: "hmm", Type: sdk.TypeString, Default: m.HMM, Description: "acoustic model directory"},
			{Name: "lm", Type: sdk.TypeString, Default: m.LM, Description: "language model (.lm.bin or ARPA)"},
			{Name: "dict", Type: sdk.TypeString, Default: m.Dict, Description: "pronunciation dictionary"},
			{Name: "fast", Type: sdk.TypeBool, Default: false, Description: "one-pass decoding: about 1.6x less CPU, more misrecognised words"},
			{Name: "decoders", Type: sdk.TypeNumber, Default: 0, Description: "decoders kept loaded: how many clips are transcribed at once (1-16; 0: one per CPU core)", Transport: true},
		},
		Identity: a.identity,
	}, nil
}

func (a *asr) Configure(_ context.Context, config map[string]any) error {
	m := sphinx.DefaultModel()
	for key, dst := range map[string]*string{"hmm": &m.HMM, "lm": &m.LM, "dict": &m.Dict} {
		v, ok := config[key]
		if !ok || v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok || s == "" {
			return fmt.Errorf("pocketsphinx config %q must be a non-empty path, got %v", key, v)
		}
		*dst = s
	}
	if v, ok := config["fast"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("pocketsphinx config \"fast\" must be true or false, got %v", v)
		}
		m.Fast = b
	}
	n := defaultDecoders()
	if v, ok := config["decoders"]; ok && v != nil {
		f, ok := v.(float64)
		if !ok || f != float64(int(f)) || f < 0 || f > maxDecoders {
			return fmt.Errorf("pocketsphinx config \"decoders\" must be a whole number from 1 to %d (0: one per CPU core), got %v", maxDecoders, v)
		}
		if f > 0 {
			n = int(f)
		}
	}
	for key := range config {
		switch key {
		case "hmm", "lm", "dict", "fast", "decoders":
		default:
			return fmt.Errorf("pocketsphinx has no setting %q (it has hmm, lm, dict, fast, decoders)", key)
		}
	}
	digest, err := hashModel(m)
	if err != nil {
		return err
	}
	decs := make([]*sphinx.Decoder, 0, n)
	for range n {
		dec, err := sphinx.Load(m)
		if err != nil {
			for _, d := range decs {
				d.Close()
			}
			return err
		}
		decs = append(decs, dec)
	}
	pool := make(chan *sphinx.Decoder, n)
	for _, d := range decs {
		pool <- d
	}
	search := "two-pass"
	if m.Fast {
		search = "fast"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, d := range a.all {
		d.Close()
	}
	a.pool, a.all = pool, decs
	// The pool size changes throughput only (every clip is decoded as by a fresh decoder,
	// whichever decoder of the pool takes it), so it is not part of the identity.
	a.identity = map[string]string{
		"library":      "libpocketsphinx " + debianVersion("libpocketsphinx3"),
		"model_sha256": digest,
		"hmm":          m.HMM, "lm": m.LM, "dict": m.Dict,
		"search": search,
	}
	return nil
}

// Transcribe resamples the clip to 16 kHz and decodes it as one utterance.
func (a *asr) Transcribe(ctx context.Context, clip sdk.Audio, _ string) (string, error) {
	a.mu.Lock()
	pool := a.pool
	a.mu.Unlock()
	if pool == nil {
		return "", fmt.Errorf("pocketsphinx is not configured: the host must call Configure first")
	}
	if clip.Rate <= 0 {
		return "", fmt.Errorf("pocketsphinx: clip has sample rate %d; send mono float32 samples with their rate", clip.Rate)
	}
	pcm := audio.Resample(audio.PCM{Samples: clip.Samples, Rate: clip.Rate}, sphinx.Rate)
	var dec *sphinx.Decoder
	select {
	case dec = <-pool:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { pool <- dec }()
	return dec.Transcribe(pcm.Samples)
}

// hashModel is a sha256 over every model file (name and content), so a run records
// exactly which model transcribed it.
func hashModel(m sphinx.Model) (string, error) {
	var files []string
	err := filepath.WalkDir(m.HMM, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("pocketsphinx hmm %q: %w", m.HMM, err)
	}
	sort.Strings(files)
	files = append(files, m.LM, m.Dict)
	h := sha256.New()
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return "", fmt.Errorf("pocketsphinx model file: %w", err)
		}
		fmt.Fprintf(h, "%s\x00", filepath.Base(p))
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("pocketsphinx model file %s: %w", p, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func debianVersion(pkg string) string {
	out, err := exec.Command("dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil || len(out) == 0 {
		return "(version unknown)"
	}
	return strings.TrimSpace(string(out))
}

func main() { sdk.Serve(&asr{}) }
