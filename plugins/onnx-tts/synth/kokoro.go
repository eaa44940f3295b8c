package synth

// Kokoro-82M (hexgrad/kokoro), in the int8 ONNX export of kokoro-onnx: inputs tokens
// [1, n+2] int64 (0, the phoneme ids, 0), style [1, 256] float32 (row n-1 of the voice's
// [510, 1, 256] style table) and speed [1] float32; output audio [samples] float32 at
// 24 kHz. The graph draws no random numbers. Phonemes follow misaki's EspeakFallback
// for American English (misaki/espeak.py): espeak-ng IPA with "^" ties, punctuation
// kept as phonemizer keeps it, then misaki's replacements (diphthongs to its single
// letters A I O W Y, ʤ ʧ, ɚ to əɹ, syllabic consonants to ᵊ, length marks dropped, flap
// ɾ to T, glottal stop to t), then only symbols in the vocabulary. Text longer than the
// model's 510 tokens is cut at sentence ends, each piece one run, joined with
// sentence_silence.

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	ort "github.com/yalue/onnxruntime_go"
)

const (
	kokoroRate      = 24000
	kokoroMaxTokens = 510
	kokoroStyleDim  = 256
)

// kokoroE2M is misaki's EspeakFallback.E2M, applied longest first.
var kokoroE2M = func() [][2]string {
	m := map[string]string{
		"ʔˌn\u0329": "ʔn", "ʔn\u0329": "ʔn",
		"a^ɪ": "I", "a^ʊ": "W",
		"d^ʒ": "ʤ",
		"e^ɪ": "A", "e": "A",
		"t^ʃ": "ʧ",
		"ɔ^ɪ": "Y",
		"ə^l": "ᵊl",
		"ʲo":  "jo", "ʲə": "jə", "ʲ": "",
		"ɚ": "əɹ",
		"r": "ɹ",
		"x": "k", "ç": "k",
		"ɐ":      "ə",
		"ɬ":      "l",
		"\u0303": "",
	}
	var kv [][2]string
	for k, v := range m {
		kv = append(kv, [2]string{k, v})
	}
	// Longest first, as misaki sorts; ties in a fixed order.
	sort.SliceStable(kv, func(i, j int) bool {
		li, lj := len([]rune(kv[i][0])), len([]rune(kv[j][0]))
		if li != lj {
			return li > lj
		}
		return kv[i][0] < kv[j][0]
	})
	return kv
}()

var syllabic = regexp.MustCompile(`(\S)\x{0329}`)

// misakiCommon applies what misaki's EspeakFallback does for both accents: its E2M
// replacements and the syllabic consonants.
func misakiCommon(ps string) string {
	ps = strings.TrimSpace(ps)
	for _, r := range kokoroE2M {
		ps = strings.ReplaceAll(ps, r[0], r[1])
	}
	ps = syllabic.ReplaceAllString(ps, "ᵊ$1")
	return strings.ReplaceAll(ps, "\u0329", "")
}

// misakiGB turns espeak-ng's tied en-gb IPA into misaki's British phonemes: its
// EspeakFallback(british=True) keeps length marks and the British vowels, with the
// centring diphthongs and the GOAT vowel as misaki's letters (e^ə to ɛː, iə to ɪə, ə^ʊ
// to Q). One change: e^ə becomes ɛː before the common replacements, whose e to A would
// otherwise leave "there" as ðAə (misaki replaces it after, so its rule never fires);
// ɛː is what misaki's British lexicon (gb_gold) writes for that vowel.
func misakiGB(ps string) string {
	ps = strings.ReplaceAll(ps, "e^ə", "ɛː")
	ps = misakiCommon(ps)
	ps = strings.ReplaceAll(ps, "iə", "ɪə")
	ps = strings.ReplaceAll(ps, "ə^ʊ", "Q")
	ps = strings.ReplaceAll(ps, "o", "ɔ") // for espeak < 1.52, as misaki does
	ps = strings.ReplaceAll(ps, "ɾ", "T")
	ps = strings.ReplaceAll(ps, "ʔ", "t")
	return strings.ReplaceAll(ps, "^", "")
}

