// Command ttsmeasure (`make measure-tts`) measures TTS voices: it synthesises a fixed set
// of conversational sentences with each voice through the real plugin processes, then
// prints per voice the word error rate of Whisper tiny.en on them, the pitch (median F0
// and its 10th-90th percentile range, YIN), the integrated loudness before any
// normalisation (BS.1770), and the cost (real-time factor: synthesis time over audio
// time, on this machine, after one warm-up synthesis).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
)

// sentences: everyday turns of the kind the benchmark speaks, with names, numbers said
// as words, questions and short replies (20 sentences, 137 words).
var sentences = []string{
	"Could you pass me the salt, please?",
	"I think the train leaves at half past seven.",
	"Aria, how long do we need to boil the pasta?",
	"No, the meeting got moved to Thursday afternoon.",
	"Did anyone remember to water the plants?",
	"We still need milk, eggs and a loaf of bread.",
	"Tom said the package should arrive tomorrow morning.",
	"Honestly, I have no idea where I left my keys.",
	"Let's ask the assistant, it has been listening.",
	"The tickets were forty dollars each, right?",
	"Hey, turn the music down a little.",
	"Maybe we should leave before the traffic gets bad.",
	"She told me the password was blue elephant.",
	"Okay, never mind, I found it.",
	"How many people are coming to dinner on Saturday?",
	"The oven needs another twenty minutes.",
	"Wait, is the library open on Sunday?",
	"I can pick up the kids after school today.",
	"We booked the table for eight people at the Italian place.",
	"That sounds great, thank you so much.",
}

func main() {
	bin := flag.String("bin", "bin/plugins", "folder of the built plugins")
	voices := flag.String("voices", "onnx-tts:af_heart,onnx-tts:af_bella,onnx-tts:af_nicole,onnx-tts:bf_emma,onnx-tts:bf_isabella,onnx-tts:bf_alice,onnx-tts:am_michael,onnx-tts:am_fenrir,onnx-tts:am_puck,onnx-tts:bm_fable,onnx-tts:bm_lewis,onnx-tts:bm_george,onnx-tts:af_sarah", "plugin:voice list")
	out := flag.String("out", "build/measure-tts", "folder for the clips")
	python := flag.String("python", "", "Python with faster-whisper (empty: no WER)")
	model := flag.String("whisper-model", "", "CTranslate2 Whisper model folder")
	n := flag.Int("n", len(sentences), "how many of the sentences")
	flag.Parse()
	if err := run(*bin, strings.Split(*voices, ","), *out, *python, *model, sentences[:min(*n, len(sentences))]); err != nil {
		fmt.Fprintln(os.Stderr, "measure-tts:", err)
		os.Exit(1)
	}
}

type result struct {
	plugin, voice        string
	clips                []string
	audioS, synthS       float64
	f0                   []float64
	loud                 []float64
	wordErrors, refWords int
}

