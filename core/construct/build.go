package construct

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/progress"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// DefaultVoices maps speakers to flite voices (the embedded TTS).
var DefaultVoices = map[string]string{"A": "kal16", "B": "awb", "C": "rms", "D": "slt"}

// DefaultLoudness is the integrated loudness (LUFS, ITU-R BS.1770 / EBU R128) every clip
// is normalised to, so that level tells no speaker from another: EBU R128's programme
// target.
const DefaultLoudness = -23.0

// DefaultPreambleVoice speaks the duty preamble when neither the build nor its voice map
// names one.
const DefaultPreambleVoice = "slt"

// DefaultPreamble is the spoken duty instruction played before every conversation: who
// Aria is, when to answer, when to stay silent, and to stop when someone else answers.
// It is our own text.
const DefaultPreamble = "Hello, Aria. You are a voice assistant in a room with several people " +
	"who are talking among themselves. Listen to the whole conversation. Answer only when " +
	"someone asks you something, by your name or by making it clear that the question is " +
	"meant for you, and keep your answer short. When people talk to each other, speak to " +
	"another device, think out loud, or only mention you, stay silent. If someone asks you " +
	"a question and another person answers it first, or the asker says never mind, stop " +
	"talking right away."

// BuildSpec is everything a build needs besides the TTS itself.
type BuildSpec struct {
	Name      string
	Out       string             // the dataset directory
	Scenarios []dataset.Scenario // the scripts, already written
	Generator dataset.Generator
	TTS       dataset.TTSInfo // identity of the synthesiser; part of every clip's key
	// Voices maps speakers to voice ids; missing speakers take DefaultVoices.
	Voices map[string]string
	// VoicePool, when set, replaces Voices: each pair's speakers get voices drawn from it
	// (DrawVoices), and PreambleVoice, a voice outside the pool, is required.
	VoicePool *dataset.VoicePool
	// Preamble is the duty text; empty means DefaultPreamble. PreambleVoice empty means
	// the voice Voices gives speaker D, else speaker A, else DefaultPreambleVoice: a
	// TTS other than flite then needs no voice named like a flite one.
	Preamble      string
	PreambleVoice string
	// SampleRate of every clip; 0 means the rate the TTS reports for speaker A's voice.
	SampleRate int
	// Loudness is the integrated loudness in LUFS every clip (the preamble included) is
	// normalised to; 0 means DefaultLoudness. It is part of every clip's key.
	Loudness float64
	// Workers synthesising at once; 0 means one per CPU core.
	Workers int
	// Pairs, when above 0 and below the set's pairs, builds only the first Pairs pairs
	// (in the order the pairs first appear; both versions of each) and the preamble: a
	// partial build for `run --limit`. Voices are still drawn over the whole set and
	// clips are keyed as in a full build, so a later full build reuses every clip, and
	// the pairs built are the same items. A partial build leaves the set's
	// scenarios.jsonl, dataset.json and clips.sha256 as they are and writes the pairs
	// it built to dataset.PartialScenariosFile.
	Pairs int
	// Room, when set, builds the set under an acoustic condition (room.go): every turn's
	// clip is its dry clip through the impulse response of the speaker's seat, and a
	// background loop plays under the conversations. The dry clips stay in the set too,
	// keyed as in a clean build, so a clean build's clips copied in are reused.
	Room *RoomSpec
	// ReuseFrom are other built sets whose clips this build copies instead of making
	// them again (a room build names the clean build of the same scenarios): a clip is
	// taken when the other set's clips.sha256 lists it and its bytes match.
	ReuseFrom []string
}

// Report says what a build did.
type Report struct {
	Clips       int // distinct clips, preamble included
	Synthesised int // clips the TTS made for this build (Rebuilt included)
	// Simulated is the clips this build made from other clips, not by the TTS: a room's
	// turns through their impulse responses, and its background loop.
	Simulated int
	Reused    int // clips found in the cache, checked
	// Limited counts the clips made by this build that stay below the loudness target
	// because reaching it would have clipped them (their peak is held at -0.5 dBFS).
	Limited int
	// Rebuilt says, one line each, which clips were found damaged (another format,
	// other content than the build wrote, cut short) and synthesised again.
	Rebuilt []string
	// Pairs is the pairs of the whole set; Built the pairs this build made (fewer
	// when BuildSpec.Pairs limited it).
	Pairs, Built int
}