// misakiUS turns espeak-ng's tied IPA of a text into misaki's American phonemes.
func misakiUS(ps string) string {
	ps = misakiCommon(ps)
	ps = strings.ReplaceAll(ps, "o^ʊ", "O")
	ps = strings.ReplaceAll(ps, "ɜːɹ", "ɜɹ")
	ps = strings.ReplaceAll(ps, "ɜː", "ɜɹ")
	ps = strings.ReplaceAll(ps, "ɪə", "iə")
	ps = strings.ReplaceAll(ps, "ː", "")
	ps = strings.ReplaceAll(ps, "o", "ɔ") // for espeak < 1.52, as misaki does
	ps = strings.ReplaceAll(ps, "ɾ", "T")
	ps = strings.ReplaceAll(ps, "ʔ", "t")
	return strings.ReplaceAll(ps, "^", "")
}

// kokoroPhonemes returns text's phonemes in the espeak-ng voice lang ("en-us": misaki's
// American rules; "en-gb": its British ones), one string per sentence, punctuation kept
// as phonemizer keeps it ("word, word." with one space after each mark).
func kokoroPhonemes(ctx context.Context, binary, lang, text string) ([]string, error) {
	misaki := misakiUS
	if lang == langGB {
		misaki = misakiGB
	}
	var out []string
	var cur strings.Builder
	for _, c := range splitClauses(text) {
		ipa, err := espeak(ctx, binary, lang, c.text, '^')
		if err != nil {
			return nil, err
		}
		cur.WriteString(ipa)
		cur.WriteString(c.mark) // phonemizer keeps punctuation as written
		cur.WriteByte(' ')
		if c.sentenceEnd {
			out = append(out, misaki(cur.String()))
			cur.Reset()
		}
	}
	if cur.Len() > 0 {
		out = append(out, misaki(cur.String()))
	}
	return out, nil
}

// standaloneI is the pronoun "I" as EspeakFallback leaves it: unstressed, a word alone.
var standaloneI = regexp.MustCompile(`(^| )I([ ,.;:!?]|$)`)

// stressPronounI gives the pronoun "I" the stress misaki's own lexicon gives it
// (us_gold.json: "I": "ˈI"). espeak-ng leaves it unstressed, and Kokoro then swallows
// it: Whisper heard "I think the train..." as "Think the train..." in every Kokoro voice
// (README, Measured).
func stressPronounI(ps string) string {
	for {
		out := standaloneI.ReplaceAllString(ps, "${1}ˈI$2")
		if out == ps {
			return out
		}
		ps = out
	}
}