func run(bin string, list []string, out, python, model string, texts []string) error {
	ctx := context.Background()
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var results []*result
	byPlugin := map[string][]string{}
	var order []string
	for _, pv := range list {
		p, v, ok := strings.Cut(strings.TrimSpace(pv), ":")
		if !ok {
			return fmt.Errorf("voice %q: want plugin:voice", pv)
		}
		if _, seen := byPlugin[p]; !seen {
			order = append(order, p)
		}
		byPlugin[p] = append(byPlugin[p], v)
	}
	for _, p := range order {
		c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: p, Source: filepath.Join(bin, p)}, nil)
		if err != nil {
			return fmt.Errorf("starting %s: %w (make build)", p, err)
		}
		if err := c.Configure(ctx, map[string]any{}); err != nil {
			c.Kill()
			return fmt.Errorf("%s: configure: %w", p, err)
		}
		tts, err := c.TTS()
		if err != nil {
			c.Kill()
			return err
		}
		for _, v := range byPlugin[p] {
			r := &result{plugin: p, voice: v}
			if _, err := tts.Synthesize(ctx, "Warm up.", v); err != nil { // loads the model
				c.Kill()
				return fmt.Errorf("%s %s: %w", p, v, err)
			}
			for i, text := range texts {
				start := time.Now()
				a, err := tts.Synthesize(ctx, text, v)
				if err != nil {
					c.Kill()
					return fmt.Errorf("%s %s: %w", p, v, err)
				}
				r.synthS += time.Since(start).Seconds()
				pcm := audio.PCM{Samples: a.Samples, Rate: a.Rate}
				r.audioS += pcm.Duration()
				r.f0 = append(r.f0, pitchTrack(pcm.Samples, pcm.Rate)...)
				r.loud = append(r.loud, audio.LoudnessLUFS(pcm))
				path := filepath.Join(out, fmt.Sprintf("%s-%s-%02d.wav", p, v, i))
				if err := audio.WriteWAV(path, pcm); err != nil {
					c.Kill()
					return err
				}
				r.clips = append(r.clips, path)
			}
			results = append(results, r)
			fmt.Fprintf(os.Stderr, "measure-tts: %s %s: %d clips, %.1f s of audio\n", p, v, len(texts), r.audioS)
		}
		c.Kill()
	}
	haveWER := python != "" && model != ""
	if haveWER {
		var all []string
		for _, r := range results {
			all = append(all, r.clips...)
		}
		args := append([]string{"tools/ttsmeasure/whisper_wer.py", model}, all...)
		cmd := exec.CommandContext(ctx, python, args...)
		cmd.Stderr = os.Stderr
		raw, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("whisper: %w", err)
		}
		var hyp map[string]string
		if err := json.Unmarshal(raw, &hyp); err != nil {
			return fmt.Errorf("whisper printed %q: %w", raw, err)
		}
		for _, r := range results {
			for i, c := range r.clips {
				ref, h := words(texts[i]), words(hyp[c])
				r.wordErrors += editDistance(ref, h)
				r.refWords += len(ref)
				if e := editDistance(ref, h); e > 0 {
					fmt.Fprintf(os.Stderr, "  %s %s: %q heard as %q\n", r.plugin, r.voice, texts[i], hyp[c])
				}
			}
		}
	}
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(w, "plugin\tvoice\tWhisper tiny.en WER\tF0 median\tF0 p10-p90\tloudness (LUFS, mean [min, max])\tRTF\tclips/s\n")
	for _, r := range results {
		wer := "n/a (no faster-whisper)"
		if haveWER {
			wer = fmt.Sprintf("%.3f (%d/%d)", float64(r.wordErrors)/float64(r.refWords), r.wordErrors, r.refWords)
		}
		lo, hi := quantile(r.f0, 0.1), quantile(r.f0, 0.9)
		lmin, lmax, lsum := math.Inf(1), math.Inf(-1), 0.0
		for _, l := range r.loud {
			lmin, lmax, lsum = math.Min(lmin, l), math.Max(lmax, l), lsum+l
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%.0f Hz\t%.0f-%.0f Hz (%.1f st)\t%.1f [%.1f, %.1f]\t%.3f\t%.2f\n",
			r.plugin, r.voice, wer, quantile(r.f0, 0.5), lo, hi, 12*math.Log2(hi/lo),
			lsum/float64(len(r.loud)), lmin, lmax, r.synthS/r.audioS, float64(len(r.clips))/r.synthS)
	}
	w.Flush()
	fmt.Printf("%d sentences per voice (%d words); RTF = synthesis time / audio time, one synthesis at a time, after a warm-up; loudness before the build's normalisation.\n", len(texts), totalWords(texts))
	return nil
}

func totalWords(texts []string) int {
	n := 0
	for _, t := range texts {
		n += len(words(t))
	}
	return n
}

var (
	nonWord = regexp.MustCompile(`[^a-z0-9' ]+`)
	dollars = regexp.MustCompile(`\$([0-9]+)`)
	small   = strings.Fields("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen")
	tens    = strings.Fields("_ _ twenty thirty forty fifty sixty seventy eighty ninety")
)

// words normalises a transcript for WER: lower case, hyphens and punctuation to spaces,
// whole numbers below 100 and "$40" spelt out, "ok" as "okay".
func words(s string) []string {
	s = strings.ToLower(s)
	s = dollars.ReplaceAllString(s, "$1 dollars")
	s = nonWord.ReplaceAllString(strings.ReplaceAll(s, "-", " "), " ")
	var out []string
	for _, w := range strings.Fields(s) {
		w = strings.Trim(w, "'")
		var n int
		if _, err := fmt.Sscanf(w, "%d", &n); err == nil && fmt.Sprint(n) == w && n < 100 {
			if n < 20 {
				out = append(out, small[n])
			} else {
				out = append(out, tens[n/10])
				if n%10 != 0 {
					out = append(out, small[n%10])
				}
			}
			continue
		}
		if w == "ok" {
			w = "okay"
		}
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

func editDistance(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
