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
	"sort"
	"strings"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/plugins/pocketsphinx/sphinx"
	"github.com/duplexmpe/duplexmpe/sdk"
)

const version = "1.0.0"

type asr struct {
	mu       sync.Mutex
	dec      *sphinx.Decoder
	identity map[string]string
}

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
	for key := range config {
		if key != "hmm" && key != "lm" && key != "dict" {
			return fmt.Errorf("pocketsphinx has no setting %q (it has hmm, lm, dict)", key)
		}
	}
	digest, err := hashModel(m)
	if err != nil {
		return err
	}
	dec, err := sphinx.Load(m)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dec != nil {
		a.dec.Close()
	}
	a.dec = dec
	a.identity = map[string]string{
		"library":      "libpocketsphinx " + debianVersion("libpocketsphinx3"),
		"model_sha256": digest,
		"hmm":          m.HMM, "lm": m.LM, "dict": m.Dict,
	}
	return nil
}

// Transcribe resamples the clip to 16 kHz and decodes it as one utterance.
func (a *asr) Transcribe(_ context.Context, clip sdk.Audio, _ string) (string, error) {
	a.mu.Lock()
	dec := a.dec
	a.mu.Unlock()
	if dec == nil {
		return "", fmt.Errorf("pocketsphinx is not configured: the host must call Configure first")
	}
	if clip.Rate <= 0 {
		return "", fmt.Errorf("pocketsphinx: clip has sample rate %d; send mono float32 samples with their rate", clip.Rate)
	}
	pcm := audio.Resample(audio.PCM{Samples: clip.Samples, Rate: clip.Rate}, sphinx.Rate)
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
