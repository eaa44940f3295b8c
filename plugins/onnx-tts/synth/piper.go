package synth

// Piper voices (rhasspy/piper): a VITS graph with inputs input [1, n] int64 (phoneme
// ids), input_lengths [1] int64 and scales [3] float32 (noise_scale, length_scale,
// noise_w), and output [1, 1, 1, samples] float32, with a JSON config beside it. The ids
// follow piper-phonemize: each sentence's espeak-ng IPA, NFD-decomposed, with the clause
// punctuation re-added (", " ": " "; " after a clause, "." "?" "!" at a sentence end),
// mapped through phoneme_id_map as "^", "_", then each phoneme followed by "_", then "$".
// Phonemes not in the map are dropped. Each sentence is one run; sentences are joined
// with sentence_silence.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	ort "github.com/yalue/onnxruntime_go"
	"golang.org/x/text/unicode/norm"
)

type piperConfig struct {
	Audio struct {
		SampleRate int `json:"sample_rate"`
	} `json:"audio"`
	Espeak struct {
		Voice string `json:"voice"`
	} `json:"espeak"`
	Inference struct {
		NoiseScale  float32 `json:"noise_scale"`
		LengthScale float32 `json:"length_scale"`
		NoiseW      float32 `json:"noise_w"`
	} `json:"inference"`
	PhonemeType  string           `json:"phoneme_type"`
	PhonemeIDMap map[string][]int `json:"phoneme_id_map"`
	NumSpeakers  int              `json:"num_speakers"`
}

func loadPiperConfig(path string) (*piperConfig, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c piperConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.PhonemeType != "" && c.PhonemeType != "espeak" {
		return nil, fmt.Errorf("%s: phoneme_type %q; only espeak voices are supported", path, c.PhonemeType)
	}
	if c.NumSpeakers > 1 {
		return nil, fmt.Errorf("%s: %d speakers; only single-speaker voices are supported", path, c.NumSpeakers)
	}
	for _, s := range []string{"^", "_", "$"} {
		if len(c.PhonemeIDMap[s]) == 0 {
			return nil, fmt.Errorf("%s: phoneme_id_map has no %q", path, s)
		}
	}
	if c.Audio.SampleRate <= 0 {
		return nil, fmt.Errorf("%s: no audio.sample_rate", path)
	}
	if c.Espeak.Voice == "" {
		c.Espeak.Voice = "en-us"
	}
	return &c, nil
}

// piperSentences returns the phonemes of each sentence of text, as piper-phonemize does.
func piperSentences(ctx context.Context, binary, espeakVoice, text string) ([][]rune, error) {
	var out [][]rune
	var cur []rune
	for _, c := range splitClauses(text) {
		ipa, err := espeak(ctx, binary, espeakVoice, c.text, 0)
		if err != nil {
			return nil, err
		}
		cur = append(cur, []rune(norm.NFD.String(ipa))...)
		switch c.punct {
		case '.', '?', '!':
			cur = append(cur, c.punct)
		case ',', ':', ';':
			cur = append(cur, c.punct, ' ')
		}
		if c.sentenceEnd {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out, nil
}

// piperIDs maps phonemes to ids: BOS, PAD, each phoneme and PAD, EOS.
func piperIDs(c *piperConfig, phonemes []rune) []int64 {
	m := c.PhonemeIDMap
	ids := []int64{}
	add := func(xs []int) {
		for _, x := range xs {
			ids = append(ids, int64(x))
		}
	}
	add(m["^"])
	add(m["_"])
	for _, p := range phonemes {
		if xs, ok := m[string(p)]; ok {
			add(xs)
			add(m["_"])
		}
	}
	add(m["$"])
	return ids
}

type piperModel struct {
	cfg  *piperConfig
	sess *ort.DynamicAdvancedSession
}

func newPiperModel(model []byte, cfg *piperConfig, threads int) (*piperModel, error) {
	fixed, n, err := fixNoise(model)
	if err != nil {
		return nil, err
	}
	if n == 0 && (cfg.Inference.NoiseScale != 0 || cfg.Inference.NoiseW != 0) {
		return nil, fmt.Errorf("the Piper graph has no RandomNormalLike node to make reproducible; expected the duration and flow noise")
	}
	opts, err := sessionOptions(threads)
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(fixed, []string{"input", "input_lengths", "scales"}, []string{"output"}, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the Piper session: %w", err)
	}
	return &piperModel{cfg: cfg, sess: s}, nil
}

// run synthesises one sentence's ids.
func (m *piperModel) run(ids []int64) ([]float32, error) {
	in, err := ort.NewTensor(ort.NewShape(1, int64(len(ids))), ids)
	if err != nil {
		return nil, err
	}
	defer in.Destroy()
	lens, err := ort.NewTensor(ort.NewShape(1), []int64{int64(len(ids))})
	if err != nil {
		return nil, err
	}
	defer lens.Destroy()
	inf := m.cfg.Inference
	scales, err := ort.NewTensor(ort.NewShape(3), []float32{inf.NoiseScale, inf.LengthScale, inf.NoiseW})
	if err != nil {
		return nil, err
	}
	defer scales.Destroy()
	outs := []ort.Value{nil}
	if err := m.sess.Run([]ort.Value{in, lens, scales}, outs); err != nil {
		return nil, fmt.Errorf("piper: ONNX Runtime: %w", err)
	}
	defer outs[0].Destroy()
	t, ok := outs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("piper: output is %T, want a float32 tensor", outs[0])
	}
	return append([]float32(nil), t.GetData()...), nil
}

func sessionOptions(threads int) (*ort.SessionOptions, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	if err := opts.SetIntraOpNumThreads(threads); err != nil {
		opts.Destroy()
		return nil, err
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		opts.Destroy()
		return nil, err
	}
	return opts, nil
}

// phonemeString is for messages and tests.
func phonemeString(p []rune) string { return strings.TrimSpace(string(p)) }
