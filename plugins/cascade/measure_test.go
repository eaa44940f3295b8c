package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/plugins/pocketsphinx/sphinx"
)

// The measurements behind asr.go's settings (README.md, "Listening"): every turn clip of
// a built dataset (DUPLEXMPE_MEASURE_DATASET, a build directory; by default the shipped
// one, build/datasets/shipped; clips are resampled to the cascade's 16 kHz) is
// decoded whole by the library's default two-pass search, the reference, and by each
// setting of DUPLEXMPE_MEASURE_SEARCH, a ';'-separated list of PocketSphinx flag and
// value pairs, where "kws T" is the spotter for "aria" at threshold T:
//
//	DUPLEXMPE_MEASURE_SEARCH='-maxhmmpf 3000 -maxwpf 5;kws 1e-5 -ds 2' \
//	  go test ./plugins/cascade -run TestMeasureSearch -v -timeout 60m
//
// For each it logs CPU seconds per second of speech and, for a full search, how many
// name-policy decisions agree with the reference's and the share of words that differ;
// for a spotter, how many turns it fires on and whether it misses one the reference
// addresses. DUPLEXMPE_MEASURE_TURNS=aria keeps only turns whose text names Aria;
// DUPLEXMPE_MEASURE_REF=text takes the written text as the reference instead of
// decoding it (for spotters: which turns are addressed by name as written).
type exTurn struct {
	Speaker, Text, Label, Clip string
}
type exScen struct {
	ScenarioID string `json:"scenario_id"`
	Condition  string
	Turns      []exTurn
}

func exClips(t *testing.T) ([]exTurn, [][]float32) {
	dir := "../../build/datasets/shipped/"
	if d := os.Getenv("DUPLEXMPE_MEASURE_DATASET"); d != "" {
		dir = strings.TrimSuffix(d, "/") + "/"
	}
	raw, err := os.ReadFile(dir + "scenarios.jsonl")
	if err != nil {
		t.Skipf("%v (build it: duplexmpe build bench.hcl)", err)
	}
	var turns []exTurn
	var clips [][]float32
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var s exScen
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatal(err)
		}
		for _, tn := range s.Turns {
			p, err := audio.ReadWAV(dir + tn.Clip)
			if err != nil {
				t.Fatal(err)
			}
			p = audio.Resample(p, rate)
			if os.Getenv("DUPLEXMPE_MEASURE_TURNS") == "aria" && !strings.Contains(strings.ToLower(tn.Text), "aria") {
				continue
			}
			turns = append(turns, tn)
			clips = append(clips, p.Samples)
		}
	}
	return turns, clips
}

