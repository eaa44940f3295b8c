// Command flite is the embedded TTS plugin: Debian's flite, offline, on the CPU. One
// process per synthesis; voices are what `flite -lv` lists (limited-domain voices such
// as awb_time are left out). Audio comes back at the voice's native rate (16 kHz for
// kal16, awb, rms, slt; 8 kHz for kal).
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Version is the plugin's version; it changes when the audio for a text can change.
const Version = "0.1.0"

// DefaultVoice is used when a request names no voice.
const DefaultVoice = "kal16"

// limitedDomain voices speak only a fixed vocabulary (awb_time says the time).
var limitedDomain = map[string]bool{"awb_time": true}

type fliteTTS struct {
	mu      sync.Mutex
	binary  string
	voice   string
	stretch float64
	voices  []sdk.Voice // cached after the first probe
	version string
	binHash string
}

func newFlite() *fliteTTS {
	return &fliteTTS{binary: "flite", voice: DefaultVoice, stretch: 1}
}

var configSchema = []sdk.ConfigField{
	{Name: "binary", Type: sdk.TypeString, Default: "flite", Description: "the flite executable (a name on PATH or a path)"},
	{Name: "default_voice", Type: sdk.TypeString, Default: DefaultVoice, Description: "voice for requests that name none"},
	{Name: "duration_stretch", Type: sdk.TypeNumber, Default: 1.0, Description: "speaking rate: >1 slower, <1 faster (flite --setf duration_stretch=)"},
}

func (f *fliteTTS) Describe(ctx context.Context) (sdk.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	info := sdk.Info{
		Name:            "flite",
		Version:         Version,
		Description:     "Text to speech with Debian's flite (CMU Flite 2.2), offline on the CPU",
		ProtocolVersion: sdk.ProtocolVersion,
		Config:          configSchema,
		Identity:        map[string]string{},
	}
	if v, h, err := f.identityLocked(ctx); err == nil {
		info.Identity["flite_version"] = v
		info.Identity["flite_sha256"] = h
	} else {
		info.Identity["flite_error"] = err.Error()
	}
	info.Identity["duration_stretch"] = strconv.FormatFloat(f.stretch, 'g', -1, 64)
	info.Identity["default_voice"] = f.voice
	return info, nil
}

func (f *fliteTTS) Configure(ctx context.Context, cfg map[string]any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v, ok := cfg["binary"].(string); ok && v != "" {
		f.binary = v
	}
	if v, ok := cfg["duration_stretch"].(float64); ok {
		if v <= 0 || v > 10 {
			return fmt.Errorf("duration_stretch = %g must be in (0, 10]", v)
		}
		f.stretch = v
	}
	f.version, f.binHash, f.voices = "", "", nil
	if _, _, err := f.identityLocked(ctx); err != nil {
		return err
	}
	if v, ok := cfg["default_voice"].(string); ok && v != "" {
		f.voice = v
	}
	voices, err := f.voicesLocked(ctx)
	if err != nil {
		return err
	}
	if !hasVoice(voices, f.voice) {
		return fmt.Errorf("default_voice %q is not a flite voice; available: %s", f.voice, voiceIDs(voices))
	}
	return nil
}

var versionRe = regexp.MustCompile(`version:\s*(\S+)`)

func (f *fliteTTS) identityLocked(ctx context.Context) (string, string, error) {
	if f.version != "" {
		return f.version, f.binHash, nil
	}
	path, err := exec.LookPath(f.binary)
	if err != nil {
		return "", "", fmt.Errorf("flite not found (%v): install the Debian package flite (scripts/install-apt.sh)", err)
	}
	// flite --version prints its version and exits 1; the output decides.
	out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	m := versionRe.FindSubmatch(out)
	if m == nil {
		return "", "", fmt.Errorf("%s --version printed no version (%v): %q", path, err, out)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(raw)
	f.version, f.binHash = string(m[1]), hex.EncodeToString(sum[:])
	return f.version, f.binHash, nil
}

func (f *fliteTTS) Voices(ctx context.Context) ([]sdk.Voice, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.voicesLocked(ctx)
}

// voicesLocked lists `flite -lv` and probes each voice's native rate once.
func (f *fliteTTS) voicesLocked(ctx context.Context) ([]sdk.Voice, error) {
	if f.voices != nil {
		return f.voices, nil
	}
	out, err := exec.CommandContext(ctx, f.binary, "-lv").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("flite -lv: %v: %s", err, out)
	}
	_, list, ok := strings.Cut(string(out), ":")
	if !ok {
		return nil, fmt.Errorf("flite -lv printed %q; expected \"Voices available: ...\"", out)
	}
	var voices []sdk.Voice
	for _, id := range strings.Fields(list) {
		if limitedDomain[id] {
			continue
		}
		pcm, err := run(ctx, f.binary, f.stretch, "a", id)
		if err != nil {
			return nil, err
		}
		voices = append(voices, sdk.Voice{ID: id, Description: "flite voice " + id, Rate: pcm.Rate})
	}
	if len(voices) == 0 {
		return nil, fmt.Errorf("flite -lv lists no voices: %q", out)
	}
	f.voices = voices
	return voices, nil
}

func (f *fliteTTS) Synthesize(ctx context.Context, text, voice string) (sdk.Audio, error) {
	f.mu.Lock()
	if voice == "" {
		voice = f.voice
	}
	binary, stretch := f.binary, f.stretch
	voices, err := f.voicesLocked(ctx)
	f.mu.Unlock()
	if err != nil {
		return sdk.Audio{}, err
	}
	if !hasVoice(voices, voice) {
		return sdk.Audio{}, fmt.Errorf("voice %q is not a flite voice; available: %s", voice, voiceIDs(voices))
	}
	if strings.TrimSpace(text) == "" {
		return sdk.Audio{}, errors.New("text is empty: nothing to synthesise")
	}
	pcm, err := run(ctx, binary, stretch, text, voice)
	if err != nil {
		return sdk.Audio{}, err
	}
	return sdk.Audio{Samples: pcm.Samples, Rate: pcm.Rate}, nil
}

// run synthesises text with one flite process. The text goes through a file, never the
// command line, so text starting with "-" or holding quotes is spoken as written.
func run(ctx context.Context, binary string, stretch float64, text, voice string) (audio.PCM, error) {
	dir, err := os.MkdirTemp("", "flite-")
	if err != nil {
		return audio.PCM{}, err
	}
	defer os.RemoveAll(dir)
	in, out := dir+"/in.txt", dir+"/out.wav"
	if err := os.WriteFile(in, []byte(text), 0o600); err != nil {
		return audio.PCM{}, err
	}
	args := []string{"-voice", voice, "-f", in, "-o", out}
	if stretch != 1 {
		args = append(args, "--setf", "duration_stretch="+strconv.FormatFloat(stretch, 'f', -1, 64))
	}
	cmd := exec.CommandContext(ctx, binary, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return audio.PCM{}, fmt.Errorf("flite -voice %s: %v: %s", voice, err, strings.TrimSpace(stderr.String()))
	}
	pcm, err := audio.ReadWAV(out)
	if err != nil {
		return audio.PCM{}, fmt.Errorf("flite wrote an unreadable WAV: %w", err)
	}
	return pcm, nil
}

func hasVoice(vs []sdk.Voice, id string) bool {
	for _, v := range vs {
		if v.ID == id {
			return true
		}
	}
	return false
}

func voiceIDs(vs []sdk.Voice) string {
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.ID
	}
	return strings.Join(ids, ", ")
}
