package sphinx

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
)

// synth speaks text with the flite binary and returns it at 16 kHz.
func synth(tb testing.TB, voice, text string) []float32 {
	tb.Helper()
	if _, err := exec.LookPath("flite"); err != nil {
		tb.Skip("flite is not installed (scripts/install-apt.sh installs it)")
	}
	wav := filepath.Join(tb.TempDir(), "clip.wav")
	if out, err := exec.Command("flite", "-voice", voice, "-t", text, "-o", wav).CombinedOutput(); err != nil {
		tb.Fatalf("flite: %v: %s", err, out)
	}
	p, err := audio.ReadWAV(wav)
	if err != nil {
		tb.Fatal(err)
	}
	return audio.Resample(p, Rate).Samples
}

var shared *Decoder

func decoder(tb testing.TB) *Decoder {
	tb.Helper()
	if shared == nil {
		d, err := Load(DefaultModel())
		if err != nil {
			tb.Skipf("pocketsphinx model not available: %v", err)
		}
		shared = d
	}
	return shared
}

// wordErrors is the word-level edit distance between reference and hypothesis.
func wordErrors(ref, hyp []string) int {
	prev := make([]int, len(hyp)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ref); i++ {
		cur := make([]int, len(hyp)+1)
		cur[0] = i
		for j := 1; j <= len(hyp); j++ {
			sub := prev[j-1]
			if ref[i-1] != hyp[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev = cur
	}
	return prev[len(hyp)]
}

// Sentences like the benchmark's answers and backchannels, spoken by flite voices.
var corpus = []struct{ voice, text string }{
	{"kal16", "the ticket costs nine dollars"},
	{"slt", "please set a timer for twenty minutes"},
	{"rms", "the meeting starts at three thirty"},
	{"awb", "okay understood"}, // flite spells "mm hmm" out letter by letter
}

// On flite speech PocketSphinx should be nearly word for word (checked on this project's machines); the
// test holds it to at least 80% word accuracy over four voices (README.md has the
// figure measured on a larger set).
func TestTranscribeFliteSpeech(t *testing.T) {
	d := decoder(t)
	errs, words := 0, 0
	for _, c := range corpus {
		got, err := d.Transcribe(synth(t, c.voice, c.text))
		if err != nil {
			t.Fatal(err)
		}
		ref := strings.Fields(c.text)
		e := wordErrors(ref, strings.Fields(got))
		errs += e
		words += len(ref)
		t.Logf("%s: %q -> %q (%d errors)", c.voice, c.text, got, e)
	}
	if acc := 1 - float64(errs)/float64(words); acc < 0.80 {
		t.Errorf("word accuracy %.2f over %d words, want >= 0.80", acc, words)
	}
}

// Silence and near silence give an empty transcript or very little, never an error.
func TestTranscribeSilenceAndEmpty(t *testing.T) {
	d := decoder(t)
	if got, err := d.Transcribe(nil); err != nil || got != "" {
		t.Errorf("empty clip: %q, %v", got, err)
	}
	got, err := d.Transcribe(make([]float32, Rate))
	if err != nil || len(strings.Fields(got)) > 1 {
		t.Errorf("one second of silence: %q, %v", got, err)
	}
	// Out-of-range samples are clipped, not wrapped.
	loud := make([]float32, Rate/2)
	for i := range loud {
		loud[i] = 4
	}
	if _, err := d.Transcribe(loud); err != nil {
		t.Errorf("clipped clip: %v", err)
	}
}

func TestClean(t *testing.T) {
	if got := Clean("<s> the READ(2) [noise] ++garbage++ book </s>"); got != "the read book" {
		t.Errorf("Clean = %q", got)
	}
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	m := DefaultModel()
	m.Dict = "/no/such/dict"
	if _, err := Load(m); err == nil || !strings.Contains(err.Error(), "/no/such/dict") {
		t.Errorf("err = %v", err)
	}
}

func TestClose(t *testing.T) {
	d, err := Load(DefaultModel())
	if err != nil {
		t.Skip(err)
	}
	d.Close()
	d.Close()
	if _, err := d.Transcribe(make([]float32, 100)); err != ErrClosed {
		t.Errorf("after Close: %v", err)
	}
}

// BenchmarkTranscribe reports decoding time per second of audio (s/audio-s) on flite speech.
func BenchmarkTranscribe(b *testing.B) {
	d := decoder(b)
	clip := synth(b, "kal16", "please set a timer for twenty minutes and remind me to call the office")
	seconds := float64(len(clip)) / Rate
	for b.Loop() {
		if _, err := d.Transcribe(clip); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/seconds, "s/audio-s")
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		d, err := Load(DefaultModel())
		if err != nil {
			b.Skip(err)
		}
		d.Close()
	}
}

// orderClips are flite sentences at different levels over different background noise,
// with quiet lead-in and tail: the noise a decoder has adapted to differs from clip to
// clip, which is what made transcripts depend on the previous clip.
func orderClips(tb testing.TB) [][]float32 {
	tb.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	levels := []struct{ gain, noise float64 }{{1, 0}, {0.3, 0.004}, {1.2, 0.012}, {0.6, 0.002}, {0.9, 0.008}}
	texts := append([]struct{ voice, text string }{}, corpus...)
	texts = append(texts, struct{ voice, text string }{"slt", "the ferry leaves at seven"})
	var clips [][]float32
	for i, c := range texts {
		speech := synth(tb, c.voice, c.text)
		lv := levels[i%len(levels)]
		lead := Rate / 4
		out := make([]float32, lead+len(speech)+Rate/4)
		for j := range out {
			v := r.NormFloat64() * lv.noise
			if k := j - lead; k >= 0 && k < len(speech) {
				v += float64(speech[k]) * lv.gain
			}
			out[j] = float32(v)
		}
		clips = append(clips, out)
	}
	return clips
}

// A transcript is a function of the audio (issue 16): a decoder that has decoded other
// clips before, in either order, gives what a freshly loaded decoder gives for each clip.
// Before each utterance started from the decoder's fresh state, this failed: the noise
// estimates adapted to the previous clip changed 1 to 3 of 5 transcripts here.
func TestTranscriptIsAFunctionOfTheAudio(t *testing.T) {
	clips := orderClips(t)
	fresh := make([]string, len(clips))
	for i, c := range clips {
		d, err := Load(DefaultModel())
		if err != nil {
			t.Skipf("pocketsphinx model not available: %v", err)
		}
		fresh[i], err = d.Transcribe(c)
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	d := decoder(t)
	for _, order := range [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 0, 4, 1, 3}} {
		for _, i := range order {
			got, err := d.Transcribe(clips[i])
			if err != nil {
				t.Fatal(err)
			}
			if got != fresh[i] {
				t.Errorf("order %v, clip %d: %q after other clips, %q from a fresh decoder", order, i, got, fresh[i])
			}
		}
	}
	t.Logf("transcripts: %q", fresh)
}

// A keyphrase decoder (kws search, no language model) returns the phrase when it hears
// it and nothing otherwise; extra options are checked by the library at Load.
func TestKeyphraseAndOptions(t *testing.T) {
	m := DefaultModel()
	m.Keyphrase, m.KWSThreshold = "aria", 1e-5
	d, err := Load(m)
	if err != nil {
		t.Skipf("pocketsphinx model not available: %v", err)
	}
	defer d.Close()
	checkSpots(t, d, []spotCase{
		{"awb", "Aria, how many tablespoons are in a quarter cup?", "aria"},
		{"kal16", "the ticket costs nine dollars", ""},
	})
	for _, opts := range [][]string{{"-no_such_option", "1"}, {"-beam"}, {"beam", "1e-40"}} {
		m := DefaultModel()
		m.Options = opts
		if d, err := Load(m); err == nil {
			d.Close()
			t.Errorf("options %q: loaded", opts)
		}
	}
	m = DefaultModel()
	m.Options = []string{"-maxhmmpf", "3000"}
	d2, err := Load(m)
	if err != nil {
		t.Fatalf("options %q: %v", m.Options, err)
	}
	d2.Close()
}

// TranscribeWords gives Transcribe's words with their times, and a spotter's detection
// lies where the phrase is spoken: at the start of "Aria, ..." and at the end of
// "... Aria".
func TestTranscribeWords(t *testing.T) {
	dec, err := Load(DefaultModel())
	if err != nil {
		t.Skipf("pocketsphinx model not available: %v", err)
	}
	defer dec.Close()
	m := DefaultModel()
	m.Keyphrase, m.KWSThreshold = "aria", 1e-5
	spot, err := Load(m)
	if err != nil {
		t.Fatal(err)
	}
	defer spot.Close()
	for _, c := range []struct {
		text  string
		first bool // the name opens the sentence (else it closes it)
	}{
		{"Aria, how many tablespoons are in a quarter cup?", true},
		{"What time does the last bus leave tonight, Aria?", false},
	} {
		clip := synth(t, "kal16", c.text)
		dur := float64(len(clip)) / Rate
		text, err := dec.Transcribe(clip)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := dec.TranscribeWords(clip)
		if err != nil {
			t.Fatal(err)
		}
		var joined []string
		prev := 0.0
		for _, w := range ws {
			joined = append(joined, w.Text)
			if w.Start < prev || w.End <= w.Start || w.End > dur+0.02 {
				t.Errorf("%q: word %+v out of order or outside the %.2f s clip", c.text, w, dur)
			}
			prev = w.End
		}
		if strings.Join(joined, " ") != text {
			t.Errorf("%q: words %q, transcript %q", c.text, joined, text)
		}
		hits, err := spot.TranscribeWords(clip)
		if err != nil || len(hits) != 1 || hits[0].Text != "aria" {
			t.Fatalf("%q: spotted %+v, %v; want one aria", c.text, hits, err)
		}
		if mid := (hits[0].Start + hits[0].End) / 2; c.first != (mid < dur/2) {
			t.Errorf("%q: aria spotted at %.2f-%.2f s of %.2f s", c.text, hits[0].Start, hits[0].End, dur)
		}
	}
}

// A keyphrase list (Keyphrases: PocketSphinx's -kws file) spots each of its phrases at
// its own threshold, spelled by the dictionary given; a missing list file is an error
// naming it, and Keyphrase with Keyphrases is refused.
func TestKeyphraseList(t *testing.T) {
	dir := t.TempDir()
	dict, list := filepath.Join(dir, "d.dict"), filepath.Join(dir, "k.kws")
	if err := os.WriteFile(dict, []byte("tablespoon T EY B AH L S P UW N\nticket T IH K AH T\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(list, []byte("tablespoon /1e-5/\nticket /1e-5/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := DefaultModel()
	m.Dict, m.Keyphrases = dict, list
	d, err := Load(m)
	if err != nil {
		t.Skipf("pocketsphinx model not available: %v", err)
	}
	defer d.Close()
	checkSpots(t, d, []spotCase{
		{"awb", "How many tablespoons are in a quarter cup?", "tablespoon"},
		{"kal16", "the ticket costs nine dollars", "ticket"},
		{"kal16", "we leave at noon", ""},
	})
	m.Keyphrases = filepath.Join(dir, "missing.kws")
	if _, err := Load(m); err == nil || !strings.Contains(err.Error(), "missing.kws") {
		t.Errorf("a missing list file: %v", err)
	}
	m.Keyphrases, m.Keyphrase = list, "ticket"
	if _, err := Load(m); err == nil {
		t.Error("Keyphrase and Keyphrases together: loaded")
	}
}

// spotCase is a sentence flite says in voice and what a spotter should return for it.
type spotCase struct{ voice, text, want string }

// checkSpots has the spotter d transcribe each case's speech and checks what it spotted.
func checkSpots(t *testing.T, d *Decoder, cases []spotCase) {
	t.Helper()
	for _, c := range cases {
		got, err := d.Transcribe(synth(t, c.voice, c.text))
		if err != nil || got != c.want {
			t.Errorf("%s %q: spotted %q, %v; want %q", c.voice, c.text, got, err, c.want)
		}
	}
}
