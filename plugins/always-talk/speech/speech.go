// Package speech holds what the baseline model plugins (silent, always-talk, random-talk)
// share: the recorded voice the talkers play, and the config fields that set the
// format a baseline declares.
//
// voice.wav is flite 2.2 (Debian), voice kal16, 16 kHz, 7.8 s, made with
//
//	flite -voice kal16 -t "Let me tell you about the mountains up north, where the trails
//	  run long and the lakes are cold and clear, and every evening the wind comes down the
//	  valley" -o v.wav
//	sox v.wav voice.wav silence 1 0.02 1% reverse silence 1 0.02 1% reverse
//
// It is committed rather than synthesised at run time so the baselines need no TTS and
// sound the same on every machine. Silero hears it as speech when looped (see the tests).
package speech

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/sdk"
)

//go:embed voice.wav
var voiceWAV []byte

// VoiceDigest is "sha256:<hex>" of the embedded voice.wav: the voice's identity.
func VoiceDigest() string {
	sum := sha256.Sum256(voiceWAV)
	return "sha256:" + hex.EncodeToString(sum[:])
}

var (
	mu     sync.Mutex
	voices = map[int][]float32{}
)

// Voice returns the recorded voice at rate. The slice is shared: do not modify it.
func Voice(rate int) ([]float32, error) {
	mu.Lock()
	defer mu.Unlock()
	if v, ok := voices[rate]; ok {
		return v, nil
	}
	pcm, err := audio.DecodeWAV(bytes.NewReader(voiceWAV))
	if err != nil {
		return nil, fmt.Errorf("speech: the embedded voice.wav: %w", err)
	}
	if pcm.Rate != rate {
		pcm = audio.Resample(pcm, rate)
	}
	voices[rate] = pcm.Samples
	return pcm.Samples, nil
}

// Loop plays a clip over and over, without a gap.
type Loop struct {
	clip []float32
	pos  int
}

// NewLoop starts playing clip at sample start (modulo its length).
func NewLoop(clip []float32, start int) *Loop {
	return &Loop{clip: clip, pos: start % len(clip)}
}

// Next returns the next n samples (a fresh slice).
func (l *Loop) Next(n int) []float32 {
	out := make([]float32, n)
	for i := 0; i < n; {
		c := copy(out[i:], l.clip[l.pos:])
		i += c
		l.pos = (l.pos + c) % len(l.clip)
	}
	return out
}

// FormatFields are the config fields of a baseline's declared format.
func FormatFields() []sdk.ConfigField {
	return []sdk.ConfigField{
		{Name: "input_rate", Type: sdk.TypeNumber, Default: 24000.0, Description: "input sample rate the model declares, Hz"},
		{Name: "output_rate", Type: sdk.TypeNumber, Default: 24000.0, Description: "output sample rate the model declares, Hz"},
		{Name: "frame_ms", Type: sdk.TypeNumber, Default: 80.0, Description: "input frame length, milliseconds (80 like Moshi; 1000 like MiniCPM-o)"},
	}
}

// DefaultFormat is the format with the default config: Moshi's shape.
var DefaultFormat = sdk.Format{InputRate: 24000, OutputRate: 24000, FrameSize: 1920}

// ParseFormat reads the format fields of config; absent fields keep their defaults.
func ParseFormat(config map[string]any) (sdk.Format, error) {
	in, err := Number(config, "input_rate", 24000, 8000, 192000)
	if err != nil {
		return sdk.Format{}, err
	}
	out, err := Number(config, "output_rate", 24000, 8000, 192000)
	if err != nil {
		return sdk.Format{}, err
	}
	ms, err := Number(config, "frame_ms", 80, 1, 10000)
	if err != nil {
		return sdk.Format{}, err
	}
	f := sdk.Format{InputRate: int(in), OutputRate: int(out), FrameSize: int(in * ms / 1000)}
	if float64(f.InputRate) != in || float64(f.OutputRate) != out || float64(f.FrameSize) != in*ms/1000 {
		return sdk.Format{}, fmt.Errorf("config: input_rate %g, output_rate %g and frame_ms %g must give whole numbers of samples", in, out, ms)
	}
	return f, nil
}

// Number reads a numeric config field with a default and an allowed range.
func Number(config map[string]any, name string, def, lo, hi float64) (float64, error) {
	v, ok := config[name]
	if !ok || v == nil {
		return def, nil
	}
	f, ok := v.(float64)
	if !ok || f < lo || f > hi {
		return 0, fmt.Errorf("config %s = %v: want a number from %g to %g", name, v, lo, hi)
	}
	return f, nil
}

// FrameOutput is how many output samples play in real time during input frame k: the
// cumulative count floor((k+1)*F*Ro/Ri) - floor(k*F*Ro/Ri), so a talker that emits this
// much per frame keeps the host's playback buffer exactly full.
func FrameOutput(f sdk.Format, k int) int {
	fr, ro, ri := int64(f.FrameSize), int64(f.OutputRate), int64(f.InputRate)
	kk := int64(k)
	return int((kk+1)*fr*ro/ri - kk*fr*ro/ri)
}