func TestMeasureSearch(t *testing.T) {
	if os.Getenv("DUPLEXMPE_MEASURE_SEARCH") == "" {
		t.Skip("set DUPLEXMPE_MEASURE_SEARCH to measure search settings (minutes per setting)")
	}
	turns, clips := exClips(t)
	var total float64
	for _, c := range clips {
		total += float64(len(c)) / rate
	}
	ref, err := sphinx.Load(sphinx.DefaultModel())
	if err != nil {
		t.Fatal(err)
	}
	refText := make([]string, len(clips))
	c0 := cpuSeconds(syscall.RUSAGE_SELF)
	for i, c := range clips {
		if os.Getenv("DUPLEXMPE_MEASURE_REF") == "text" {
			refText[i] = strings.ToLower(turns[i].Text)
			continue
		}
		refText[i], _ = ref.Transcribe(c)
	}
	t.Logf("reference two-pass: %.3f cpu s/s over %.0f s", (cpuSeconds(syscall.RUSAGE_SELF)-c0)/total, total)
	refAddr := make([]bool, len(clips))
	for i := range clips {
		refAddr[i] = addressedByName(refText[i], defaultNames)
	}
	configs := strings.Split(os.Getenv("DUPLEXMPE_MEASURE_SEARCH"), ";")
	for _, cfg := range configs {
		if f := strings.Fields(cfg); len(f) == 2 && f[0] == "cascade" {
			var threshold float64
			fmt.Sscan(f[1], &threshold)
			measureCascade(t, cfg, threshold, turns, clips, refAddr, total)
			continue
		}
		m := sphinx.DefaultModel()
		f := strings.Fields(cfg)
		for len(f) > 0 {
			switch f[0] {
			case "fast":
				m.Fast = true
				f = f[1:]
			case "kws":
				m.Keyphrase = "aria"
				fmt.Sscan(f[1], &m.KWSThreshold)
				f = f[2:]
			case "phrase": // another keyphrase than "aria", in CMUdict words: phrase area 1e-5
				m.Keyphrase = strings.ReplaceAll(f[1], "_", " ")
				fmt.Sscan(f[2], &m.KWSThreshold)
				f = f[3:]
			default:
				m.Options = append(m.Options, f[0], f[1])
				f = f[2:]
			}
		}
		d, err := sphinx.Load(m)
		if err != nil {
			t.Fatal(err)
		}
		c0 := cpuSeconds(syscall.RUSAGE_SELF)
		got := make([]string, len(clips))
		for i, c := range clips {
			got[i], _ = d.Transcribe(c)
		}
		cpu := (cpuSeconds(syscall.RUSAGE_SELF) - c0) / total
		var agree, fired, firedRef, missRef, wordsErr, nwords int
		var firedS float64
		for i := range clips {
			if m.Keyphrase != "" {
				if got[i] != "" {
					fired++
					firedS += float64(len(clips[i])) / rate
				}
				if refAddr[i] {
					if got[i] != "" {
						firedRef++
					} else {
						missRef++
						t.Logf("  [%s] kws missed addressed %s %q -> %q", cfg, turns[i].Label, turns[i].Text, refText[i])
					}
				}
				continue
			}
			a := addressedByName(got[i], defaultNames)
			if a == refAddr[i] {
				agree++
			} else {
				t.Logf("  [%s] decision differs %s %q: ref %q -> %q", cfg, turns[i].Label, turns[i].Text, refText[i], got[i])
			}
			rw := strings.Fields(refText[i])
			wordsErr += exWordErrors(rw, strings.Fields(got[i]))
			nwords += len(rw)
		}
		if m.Keyphrase != "" {
			t.Logf("%-40s cpu %.3f s/s  fired %d/%d (%.0f s)  on ref-addressed %d, missed %d", cfg, cpu, fired, len(clips), firedS, firedRef, missRef)
		} else {
			t.Logf("%-40s cpu %.3f s/s  decisions agree %d/%d  word diff vs ref %.3f", cfg, cpu, agree, len(clips), float64(wordsErr)/float64(nwords))
		}
		d.Close()
	}
	n := 0
	for i := range clips {
		if refAddr[i] {
			n++
		}
	}
	t.Logf("reference addressed: %d of %d", n, len(clips))
}

