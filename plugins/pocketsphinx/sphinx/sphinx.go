// Package sphinx keeps a CMU PocketSphinx decoder (Debian's libpocketsphinx, 5prealpha)
// loaded and transcribes 16 kHz mono clips with it, one at a time, each as by a freshly
// loaded decoder. It is the engine of
// the pocketsphinx ASR plugin; cgo needs libpocketsphinx-dev and libsphinxbase-dev.
package sphinx

/*
#cgo pkg-config: pocketsphinx
#include <stdlib.h>
#include <string.h>
#include <pocketsphinx.h>
#include <sphinxbase/err.h>
#include <sphinxbase/feat.h>

// dmpe_init loads a decoder with the command-line style options in argv (flag, value,
// flag, value, ...): cmd_ln_init is variadic, which cgo cannot call, so the options are
// parsed as an argument vector instead.
static ps_decoder_t *dmpe_init(int argc, char **argv) {
	err_set_logfp(NULL); // the library logs every step to stderr otherwise
	cmd_ln_t *config = cmd_ln_parse_r(NULL, ps_args(), argc, argv, TRUE);
	if (config == NULL) {
		return NULL;
	}
	ps_decoder_t *ps = ps_init(config);
	cmd_ln_free_r(config); // ps_init keeps its own reference
	return ps;
}

// A decoder keeps state from one utterance to the next in three places, so that a
// transcript would depend on what the decoder heard before (issue 16):
//   - the front end's noise statistics (the spectral-subtraction noise, floor and peak
//     estimates behind -remove_noise and -remove_silence, adapted frame by frame):
//     ps_start_utt does not reset them, ps_start_stream does (they are estimated afresh
//     from the clip's first frame, as in a freshly loaded decoder);
//   - cepstral mean normalisation: batch CMN (the en-us model's feat.params) is computed
//     over each whole utterance, but live CMN carries its running mean over, and the
//     library switches to live CMN for good after any utterance not given whole;
//   - automatic gain control (off in the en-us model; "max" keeps a running maximum).
// dmpe_fresh records the CMN and AGC state of the decoder as loaded and dmpe_decode puts
// it back before every utterance, so every clip is decoded as by a fresh decoder
// (TestTranscriptIsAFunctionOfTheAudio checks it against fresh decoders).
typedef struct {
	cmn_type_t cmn;
	agc_type_t agc;
	int veclen;
	mfcc_t *mean, *sum; // NULL without CMN
	int32 nframe;
	agc_t agc_state;
	int has_agc;
} dmpe_fresh;

static dmpe_fresh *dmpe_snapshot(ps_decoder_t *ps) {
	feat_t *f = ps_get_feat(ps);
	dmpe_fresh *s = calloc(1, sizeof(dmpe_fresh));
	if (s == NULL) {
		return NULL;
	}
	s->cmn = f->cmn;
	s->agc = f->agc;
	if (f->cmn_struct != NULL) {
		cmn_t *c = f->cmn_struct;
		s->veclen = c->veclen;
		s->mean = malloc(c->veclen * sizeof(mfcc_t));
		s->sum = malloc(c->veclen * sizeof(mfcc_t));
		if (s->mean == NULL || s->sum == NULL) {
			free(s->mean);
			free(s->sum);
			free(s);
			return NULL;
		}
		memcpy(s->mean, c->cmn_mean, c->veclen * sizeof(mfcc_t));
		memcpy(s->sum, c->sum, c->veclen * sizeof(mfcc_t));
		s->nframe = c->nframe;
	}
	if (f->agc_struct != NULL) {
		s->agc_state = *f->agc_struct;
		s->has_agc = 1;
	}
	return s;
}

static void dmpe_free_fresh(dmpe_fresh *s) {
	if (s != NULL) {
		free(s->mean);
		free(s->sum);
		free(s);
	}
}

static void dmpe_restore(ps_decoder_t *ps, const dmpe_fresh *s) {
	feat_t *f = ps_get_feat(ps);
	f->cmn = s->cmn;
	f->agc = s->agc;
	if (f->cmn_struct != NULL && s->mean != NULL) {
		cmn_t *c = f->cmn_struct;
		memcpy(c->cmn_mean, s->mean, s->veclen * sizeof(mfcc_t));
		memcpy(c->sum, s->sum, s->veclen * sizeof(mfcc_t));
		c->nframe = s->nframe;
	}
	if (f->agc_struct != NULL && s->has_agc) {
		*f->agc_struct = s->agc_state;
	}
}

// dmpe_decode decodes one whole utterance from the decoder's fresh state; NULL means the
// decoder failed.
static const char *dmpe_decode(ps_decoder_t *ps, const dmpe_fresh *fresh, const int16 *data, size_t n) {
	dmpe_restore(ps, fresh);
	if (ps_start_stream(ps) < 0 || ps_start_utt(ps) < 0) {
		return NULL;
	}
	if (ps_process_raw(ps, data, n, FALSE, TRUE) < 0) {
		ps_end_utt(ps);
		return NULL;
	}
	if (ps_end_utt(ps) < 0) {
		return NULL;
	}
	int32 score;
	const char *hyp = ps_get_hyp(ps, &score);
	return hyp ? hyp : "";
}

// dmpe_segments writes the last decoded utterance's segments (words, fillers and
// keyphrase detections) into words (each followed by a NUL) and their first and last
// frames into frames, at most max of them, and returns how many there are (more than
// max: call again with more room).
static int dmpe_segments(ps_decoder_t *ps, char *words, size_t wcap, int *frames, int max) {
	int n = 0;
	size_t used = 0;
	for (ps_seg_t *seg = ps_seg_iter(ps); seg != NULL; seg = ps_seg_next(seg)) {
		if (n < max) {
			const char *w = ps_seg_word(seg);
			size_t l = strlen(w);
			if (used + l + 1 <= wcap) {
				memcpy(words + used, w, l + 1);
			}
			used += l + 1;
			int sf, ef;
			ps_seg_frames(seg, &sf, &ef);
			frames[2 * n] = sf;
			frames[2 * n + 1] = ef;
		}
		n++;
	}
	return used <= wcap ? n : max + 1 + n;
}
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// Rate is the sample rate the acoustic model expects.
const Rate = 16000

// Model files of Debian's pocketsphinx-en-us package.
const (
	DefaultHMM  = "/usr/share/pocketsphinx/model/en-us/en-us"
	DefaultLM   = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin"
	DefaultDict = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"
)

// Model names the acoustic model directory, the language model and the dictionary, and
// how hard the decoder searches.
type Model struct {
	HMM, LM, Dict string
	// Fast decodes in one pass (no flat-lexicon pass, no best-path search).
	Fast bool
	// Keyphrase, when set, makes the decoder a keyphrase spotter (PocketSphinx's kws
	// search: the phrase's phones against a loop of all phones, no language model; LM is
	// not loaded): Transcribe returns the phrase once per detection ("aria aria" for
	// two), "" for none. Its words must be in Dict.
	Keyphrase string
	// KWSThreshold is the spotter's detection threshold (-kws_threshold; 0: the
	// library's default, 1): smaller detects more, and more falsely.
	KWSThreshold float64
	// Keyphrases, instead of Keyphrase, makes the decoder spot several phrases, each with
	// its own threshold (PocketSphinx's -kws list file: a line per phrase, "phrase
	// /threshold/"): Transcribe returns the phrase detected, once per detection. Their
	// words must be in Dict.
	Keyphrases string
	// Options are further PocketSphinx options as flag and value pairs, in order
	// ("-beam", "1e-40", "-ds", "2"): a flag the library does not know fails Load.
	Options []string
}

// DefaultModel is the Debian US English model.
func DefaultModel() Model { return Model{HMM: DefaultHMM, LM: DefaultLM, Dict: DefaultDict} }

// Decoder is a loaded PocketSphinx decoder. Transcribe calls are serialised: the
// library's decoder is not safe for concurrent use.
type Decoder struct {
	mu    sync.Mutex
	ps    *C.ps_decoder_t
	fresh *C.dmpe_fresh // the state every utterance starts from
	argv  []*C.char     // the options, which the library's configuration points into
	model Model
}

// args is the decoder's option vector (without the program name).
func (m Model) args() ([]string, error) {
	if len(m.Options)%2 != 0 {
		return nil, fmt.Errorf("pocketsphinx options: want flag and value pairs, got %q", m.Options)
	}
	a := []string{"-hmm", m.HMM, "-dict", m.Dict}
	if m.Keyphrase != "" && m.Keyphrases != "" {
		return nil, errors.New("pocketsphinx: Keyphrase and Keyphrases are two searches; set one")
	}
	switch {
	case m.Keyphrases != "":
		a = append(a, "-kws", m.Keyphrases)
	case m.Keyphrase != "":
		a = append(a, "-keyphrase", m.Keyphrase)
		if m.KWSThreshold > 0 {
			a = append(a, "-kws_threshold", strconv.FormatFloat(m.KWSThreshold, 'g', -1, 64))
		}
	default:
		a = append(a, "-lm", m.LM)
	}
	if m.Fast {
		a = append(a, "-fwdflat", "no", "-bestpath", "no")
	}
	for i := 0; i < len(m.Options); i += 2 {
		if !strings.HasPrefix(m.Options[i], "-") {
			return nil, fmt.Errorf("pocketsphinx options: %q is not a flag", m.Options[i])
		}
	}
	return append(a, m.Options...), nil
}

// Load reads the model files (about a second) and returns a decoder ready for clips.
func Load(m Model) (*Decoder, error) {
	files := map[string]string{"hmm": m.HMM, "dict": m.Dict}
	if m.Keyphrases != "" {
		files["kws"] = m.Keyphrases
	}
	if m.Keyphrase == "" && m.Keyphrases == "" {
		files["lm"] = m.LM
	}
	for name, p := range files {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("pocketsphinx %s %q: %w (install pocketsphinx-en-us, or point %s at a model)", name, p, err, name)
		}
	}
	args, err := m.args()
	if err != nil {
		return nil, err
	}
	// argv[0] is the program name, which the parser skips. The strings stay allocated
	// until Close: the library's configuration may point into them.
	argv := []*C.char{C.CString("pocketsphinx")}
	for _, a := range args {
		argv = append(argv, C.CString(a))
	}
	cargv := (**C.char)(C.malloc(C.size_t(len(argv)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(cargv))
	copy(unsafe.Slice(cargv, len(argv)), argv)
	ps := C.dmpe_init(C.int(len(argv)), cargv)
	if ps == nil {
		freeArgv(argv)
		return nil, fmt.Errorf("pocketsphinx could not load the model (hmm %s, lm %s, dict %s, options %q); check that the files belong together and the options exist", m.HMM, m.LM, m.Dict, m.Options)
	}
	fresh := C.dmpe_snapshot(ps)
	if fresh == nil {
		C.ps_free(ps)
		freeArgv(argv)
		return nil, errors.New("pocketsphinx: out of memory recording the decoder's initial state")
	}
	return &Decoder{ps: ps, fresh: fresh, argv: argv, model: m}, nil
}

func freeArgv(argv []*C.char) {
	for _, p := range argv {
		C.free(unsafe.Pointer(p))
	}
}

// Model reports the files the decoder was loaded from.
func (d *Decoder) Model() Model { return d.model }

// ErrClosed is returned by Transcribe after Close.
var ErrClosed = errors.New("pocketsphinx decoder is closed")

// Transcribe decodes one clip of 16 kHz mono samples in [-1, 1] as one utterance and
// returns the words, lowercase, separated by single spaces, without filler or noise
// markers and alternate-pronunciation suffixes ("read(2)" -> "read"). The transcript is a
// function of the clip alone: every clip is decoded from the state the decoder had when
// loaded (see dmpe_decode), whatever it decoded before.
func (d *Decoder) Transcribe(samples []float32) (string, error) {
	var text string
	err := d.decode(samples, func(hyp *C.char) { text = Clean(C.GoString(hyp)) })
	return text, err
}

// decode decodes samples as one utterance from the decoder's fresh state and, unless
// the clip is empty, calls read with the hypothesis while the decoder is still held, so
// read may also walk its segments.
func (d *Decoder) decode(samples []float32, read func(hyp *C.char)) error {
	pcm := make([]C.int16, len(samples))
	for i, s := range samples {
		v := math.Round(float64(s) * 32767)
		pcm[i] = C.int16(max(-32768, min(32767, v)))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ps == nil {
		return ErrClosed
	}
	if len(pcm) == 0 {
		return nil
	}
	hyp := C.dmpe_decode(d.ps, d.fresh, &pcm[0], C.size_t(len(pcm)))
	if hyp == nil {
		return fmt.Errorf("pocketsphinx failed to decode a %.2f s clip", float64(len(pcm))/Rate)
	}
	read(hyp)
	return nil
}

// Word is one recognised word (or one keyphrase detection) and where it lies in the
// clip, in seconds from its start (PocketSphinx's 10 ms frames).
type Word struct {
	Text       string
	Start, End float64
}

// TranscribeWords decodes a clip as Transcribe does and returns its words with their
// times, cleaned as Transcribe cleans them (no fillers or noise, no pronunciation
// suffixes): joined with spaces they are Transcribe's transcript. A spotter returns one
// Word per detection, spanning where the phrase was heard.
func (d *Decoder) TranscribeWords(samples []float32) ([]Word, error) {
	var ws []Word
	err := d.decode(samples, func(*C.char) { ws = d.segments() })
	return ws, err
}

// segments reads the last decoded utterance's words and times; the caller holds d.mu.
func (d *Decoder) segments() []Word {
	for room := 64; ; room *= 4 {
		text := make([]byte, room*32)
		frames := make([]C.int, 2*room)
		n := int(C.dmpe_segments(d.ps, (*C.char)(unsafe.Pointer(&text[0])), C.size_t(len(text)), &frames[0], C.int(room)))
		if n > room {
			continue
		}
		ws := make([]Word, 0, n)
		rest := text
		for i := range n {
			end := bytes.IndexByte(rest, 0)
			w := Clean(string(rest[:end]))
			rest = rest[end+1:]
			if w != "" {
				ws = append(ws, Word{Text: w, Start: float64(frames[2*i]) / framesPerSecond, End: float64(frames[2*i+1]+1) / framesPerSecond})
			}
		}
		return ws
	}
}

// framesPerSecond is PocketSphinx's feature frame rate (-frate, 100 by default; the
// segment frames count feature frames whatever -ds skips).
const framesPerSecond = 100

// Clean drops filler and noise tokens (<sil>, [noise], ++garbage++) and alternate
// pronunciation suffixes from a hypothesis.
func Clean(hyp string) string {
	var words []string
	for _, w := range strings.Fields(hyp) {
		if strings.HasPrefix(w, "<") || strings.HasPrefix(w, "[") || strings.HasPrefix(w, "++") {
			continue
		}
		if i := strings.IndexByte(w, '('); i > 0 && strings.HasSuffix(w, ")") {
			w = w[:i]
		}
		words = append(words, strings.ToLower(w))
	}
	return strings.Join(words, " ")
}

// Close frees the decoder.
func (d *Decoder) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ps != nil {
		C.ps_free(d.ps)
		C.dmpe_free_fresh(d.fresh)
		freeArgv(d.argv)
		d.ps, d.fresh, d.argv = nil, nil, nil
	}
}