// ClipKey is the content address of a clip: what the TTS was, the voice, the text and
// the sample rate. Equal keys mean interchangeable audio.
func ClipKey(tts dataset.TTSInfo, voice, text string, rate int) string {
	h := sha256.New()
	fmt.Fprintf(h, "duplexmpe-clip-v1\x00%s\x00%s\x00", tts.Name, tts.Version)
	for _, k := range dataset.SortedKeys(tts.Identity) {
		fmt.Fprintf(h, "%s=%s\x00", k, tts.Identity[k])
	}
	fmt.Fprintf(h, "%s\x00%d\x00%s", voice, rate, text)
	return hex.EncodeToString(h.Sum(nil))
}

// ClipKeyLoudness is the content address of a clip normalised to lufs: ClipKey's
// fields and the target, so clips of another target, or none, are never reused.
func ClipKeyLoudness(tts dataset.TTSInfo, voice, text string, rate int, lufs float64) string {
	h := sha256.New()
	fmt.Fprintf(h, "duplexmpe-clip-v2\x00loudness=%s\x00%s", strconv.FormatFloat(lufs, 'f', -1, 64), ClipKey(tts, voice, text, rate))
	return hex.EncodeToString(h.Sum(nil))
}

// ClipRel is a clip's path relative to the dataset directory.
func ClipRel(key string) string { return dataset.ClipsDir + "/" + key + ".wav" }

type clipJob struct {
	voice, text, rel string
	preamble         bool
	bed              bool    // a room's background loop
	loudness         float64 // the clip's own loudness target (the bed's); 0: the set's
	duration         float64
	sum              string // SHA-256 of the file as written, hex
	// recorded is what the last build said about the clip: its SHA-256 (clips.sha256)
	// and duration (scenarios.jsonl); empty or 0 when it did not.
	recordedSum      string
	recordedDuration float64
	damage           string // why the clip on disk was not reused; empty when it was fine or absent
	limited          bool   // made below the loudness target, so as not to clip
	// make, when set, makes the clip instead of the TTS (a room's clips and its bed,
	// from dry clips already made).
	make func() (audio.PCM, error)
	// from is the same clip in a set of BuildSpec.ReuseFrom, with its recorded hash.
	from, fromSum string
}

