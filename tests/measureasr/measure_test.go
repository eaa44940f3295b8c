// Package measureasr measures the word error rate of every ASR plugin on speech from
// every TTS voice set: `make measure-asr` (mk/asr.mk). It is skipped unless
// DUPLEXMPE_MEASURE_ASR=1.
package measureasr

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/plugins/lexical-judge/lexical"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// corpus: answers, requests and backchannels in the style of the benchmark's
// conversations (the 20 sentences of plugins/pocketsphinx/sphinx/measure_test.go).
var corpus = []string{
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

// root is the repository root (this package is tests/measureasr).
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// pluginSpec finds a plugin by name as `make build` and the repository lay them out: a
// Go plugin built into bin/plugins/NAME, or a Python plugin started by plugins/NAME/run.sh.
func pluginSpec(t *testing.T, name string) pluginhost.Spec {
	t.Helper()
	r := root(t)
	if bin := filepath.Join(r, "bin", "plugins", name); fileExists(bin) {
		return pluginhost.Spec{Name: name, Source: bin, StartTimeout: 2 * time.Minute}
	}
	if dir := filepath.Join(r, "plugins", name); fileExists(filepath.Join(dir, "run.sh")) {
		return pluginhost.Spec{Name: name, Command: []string{"./run.sh"}, Dir: dir, StartTimeout: 2 * time.Minute}
	}
	t.Fatalf("no plugin %q: neither bin/plugins/%s (make build) nor plugins/%s/run.sh", name, name, name)
	return pluginhost.Spec{}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// voiceSet is one TTS plugin and the voices of it to measure.
type voiceSet struct {
	tts    string
	voices []string
}

// parseVoiceSets reads "tts:voice,voice tts:voice" (MEASURE_ASR_VOICES in mk/asr.mk).
func parseVoiceSets(t *testing.T, s string) []voiceSet {
	var out []voiceSet
	for _, f := range strings.Fields(s) {
		name, voices, ok := strings.Cut(f, ":")
		if !ok || name == "" || voices == "" {
			t.Fatalf("voice set %q: want TTS:VOICE,VOICE", f)
		}
		out = append(out, voiceSet{name, strings.Split(voices, ",")})
	}
	return out
}

type clip struct {
	set, voice, text string
	audio            sdk.Audio
}

func synthesise(ctx context.Context, t *testing.T, sets []voiceSet) []clip {
	var clips []clip
	for _, vs := range sets {
		c, err := pluginhost.Start(ctx, pluginSpec(t, vs.tts), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Configure(ctx, map[string]any{}); err != nil {
			t.Fatal(err)
		}
		tts, err := c.TTS()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs.voices {
			for _, text := range corpus {
				a, err := tts.Synthesize(ctx, text, v)
				if err != nil {
					t.Fatalf("%s voice %s: %v", vs.tts, v, err)
				}
				clips = append(clips, clip{vs.tts, v, text, a})
			}
		}
		c.Kill()
	}
	return clips
}

// procCPU is the user and system CPU seconds of a process so far (Linux /proc).
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

// wordErrors is the word-level edit distance of hyp against ref.
func wordErrors(ref, hyp []string) int {
	prev := make([]int, len(hyp)+1)
	cur := make([]int, len(hyp)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ref); i++ {
		cur[0] = i
		for j := 1; j <= len(hyp); j++ {
			sub := prev[j-1]
			if ref[i-1] != hyp[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(hyp)]
}

// TestMeasureASR prints, for each ASR plugin, the word error rate per voice and voice
// set, and its CPU seconds per second of audio. Words are compared after the lexical
// judge's normalisation (lexical.Normalize: case, punctuation, number words as digits,
// plurals), so "nine dollars" and "$9" are the same words and "3.30" for "three thirty"
// is two errors.
func TestMeasureASR(t *testing.T) {
	if os.Getenv("DUPLEXMPE_MEASURE_ASR") != "1" {
		t.Skip("set DUPLEXMPE_MEASURE_ASR=1 to measure (make measure-asr; a few minutes)")
	}
	asrs := strings.Fields(os.Getenv("MEASURE_ASR_PLUGINS"))
	if len(asrs) == 0 {
		asrs = []string{"pocketsphinx", "whisper"}
	}
	sets := parseVoiceSets(t, os.Getenv("MEASURE_ASR_VOICES"))
	if len(sets) == 0 {
		sets = parseVoiceSets(t, "flite:kal16,slt,rms,awb")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	clips := synthesise(ctx, t, sets)
	var audioS float64
	for _, c := range clips {
		audioS += float64(len(c.audio.Samples)) / float64(c.audio.Rate)
	}
	refWords := 0
	for _, text := range corpus {
		refWords += len(lexical.Normalize(text))
	}
	fmt.Printf("\n%d sentences (%d words), %d clips, %.1f s of audio; WER after lexical.Normalize\n\n", len(corpus), refWords, len(clips), audioS)

	type row struct {
		key         string // set/voice
		errs, words int
		examples    []string
	}
	for _, name := range asrs {
		c, err := pluginhost.Start(ctx, pluginSpec(t, name), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Configure(ctx, map[string]any{}); err != nil {
			t.Fatal(err)
		}
		asr, err := c.ASR()
		if err != nil {
			t.Fatal(err)
		}
		info, _ := c.Describe(ctx)
		audios := make([]sdk.Audio, len(clips))
		for i, cl := range clips {
			audios[i] = cl.audio
		}
		cpu0, t0 := procCPU(c.Pid()), time.Now()
		got, errs := transcribeAll(ctx, asr, audios)
		cpu, wall := procCPU(c.Pid())-cpu0, time.Since(t0)
		c.Kill()
		rows := map[string]*row{}
		var keys []string
		total := row{key: "all"}
		for i, cl := range clips {
			if errs[i] != nil {
				t.Fatalf("%s on %s/%s %q: %v", name, cl.set, cl.voice, cl.text, errs[i])
			}
			ref, hyp := lexical.Normalize(cl.text), lexical.Normalize(got[i])
			e := wordErrors(ref, hyp)
			k := cl.set + "/" + cl.voice
			r := rows[k]
			if r == nil {
				r = &row{key: k}
				rows[k] = r
				keys = append(keys, k)
			}
			r.errs += e
			r.words += len(ref)
			total.errs += e
			total.words += len(ref)
			if e > 0 && len(r.examples) < 3 {
				r.examples = append(r.examples, fmt.Sprintf("%q -> %q", cl.text, got[i]))
			}
		}
		sort.Strings(keys)
		fmt.Printf("%s %s (%s)\n", name, info.Version, identitySummary(info.Identity))
		fmt.Printf("  %-22s %6s %s\n", "voice", "WER", "errors/words")
		for _, k := range keys {
			r := rows[k]
			fmt.Printf("  %-22s %6.3f %d/%d\n", k, float64(r.errs)/float64(r.words), r.errs, r.words)
		}
		fmt.Printf("  %-22s %6.3f %d/%d\n", "all", float64(total.errs)/float64(total.words), total.errs, total.words)
		fmt.Printf("  CPU %.1f s for %.1f s of audio: %.3f CPU-s per audio-s (%.1f s wall, 2 clips at a time)\n", cpu, audioS, cpu/audioS, wall.Seconds())
		for _, k := range keys {
			for _, ex := range rows[k].examples {
				fmt.Printf("    %s: %s\n", k, ex)
			}
		}
		fmt.Println()
	}
}

// transcribeAll transcribes every clip, two at a time (the machine's two cores), and
// returns each transcript and error by index.
func transcribeAll(ctx context.Context, asr sdk.ASR, audios []sdk.Audio) ([]string, []error) {
	got := make([]string, len(audios))
	errs := make([]error, len(audios))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				got[i], errs[i] = asr.Transcribe(ctx, audios[i], "")
			}
		}()
	}
	for i := range audios {
		next <- i
	}
	close(next)
	wg.Wait()
	return got, errs
}

func identitySummary(id map[string]string) string {
	var parts []string
	for _, k := range []string{"model", "library", "compute_type", "search"} {
		if v := id[k]; v != "" {
			parts = append(parts, k+" "+v)
		}
	}
	return strings.Join(parts, ", ")
}