func exWordErrors(ref, hyp []string) int {
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

func measureCascade(t *testing.T, cfg string, threshold float64, turns []exTurn, clips [][]float32, refAddr []bool, total float64) {
	spot, err := sphinx.Load(spotterModel(defaultSpot, threshold))
	if err != nil {
		t.Fatal(err)
	}
	defer spot.Close()
	dec, err := sphinx.Load(transcriberModel())
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	type tally struct{ n, refYes, gotYes, agree int }
	byLabel := map[string]*tally{}
	var fired int
	var firedS float64
	c0 := cpuSeconds(syscall.RUSAGE_SELF)
	for i, c := range clips {
		hits, err := spot.TranscribeWords(c)
		if err != nil {
			t.Fatal(err)
		}
		text := ""
		if len(hits) > 0 {
			fired++
			firedS += float64(len(c)) / rate
			ws, err := dec.TranscribeWords(c)
			if err != nil {
				t.Fatal(err)
			}
			text = nameWhereSpotted(ws, hits, defaultSpot)
		}
		got := addressedByName(text, defaultNames)
		tl := byLabel[turns[i].Label]
		if tl == nil {
			tl = &tally{}
			byLabel[turns[i].Label] = tl
		}
		tl.n++
		if refAddr[i] {
			tl.refYes++
		}
		if got {
			tl.gotYes++
		}
		if got == refAddr[i] {
			tl.agree++
		} else {
			t.Logf("  [%s] decision differs %s %q -> %q", cfg, turns[i].Label, turns[i].Text, text)
		}
	}
	t.Logf("%-40s cpu %.3f s/s  spotter fired on %d/%d clips (%.0f of %.0f s)", cfg, (cpuSeconds(syscall.RUSAGE_SELF)-c0)/total, fired, len(clips), firedS, total)
	labels := make([]string, 0, len(byLabel))
	for l := range byLabel {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, l := range labels {
		tl := byLabel[l]
		t.Logf("  %-5s %4d clips: addressed %3d by the reference, %3d by the cascade, %3d decisions agree", l, tl.n, tl.refYes, tl.gotYes, tl.agree)
	}
}

// TestMeasureWakeSpellings measures the wake spotter (README.md, "The pad and the wake
// word") on a
// built dataset's turns (DUPLEXMPE_MEASURE_DATASET), each cut into utterances by the
// cascade's own Silero settings and heard with utterancePad on each side: how often it
// fires on the first utterance of a turn that opens with "Aria", per speaker, and on the
// utterances of N1-N3 and N4_R turns that do not name her (all, and those up to
// wakeMaxSeconds).
// DUPLEXMPE_MEASURE_WAKE is a ';'-separated list of settings, each pronunciations
// separated by '|' and an optional "@threshold"; DUPLEXMPE_MEASURE_PAD sets the pad
// (seconds) instead of utterancePad:
//
//	DUPLEXMPE_MEASURE_WAKE='AA R IY AH;AA R IY AH|AY IY IH|OW IY IH@1e-5' \
//	  go test ./plugins/cascade -run TestMeasureWakeSpellings -v -timeout 60m
func TestMeasureWakeSpellings(t *testing.T) {
	if os.Getenv("DUPLEXMPE_MEASURE_WAKE") == "" {
		t.Skip("set DUPLEXMPE_MEASURE_WAKE to measure wake spotters (about a minute each)")
	}
	turns, clips := exClips(t)
	det, err := vad.Open(vad.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer det.Close()
	s, _ := parseSettings(map[string]any{})
	pad := utterancePad
	if p := os.Getenv("DUPLEXMPE_MEASURE_PAD"); p != "" {
		fmt.Sscan(p, &pad)
	}
	type cut struct {
		speaker string
		named   bool // the turn opens with the name: only its first utterance is kept
		short   bool
		samples []float32
	}
	var cuts []cut
	for i, c := range clips {
		text := strings.ToLower(turns[i].Text)
		named := strings.HasPrefix(text, "aria")
		if !named && (strings.Contains(text, "aria") || !strings.HasPrefix(turns[i].Label, "N") || turns[i].Label == "N4_Q") {
			continue
		}
		around := make([]float32, rate)
		in := append(append(append([]float32{}, around...), c...), around...)
		on, err := det.NewOnline(s.vad)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j+frameSize <= len(in); j += frameSize {
			on.Push(in[j : j+frameSize])
		}
		eps := on.Episodes()
		on.Close()
		for k, ep := range eps {
			if named && k > 0 {
				break
			}
			a, e := heardSpan(ep, pad, len(in))
			cuts = append(cuts, cut{turns[i].Speaker, named, ep.Duration() <= wakeMaxSeconds, in[a:e]})
		}
	}
	for _, cfg := range strings.Split(os.Getenv("DUPLEXMPE_MEASURE_WAKE"), ";") {
		threshold := defaultWakeThreshold
		if at := strings.LastIndex(cfg, "@"); at >= 0 {
			fmt.Sscan(cfg[at+1:], &threshold)
			cfg = cfg[:at]
		}
		d, dir, err := loadWakeSpotter("aria", strings.Split(cfg, "|"), threshold)
		if err != nil {
			t.Fatal(err)
		}
		fired, named := map[string]int{}, map[string]int{}
		var other, otherFired, short, shortFired int
		for _, c := range cuts {
			hits, err := d.TranscribeWords(c.samples)
			if err != nil {
				t.Fatal(err)
			}
			if c.named {
				named[c.speaker]++
				if len(hits) > 0 {
					fired[c.speaker]++
				}
				continue
			}
			other++
			if c.short {
				short++
			}
			if len(hits) > 0 {
				otherFired++
				if c.short {
					shortFired++
				}
			}
		}
		d.Close()
		os.RemoveAll(dir)
		var per []string
		for _, sp := range []string{"A", "B", "C", "D"} {
			per = append(per, fmt.Sprintf("%s %d/%d", sp, fired[sp], named[sp]))
		}
		t.Logf("pad %g  %-40s @%g  name heard: %s;  fired on other utterances %d/%d, short ones %d/%d", pad, cfg, threshold, strings.Join(per, " "), otherFired, other, shortFired, short)
	}
}
