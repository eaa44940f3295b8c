// Package sphinx keeps a CMU PocketSphinx decoder (Debian's libpocketsphinx, 5prealpha)
// loaded and transcribes 16 kHz mono clips with it, one at a time. It is the engine of
// the pocketsphinx ASR plugin; cgo needs libpocketsphinx-dev and libsphinxbase-dev.
package sphinx

/*
#cgo pkg-config: pocketsphinx
#include <stdlib.h>
#include <pocketsphinx.h>
#include <sphinxbase/err.h>

// cmd_ln_init is variadic, which cgo cannot call: wrap it.
// fast skips the second (flat-lexicon) pass and the lattice best-path search: about 1.6
// times less CPU, with more misrecognised words.
static ps_decoder_t *dmpe_init(const char *hmm, const char *lm, const char *dict, int fast) {
	err_set_logfp(NULL); // the library logs every step to stderr otherwise
	cmd_ln_t *config = fast
		? cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", hmm, "-lm", lm, "-dict", dict,
			"-fwdflat", "no", "-bestpath", "no", NULL)
		: cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", hmm, "-lm", lm, "-dict", dict, NULL);
	if (config == NULL) {
		return NULL;
	}
	ps_decoder_t *ps = ps_init(config);
	cmd_ln_free_r(config); // ps_init keeps its own reference
	return ps;
}

// dmpe_decode decodes one whole utterance; NULL means the decoder failed.
static const char *dmpe_decode(ps_decoder_t *ps, const int16 *data, size_t n) {
	if (ps_start_utt(ps) < 0) {
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
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"os"
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
}

// DefaultModel is the Debian US English model.
func DefaultModel() Model { return Model{HMM: DefaultHMM, LM: DefaultLM, Dict: DefaultDict} }

// Decoder is a loaded PocketSphinx decoder. Transcribe calls are serialised: the
// library's decoder is not safe for concurrent use.
type Decoder struct {
	mu    sync.Mutex
	ps    *C.ps_decoder_t
	model Model
}

// Load reads the model files (about a second) and returns a decoder ready for clips.
func Load(m Model) (*Decoder, error) {
	for name, p := range map[string]string{"hmm": m.HMM, "lm": m.LM, "dict": m.Dict} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("pocketsphinx %s %q: %w (install pocketsphinx-en-us, or point %s at a model)", name, p, err, name)
		}
	}
	hmm, lm, dict := C.CString(m.HMM), C.CString(m.LM), C.CString(m.Dict)
	defer C.free(unsafe.Pointer(hmm))
	defer C.free(unsafe.Pointer(lm))
	defer C.free(unsafe.Pointer(dict))
	fast := C.int(0)
	if m.Fast {
		fast = 1
	}
	ps := C.dmpe_init(hmm, lm, dict, fast)
	if ps == nil {
		return nil, fmt.Errorf("pocketsphinx could not load the model (hmm %s, lm %s, dict %s); check that the files belong together", m.HMM, m.LM, m.Dict)
	}
	return &Decoder{ps: ps, model: m}, nil
}

// Model reports the files the decoder was loaded from.
func (d *Decoder) Model() Model { return d.model }

// ErrClosed is returned by Transcribe after Close.
var ErrClosed = errors.New("pocketsphinx decoder is closed")

// Transcribe decodes one clip of 16 kHz mono samples in [-1, 1] as one utterance and
// returns the words, lowercase, separated by single spaces, without filler or noise
// markers and alternate-pronunciation suffixes ("read(2)" -> "read").
func (d *Decoder) Transcribe(samples []float32) (string, error) {
	pcm := make([]C.int16, len(samples))
	for i, s := range samples {
		v := math.Round(float64(s) * 32767)
		pcm[i] = C.int16(max(-32768, min(32767, v)))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ps == nil {
		return "", ErrClosed
	}
	if len(pcm) == 0 {
		return "", nil
	}
	hyp := C.dmpe_decode(d.ps, &pcm[0], C.size_t(len(pcm)))
	if hyp == nil {
		return "", fmt.Errorf("pocketsphinx failed to decode a %.2f s clip", float64(len(pcm))/Rate)
	}
	return Clean(C.GoString(hyp)), nil
}

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
		d.ps = nil
	}
}