// kokoroTokens maps phonemes to vocabulary ids, dropping symbols the vocabulary lacks.
func kokoroTokens(vocab map[string]int64, ps string) []int64 {
	var ids []int64
	for _, r := range ps {
		if id, ok := vocab[string(r)]; ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// kokoroChunks packs sentences' tokens into runs of at most kokoroMaxTokens, a space
// token between sentences of one run; a sentence longer than that is cut.
func kokoroChunks(vocab map[string]int64, sentences []string) [][]int64 {
	space := vocab[" "]
	var out [][]int64
	var cur []int64
	for _, s := range sentences {
		ids := kokoroTokens(vocab, s)
		for len(ids) > kokoroMaxTokens {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			out = append(out, ids[:kokoroMaxTokens])
			ids = ids[kokoroMaxTokens:]
		}
		if len(ids) == 0 {
			continue
		}
		if len(cur) > 0 && len(cur)+1+len(ids) > kokoroMaxTokens {
			out = append(out, cur)
			cur = nil
		}
		if len(cur) > 0 {
			cur = append(cur, space)
		}
		cur = append(cur, ids...)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func loadKokoroVocab(path string) (map[string]int64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v struct {
		Vocab map[string]int64 `json:"vocab"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || len(v.Vocab) == 0 {
		return nil, fmt.Errorf("%s: not a Kokoro vocabulary ({\"vocab\": {...}}): %v", path, err)
	}
	return v.Vocab, nil
}

// loadStyles reads a NumPy .npz of voice style tables, each float32 [rows, 1, 256].
func loadStyles(path string) (map[string][]float32, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	out := map[string][]float32{}
	for _, f := range zr.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		raw, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		data, shape, err := readNpyFloat32(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, f.Name, err)
		}
		if len(shape) == 0 || shape[len(shape)-1] != kokoroStyleDim {
			return nil, fmt.Errorf("%s: %s has shape %v; want [rows, 1, %d]", path, f.Name, shape, kokoroStyleDim)
		}
		out[name] = data
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no .npy arrays", path)
	}
	return out, nil
}

// loadStyleBin reads one raw voice style file as kokoro-js ships it: little-endian
// float32 [510, 256] with no header (522,240 bytes).
func loadStyleBin(path string) ([]float32, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	const want = 510 * kokoroStyleDim * 4
	if len(raw) != want {
		return nil, fmt.Errorf("%s holds %d bytes; a Kokoro voice style is float32 [510, %d], %d bytes (scripts/fetch-tts.sh fetches it)", path, len(raw), kokoroStyleDim, want)
	}
	data := make([]float32, len(raw)/4)
	for i := range data {
		f := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, fmt.Errorf("%s: value %d is not finite: not a voice style", path, i)
		}
		data[i] = f
	}
	return data, nil
}

var npyShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)

// readNpyFloat32 parses a little-endian float32, C-order .npy file.
func readNpyFloat32(raw []byte) ([]float32, []int, error) {
	if len(raw) < 10 || !bytes.HasPrefix(raw, []byte("\x93NUMPY")) {
		return nil, nil, fmt.Errorf("not a .npy file")
	}
	var hlen, off int
	switch raw[6] {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(raw[8:10])), 10
	case 2, 3:
		if len(raw) < 12 {
			return nil, nil, fmt.Errorf("short .npy header")
		}
		hlen, off = int(binary.LittleEndian.Uint32(raw[8:12])), 12
	default:
		return nil, nil, fmt.Errorf(".npy version %d", raw[6])
	}
	if off+hlen > len(raw) {
		return nil, nil, fmt.Errorf("short .npy header")
	}
	h := string(raw[off : off+hlen])
	if !strings.Contains(h, "'descr': '<f4'") || !strings.Contains(h, "'fortran_order': False") {
		return nil, nil, fmt.Errorf(".npy header %q: want '<f4' in C order", strings.TrimSpace(h))
	}
	m := npyShape.FindStringSubmatch(h)
	if m == nil {
		return nil, nil, fmt.Errorf(".npy header %q has no shape", h)
	}
	var shape []int
	n := 1
	for _, s := range strings.Split(m[1], ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		d, err := strconv.Atoi(s)
		if err != nil {
			return nil, nil, fmt.Errorf(".npy shape %q", m[1])
		}
		shape = append(shape, d)
		n *= d
	}
	body := raw[off+hlen:]
	if len(body) != 4*n {
		return nil, nil, fmt.Errorf(".npy holds %d bytes of data; shape %v needs %d", len(body), shape, 4*n)
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = math.Float32frombits(binary.LittleEndian.Uint32(body[4*i:]))
	}
	return data, shape, nil
}

type kokoroModel struct {
	vocab map[string]int64
	sess  *ort.DynamicAdvancedSession
}

func newKokoroModel(model []byte, vocab map[string]int64, threads int) (*kokoroModel, error) {
	// A graph that draws random numbers would need the same rewrite as Piper's.
	if _, n, err := fixNoise(model); err != nil || n > 0 {
		return nil, fmt.Errorf("the Kokoro graph draws random numbers (%d nodes, %v); this plugin expects the kokoro-onnx export, which does not", n, err)
	}
	opts, err := sessionOptions(threads)
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(model, []string{"tokens", "style", "speed"}, []string{"audio"}, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the Kokoro session: %w", err)
	}
	return &kokoroModel{vocab: vocab, sess: s}, nil
}

// run synthesises one chunk of at most kokoroMaxTokens ids with a voice's style table.
func (m *kokoroModel) run(ids []int64, styles []float32, speed float32) ([]float32, error) {
	rows := len(styles) / kokoroStyleDim
	r := min(len(ids), rows) - 1
	style := styles[r*kokoroStyleDim : (r+1)*kokoroStyleDim]
	toks := append(append([]int64{0}, ids...), 0)
	in, err := ort.NewTensor(ort.NewShape(1, int64(len(toks))), toks)
	if err != nil {
		return nil, err
	}
	defer in.Destroy()
	st, err := ort.NewTensor(ort.NewShape(1, kokoroStyleDim), append([]float32(nil), style...))
	if err != nil {
		return nil, err
	}
	defer st.Destroy()
	sp, err := ort.NewTensor(ort.NewShape(1), []float32{speed})
	if err != nil {
		return nil, err
	}
	defer sp.Destroy()
	outs := []ort.Value{nil}
	if err := m.sess.Run([]ort.Value{in, st, sp}, outs); err != nil {
		return nil, fmt.Errorf("kokoro: ONNX Runtime: %w", err)
	}
	defer outs[0].Destroy()
	t, ok := outs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("kokoro: output is %T, want a float32 tensor", outs[0])
	}
	return append([]float32(nil), t.GetData()...), nil
}