// Build synthesises every turn of spec.Scenarios (one clip per distinct voice and text,
// so a turn identical in both versions of a pair is made once) and the preamble, then
// writes the dataset. Clips already in spec.Out/clips are reused, so a rebuild
// synthesises nothing, and an interrupted build keeps every clip it finished: clips are
// written atomically, and scenarios.jsonl and dataset.json only after all clips exist.
// The scripts are validated first; a set with violations is refused.
//
// count (nil: none) is started with the number of distinct clips and counts each
// one as it is reused from the cache or synthesised now.
func Build(ctx context.Context, spec BuildSpec, tts sdk.TTS, count *progress.Counter) (*dataset.Dataset, Report, error) {
	var rep Report
	if spec.Out == "" {
		return nil, rep, errors.New("build: no output directory")
	}
	if len(spec.Scenarios) == 0 {
		return nil, rep, errors.New("build: no scenarios")
	}
	if vs := validateScripts(spec.Scenarios); len(vs) > 0 {
		return nil, rep, violationsError(vs)
	}
	voices := map[string]string{}
	for k, v := range DefaultVoices {
		voices[k] = v
	}
	for k, v := range spec.Voices {
		voices[k] = v
	}
	preamble := spec.Preamble
	if preamble == "" {
		preamble = DefaultPreamble
	}
	pvoice := preambleVoice(spec)
	// voiceOf is the voice of a speaker of a scenario: the fixed map's, or its pair's draw.
	voiceOf := func(s dataset.Scenario, sp string) (string, bool) { v, ok := voices[sp]; return v, ok }
	var pairVoices map[string]map[string]string
	if spec.VoicePool != nil {
		if spec.PreambleVoice == "" {
			return nil, rep, errors.New("build: a voice pool needs a narrator, a voice outside the pool")
		}
		if _, in := spec.VoicePool.F0[spec.PreambleVoice]; in {
			return nil, rep, fmt.Errorf("build: the narrator %s is in the voice pool; the preamble would sound like one of the people: choose a voice outside it", spec.PreambleVoice)
		}
		drawn, err := DrawVoices(spec.Scenarios, *spec.VoicePool)
		if err != nil {
			return nil, rep, fmt.Errorf("build: %w", err)
		}
		pairVoices, voices = drawn, nil
		voiceOf = func(s dataset.Scenario, sp string) (string, bool) { v, ok := pairVoices[s.PairID][sp]; return v, ok }
	}
	if n := utf8.RuneCountInString(preamble); n > dataset.MaxPreambleText {
		return nil, rep, fmt.Errorf("build: the preamble has %d characters; it has at most %d: shorten it", n, dataset.MaxPreambleText)
	}

	// Every voice the build needs must exist.
	available, err := tts.Voices(ctx)
	if err != nil {
		return nil, rep, fmt.Errorf("build: listing the TTS voices: %w", err)
	}
	rates := map[string]int{}
	for _, v := range available {
		rates[v.ID] = v.Rate
	}
	need := map[string]string{pvoice: "the preamble"}
	for _, s := range spec.Scenarios {
		for _, sp := range s.Speakers {
			v, ok := voiceOf(s, sp)
			if !ok {
				return nil, rep, fmt.Errorf("build: scenario %s: speaker %s has no voice; add %s = \"...\" to the dataset's voices", s.ScenarioID, sp, sp)
			}
			need[v] = "speaker " + sp
		}
	}
	for _, v := range dataset.SortedKeys(need) {
		if _, ok := rates[v]; !ok {
			ids := make([]string, 0, len(available))
			for _, a := range available {
				ids = append(ids, a.ID)
			}
			return nil, rep, fmt.Errorf("build: voice %q (for %s) is not offered by TTS %s; available: %s", v, need[v], spec.TTS.Plugin, strings.Join(ids, ", "))
		}
	}
	rate, rateVoice := spec.SampleRate, voices["A"]
	if spec.VoicePool != nil {
		rateVoice = pvoice // the narrator's rate: no speaker has one voice
	}
	if rate == 0 {
		rate = rates[rateVoice]
	}
	if rate <= 0 {
		return nil, rep, fmt.Errorf("build: TTS %s reports no sample rate for voice %q; set the dataset's sample rate", spec.TTS.Plugin, rateVoice)
	}

	lufs := spec.Loudness
	if lufs == 0 {
		lufs = DefaultLoudness
	}
	if lufs < -70 || lufs > -5 || math.IsNaN(lufs) {
		return nil, rep, fmt.Errorf("build: loudness %g LUFS is outside [-70, -5]", lufs)
	}

	// The pairs to build: all, or the first spec.Pairs.
	all := spec.Scenarios
	scenarios, pairs := FirstPairs(all, spec.Pairs)
	rep.Pairs, rep.Built = pairs, len(scenarioPairs(scenarios))
	partial := rep.Built < pairs

	// Distinct clips, in a stable order.
	jobs := map[string]*clipJob{}
	var order []string
	addJob := func(voice, text string) string {
		key := ClipKeyLoudness(spec.TTS, voice, text, rate, lufs)
		if _, ok := jobs[key]; !ok {
			jobs[key] = &clipJob{voice: voice, text: text, rel: ClipRel(key)}
			order = append(order, key)
		}
		return key
	}
	pkey := addJob(pvoice, preamble)
	jobs[pkey].preamble = true
	keys := make([][]string, len(scenarios))
	for i, s := range scenarios {
		keys[i] = make([]string, len(s.Turns))
		for j, t := range s.Turns {
			v, ok := voiceOf(s, t.Speaker)
			if !ok {
				return nil, rep, fmt.Errorf("build: scenario %s turn %d: speaker %s is not among the scenario's speakers %v, so has no voice", s.ScenarioID, j, t.Speaker, s.Speakers)
			}
			keys[i][j] = addJob(v, t.Text)
		}
	}
	if err := os.MkdirAll(filepath.Join(spec.Out, dataset.ClipsDir), 0o755); err != nil {
		return nil, rep, fmt.Errorf("build: %w", err)
	}
	// What a build killed mid-write left; a build owns its directory while it runs.
	atomicfile.Sweep(spec.Out)
	atomicfile.Sweep(filepath.Join(spec.Out, dataset.ClipsDir))
	// A room: the dry clips (and the babble's lines) first, then each turn through its
	// seat's response, and the background loop.
	var (
		room      *dataset.Room
		roomOrder []string
	)
	if spec.Room != nil {
		room, roomOrder, err = planRoom(ctx, spec, all, scenarios, rate, lufs, voices, keys, jobs, addJob)
		if err != nil {
			return nil, rep, fmt.Errorf("build: %w", err)
		}
	}
	recordPrevious(spec.Out, jobs)
	for _, dir := range spec.ReuseFrom {
		sums, err := dataset.ClipSums(dir)
		if err != nil {
			return nil, rep, fmt.Errorf("build: the set to reuse clips from: %w", err)
		}
		for _, j := range jobs {
			if sum, ok := sums[j.rel]; ok && j.from == "" {
				j.from, j.fromSum = filepath.Join(dir, filepath.FromSlash(j.rel)), sum
			}
		}
	}
	rep.Clips = len(order) + len(roomOrder)
	count.Start(rep.Clips)
	err = runJobs(ctx, spec, tts, rate, lufs, jobs, order, count, &rep)
	if err == nil && len(roomOrder) > 0 {
		err = runJobs(ctx, spec, tts, rate, lufs, jobs, roomOrder, count, &rep)
	}
	for _, key := range order {
		if j := jobs[key]; j.damage != "" && j.sum != "" {
			rep.Rebuilt = append(rep.Rebuilt, fmt.Sprintf("clip %s (%q, voice %s) %s: synthesised it again", j.rel, abbreviate(j.text), j.voice, j.damage))
		}
	}
	if err != nil {
		return nil, rep, err
	}
	if !partial {
		sums := map[string]string{}
		for _, j := range jobs {
			sums[j.rel] = j.sum
		}
		if err := dataset.WriteClipSums(spec.Out, sums); err != nil {
			return nil, rep, fmt.Errorf("build: writing %s: %w", dataset.ClipSumsFile, err)
		}
	}

	scs := make([]dataset.Scenario, len(scenarios))
	for i, s := range scenarios {
		s.Turns = append([]dataset.Turn(nil), s.Turns...)
		for j := range s.Turns {
			job := jobs[keys[i][j]]
			s.Turns[j].Clip, s.Turns[j].DurationS = job.rel, job.duration
		}
		scs[i] = s
	}
	m := dataset.Manifest{
		Name:       spec.Name,
		Version:    dataset.ReleaseLabelOf(spec.Generator.Identity),
		Generator:  spec.Generator,
		TTS:        &spec.TTS,
		Voices:     voices,
		SampleRate: rate,
		VoicePool:  spec.VoicePool,
		PairVoices: pairVoices,
		Loudness:   lufs,
		Preamble:   &dataset.Preamble{Text: preamble, Voice: pvoice, Clip: jobs[pkey].rel, DurationS: jobs[pkey].duration},
		Room:       room,
	}
	if room != nil && room.Background != nil {
		room.Background.DurationS = jobs[bedKeyOf(room)].duration
	}
	save := dataset.Save
	if partial {
		save = dataset.SavePartial
	}
	d, err := save(spec.Out, m, scs)
	if err != nil {
		return nil, rep, fmt.Errorf("build: writing %s: %w", spec.Out, err)
	}
	return d, rep, nil
}

