package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/audio"
)

// speak synthesises text with one flite process (the text goes through a file, so it is
// never parsed as flags) and returns it resampled to rate.
func speak(ctx context.Context, binary, voice, text string, rate int) (audio.PCM, error) {
	dir, err := os.MkdirTemp("", "cascade-flite-")
	if err != nil {
		return audio.PCM{}, err
	}
	defer os.RemoveAll(dir)
	in, out := dir+"/in.txt", dir+"/out.wav"
	if err := os.WriteFile(in, []byte(text), 0o600); err != nil {
		return audio.PCM{}, err
	}
	cmd := exec.CommandContext(ctx, binary, "-voice", voice, "-f", in, "-o", out)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return audio.PCM{}, fmt.Errorf("flite -voice %s: %v: %s", voice, err, strings.TrimSpace(stderr.String()))
	}
	pcm, err := audio.ReadWAV(out)
	if err != nil {
		return audio.PCM{}, fmt.Errorf("flite wrote an unreadable WAV: %w", err)
	}
	if pcm.Rate != rate {
		pcm = audio.Resample(pcm, rate)
	}
	return pcm, nil
}

var fliteVersionRe = regexp.MustCompile(`version:\s*(\S+)`)

// fliteIdentity returns flite's version and the SHA-256 of its binary.
func fliteIdentity(ctx context.Context, binary string) (version, digest string, err error) {
	path, err := exec.LookPath(binary)
	if err != nil {
		return "", "", fmt.Errorf("flite not found (%v): install the Debian package flite (scripts/install-apt.sh) or set binary", err)
	}
	// flite --version prints its version and exits 1; the output decides.
	out, _ := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	m := fliteVersionRe.FindSubmatch(out)
	if m == nil {
		return "", "", fmt.Errorf("%s --version printed no version: %q", path, out)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(raw)
	return string(m[1]), hex.EncodeToString(sum[:]), nil
}
