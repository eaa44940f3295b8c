package sphinx

import (
	"os"
	"strings"
	"testing"
	"time"
)

// measureCorpus: answers, requests and backchannels in the style of the benchmark's
// conversations, for the README's figures.
var measureCorpus = []string{
	"the ticket costs nine dollars",
	"please set a timer for twenty minutes",
	"the meeting starts at three thirty",
	"okay understood",
	"the train leaves from platform four",
	"it will rain tomorrow afternoon",
	"the capital of france is paris",
	"you need two cups of flour",
	"the restaurant closes at ten tonight",
	"her birthday is on the twelfth of may",
	"turn left at the second traffic light",
	"the package should arrive on friday",
	"we have three apples and five oranges",
	"the password is written on the blue card",
	"call your mother before dinner",
	"the museum is open until six",
	"it takes about forty minutes by bus",
	"the answer is seventeen",
	"sure I can help with that",
	"the library is next to the post office",
}

// BenchmarkWordAccuracy transcribes measureCorpus in four flite voices and reports the
// word accuracy (1 - word error rate) and the decoding time per second of audio. It takes
// about two minutes, so it runs only when asked: `make measure-asr`, or
// DUPLEXMPE_MEASURE_ASR=1 go test ./plugins/pocketsphinx/sphinx -run '^$' -bench WordAccuracy -benchtime 1x
func BenchmarkWordAccuracy(b *testing.B) {
	if os.Getenv("DUPLEXMPE_MEASURE_ASR") != "1" {
		b.Skip("set DUPLEXMPE_MEASURE_ASR=1 to measure word accuracy (about two minutes)")
	}
	d := decoder(b)
	type clip struct {
		voice, text string
		samples     []float32
	}
	var clips []clip
	for _, v := range []string{"kal16", "slt", "rms", "awb"} {
		for _, text := range measureCorpus {
			clips = append(clips, clip{v, text, synth(b, v, text)})
		}
	}
	b.ResetTimer()
	var errs, words int
	var audioS, decodeS float64
	perVoice := map[string][2]int{}
	for b.Loop() {
		errs, words, audioS, decodeS = 0, 0, 0, 0
		for _, c := range clips {
			t0 := time.Now()
			got, err := d.Transcribe(c.samples)
			decodeS += time.Since(t0).Seconds()
			if err != nil {
				b.Fatal(err)
			}
			audioS += float64(len(c.samples)) / Rate
			ref := strings.Fields(strings.ToLower(c.text)) // the decoder writes lowercase
			e := wordErrors(ref, strings.Fields(got))
			errs += e
			words += len(ref)
			pv := perVoice[c.voice]
			perVoice[c.voice] = [2]int{pv[0] + e, pv[1] + len(ref)}
			if e > 0 {
				b.Logf("%s: %q -> %q", c.voice, c.text, got)
			}
		}
	}
	b.ReportMetric(1-float64(errs)/float64(words), "word-acc")
	b.ReportMetric(decodeS/audioS, "s/audio-s")
	for v, pv := range perVoice {
		b.Logf("%s: word accuracy %.3f over %d words", v, 1-float64(pv[0])/float64(pv[1]), pv[1])
	}
	b.Logf("%d clips, %.1f s of audio, %d words", len(clips), audioS, words)
}
