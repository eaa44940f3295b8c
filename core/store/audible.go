package store

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"github.com/duplexmpe/duplexmpe/core/audio"
)

// The audible output of an item is kept as 16-bit FLAC: about a tenth of 32-bit float
// for a model that is silent most of the time, a few bytes a second for digital silence
// (docs/scale.md has the figures). The quantisation is the one every 16-bit WAV of the
// harness uses; what it changes and what it does not:
//
//   - episodes.json, the speech episodes that scoring uses, was computed online on the
//     float32 output at play time, and is stored exactly. Only a re-score with other VAD
//     settings runs Silero again, on the 16-bit audio.
//   - the ASR (PocketSphinx) hears 16-bit samples anyway; it now hears the 16-bit
//     quantisation of the model's rate, resampled, then quantised again at 16 kHz.
//   - a model whose samples are already 16-bit values (the cascade, flite at its own
//     rate) is stored exactly, bit for bit.
//
// The FLAC file says which: its Vorbis comments record whether every sample was
// exact, how many were clipped at full scale, and the largest change.
//
// Run directories written before this format hold audible.wav (32-bit float); they are
// still read as they are, and never rewritten (AudibleFLAC, AudibleWAV: layout.go).

// AudibleFile is the path of the audio file in item directory dir, or "" when it has
// none (a conversation that failed before the model said anything).
func AudibleFile(dir string) string {
	for _, name := range []string{AudibleFLAC, AudibleWAV} {
		if p := filepath.Join(dir, name); exists(p) {
			return p
		}
	}
	return ""
}

// writeAudible writes p into item directory dir as audible.flac, atomically and
// durably, with comments saying what the quantisation did.
func writeAudible(dir string, p audio.PCM) error {
	exact, clipped, maxErr := quantisation(p)
	err := audio.WriteFLAC(filepath.Join(dir, AudibleFLAC), p,
		"DUPLEXMPE_SOURCE=float32",
		"DUPLEXMPE_EXACT="+strconv.FormatBool(exact),
		"DUPLEXMPE_CLIPPED="+strconv.Itoa(clipped),
		"DUPLEXMPE_MAX_ERROR="+strconv.FormatFloat(maxErr, 'g', 6, 64))
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// quantisation says whether 16 bits hold p exactly, how many samples are clipped, and
// the largest change of a sample that is not clipped (at most half a step, 1/65536).
func quantisation(p audio.PCM) (exact bool, clipped int, maxErr float64) {
	exact = true
	for _, v := range p.Samples {
		s := float64(v) * 32768
		if s >= 32767.5 || s < -32768.5 {
			clipped++
			exact = false
			continue
		}
		if d := math.Abs(s-math.Round(s)) / 32768; d > 0 {
			exact = false
			maxErr = max(maxErr, d)
		}
	}
	return exact, clipped, maxErr
}

// checkAudible checks, without decoding it, that the audio file at path is complete and
// in the format the store writes there (16-bit mono FLAC; 32-bit float mono WAV in older
// runs) at rate, and returns its length in samples.
func checkAudible(path string, rate int) (int64, error) {
	if filepath.Base(path) == AudibleFLAC {
		fi, err := audio.StatFLAC(path)
		if err != nil {
			return 0, errors.Unwrap(err) // without the path: the caller names the item
		}
		if fi.Bits != 16 || fi.Channels != 1 || fi.Rate != rate {
			return 0, fmt.Errorf("it is %d-bit, %d channels at %d Hz, not 16-bit mono at the model's %d Hz", fi.Bits, fi.Channels, fi.Rate, rate)
		}
		return fi.Samples, nil
	}
	w, err := audio.StatWAV(path)
	if err != nil {
		return 0, err
	}
	if !w.Float || w.Bits != 32 || w.Channels != 1 || w.Rate != rate {
		return 0, fmt.Errorf("it is %s, not 32-bit float mono at the model's %d Hz", w.Describe(), rate)
	}
	return w.Frames, nil
}

// readAudible reads the audio of item directory dir, whichever format it is in; ok is
// false when the item has none.
func readAudible(dir string) (p audio.PCM, ok bool, err error) {
	path := AudibleFile(dir)
	if path == "" {
		return audio.PCM{}, false, nil
	}
	p, err = audio.ReadFile(path)
	return p, err == nil, err
}