// scenarioPairs is the distinct pairs of scs.
func scenarioPairs(scs []dataset.Scenario) map[string]bool {
	out := map[string]bool{}
	for _, s := range scs {
		out[s.PairID] = true
	}
	return out
}

// FirstPairs is the scenarios of the first n pairs (all when n <= 0), in the order
// the pairs first appear, and the number of pairs in scs: what `run --limit` builds and
// `plan --limit` estimates.
func FirstPairs(scs []dataset.Scenario, n int) ([]dataset.Scenario, int) {
	keep := map[string]bool{}
	var pairs int
	for _, s := range scs {
		if _, seen := keep[s.PairID]; !seen {
			keep[s.PairID] = n <= 0 || pairs < n
			pairs++
		}
	}
	var out []dataset.Scenario
	for _, s := range scs {
		if keep[s.PairID] {
			out = append(out, s)
		}
	}
	return out, pairs
}

func runJobs(ctx context.Context, spec BuildSpec, tts sdk.TTS, rate int, lufs float64, jobs map[string]*clipJob, order []string, count *progress.Counter, rep *Report) error {
	workers := spec.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan *clipJob)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range next {
				made, err := makeClip(ctx, spec.Out, tts, rate, lufs, job)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				if err == nil {
					if made {
						if job.make != nil {
							rep.Simulated++
						} else {
							rep.Synthesised++
						}
						if job.limited {
							rep.Limited++
						}
					} else {
						rep.Reused++
					}
					count.Add(1)
				}
				mu.Unlock()
			}
		}()
	}
	for _, key := range order {
		select {
		case next <- jobs[key]:
			continue
		case <-ctx.Done():
		}
		break
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// recordPrevious fills in what the last build of out recorded about each clip: its
// SHA-256 (clips.sha256) and its duration (scenarios.jsonl, for datasets built before
// the sums were kept). Anything unreadable just records nothing: every clip is still
// checked for its format.
func recordPrevious(out string, jobs map[string]*clipJob) {
	byRel := map[string]*clipJob{}
	for _, j := range jobs {
		byRel[j.rel] = j
	}
	if sums, err := dataset.ClipSums(out); err == nil {
		for rel, sum := range sums {
			if j := byRel[rel]; j != nil {
				j.recordedSum = sum
			}
		}
	}
	d, err := dataset.Load(out)
	if d == nil || err != nil && d.Scenarios == nil {
		return
	}
	for _, s := range d.Scenarios {
		for _, t := range s.Turns {
			if j := byRel[t.Clip]; j != nil && t.DurationS > 0 {
				j.recordedDuration = t.DurationS
			}
		}
	}
	if m := d.Manifest; m != nil && m.Preamble != nil {
		if j := byRel[m.Preamble.Clip]; j != nil && m.Preamble.DurationS > 0 {
			j.recordedDuration = m.Preamble.DurationS
		}
	}
}

// durationTolerance allows for the rounding of duration_s in scenarios.jsonl.
const durationTolerance = 0.0015

// makeClip reuses the clip on disk when it is exactly what a build writes (16-bit PCM
// mono at rate, the bytes the last build recorded, or at least its recorded duration),
// and synthesises it otherwise: a damaged clip is never reused, and never played. It
// reports whether it synthesised.
func makeClip(ctx context.Context, out string, tts sdk.TTS, rate int, lufs float64, job *clipJob) (bool, error) {
	path := filepath.Join(out, filepath.FromSlash(job.rel))
	c, err := dataset.CheckClip(out, path, rate, job.recordedSum)
	if errors.Is(err, fs.ErrNotExist) && job.from != "" {
		// Another set has it: link it in (or copy it), and take it if it is intact.
		if copyClip(job.from, path) == nil {
			if c, err = dataset.CheckClip(out, path, rate, job.fromSum); err != nil {
				os.Remove(path)
				err = fs.ErrNotExist
			}
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		job.damage = "was damaged (" + err.Error() + ")"
	case c.Info.Frames == 0:
		job.damage = "was empty"
	case job.recordedSum == "" && job.recordedDuration > 0 && math.Abs(c.Info.Duration()-job.recordedDuration) > durationTolerance:
		job.damage = fmt.Sprintf("lasted %.3f s, but the last build recorded %.3f s", c.Info.Duration(), job.recordedDuration)
	default:
		job.duration, job.sum = c.Info.Duration(), c.Sum
		return false, nil
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	var pcm audio.PCM
	if job.make != nil {
		if pcm, err = job.make(); err != nil {
			return false, fmt.Errorf("build: %s: %w", job.rel, err)
		}
	} else {
		a, err := tts.Synthesize(ctx, job.text, job.voice)
		if err != nil {
			return false, fmt.Errorf("build: synthesising %q with voice %s: %w", abbreviate(job.text), job.voice, err)
		}
		if len(a.Samples) == 0 || a.Rate <= 0 {
			return false, fmt.Errorf("build: TTS returned no audio for %q (voice %s)", abbreviate(job.text), job.voice)
		}
		pcm = audio.PCM{Samples: a.Samples, Rate: a.Rate}
	}
	if pcm.Rate != rate {
		pcm = audio.Resample(pcm, rate)
	}
	what, limit := "a turn's clip", dataset.MaxClipSeconds
	switch {
	case job.preamble:
		what, limit = "the preamble", dataset.MaxPreambleSeconds
	case job.bed:
		what, limit = "the background loop", BedSeconds+1
	}
	if d := pcm.Duration(); d > limit {
		return false, fmt.Errorf("build: the TTS made a %.1f s clip of %q (voice %s); %s lasts at most %g s: shorten the text, or check the TTS",
			d, abbreviate(job.text), job.voice, what, limit)
	}
	if bad := firstNonFinite(pcm.Samples); bad >= 0 {
		return false, fmt.Errorf("build: the TTS returned a non-finite sample (index %d) for %q (voice %s)", bad, abbreviate(job.text), job.voice)
	}
	// One loudness for every clip, so level is no speaker cue (after resampling: the
	// clip as played is what is measured). The bed has its own target, under the speech.
	target := lufs
	if job.loudness != 0 {
		target = job.loudness
	}
	pcm, _, job.limited = audio.NormalizeLoudness(pcm, target)
	if err := audio.WriteWAV(path, pcm); err != nil {
		return false, fmt.Errorf("build: writing clip: %w", err)
	}
	if c, err = dataset.CheckClip(out, path, rate, ""); err != nil {
		return false, fmt.Errorf("build: the clip just written does not read back: %w", err)
	}
	job.duration, job.sum = c.Info.Duration(), c.Sum
	return true, nil
}

// copyClip puts a hard link to from at to, or a copy where a link cannot be made.
func copyClip(from, to string) error {
	if os.Link(from, to) == nil {
		return nil
	}
	raw, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(to, raw)
}

func firstNonFinite(x []float32) int {
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return i
		}
	}
	return -1
}

func abbreviate(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// validateScripts checks the scripts (not clips) of a set.
func validateScripts(scs []dataset.Scenario) []dataset.Violation {
	d := &dataset.Dataset{Scenarios: make([]dataset.Scenario, len(scs))}
	for i, s := range scs {
		s.Turns = append([]dataset.Turn(nil), s.Turns...)
		for j := range s.Turns {
			s.Turns[j].Clip, s.Turns[j].DurationS = "", 0
		}
		d.Scenarios[i] = s
	}
	return dataset.Validate(d)
}

// ViolationsError is a script set refused for its violations.
type ViolationsError struct{ Violations []dataset.Violation }

func violationsError(vs []dataset.Violation) error { return &ViolationsError{Violations: vs} }

func (e *ViolationsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the scenarios break %d rules; fix them first (duplexmpe dataset validate shows them all):", len(e.Violations))
	vs := append([]dataset.Violation(nil), e.Violations...)
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Line < vs[j].Line })
	for i, v := range vs {
		if i == 10 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(vs)-10)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(v.String())
	}
	return b.String()
}

// preambleVoice is the voice of the duty preamble (see BuildSpec.PreambleVoice).
func preambleVoice(spec BuildSpec) string {
	for _, v := range []string{spec.PreambleVoice, spec.Voices["D"], spec.Voices["A"]} {
		if v != "" {
			return v
		}
	}
	return DefaultPreambleVoice
}
