// Command benchscale is `make bench-scale`: how the harness grows with a run. It
// generates the paper's 2,000-pair procedural script set (core/construct), synthesises
// the conversations of the largest slice with flite (all of them with -synth-all),
// then, for growing slices of it, plays the silent baseline with `duplexmpe run
// --no-score` and scores it with `duplexmpe score`, each a process of its own, and
// reports per conversation: the disk of the run directory, the host CPU (getrusage:
// user + system of duplexmpe and the plugins it reaped, never wall time) and the peak
// resident memory. It fails when the peak memory of the largest slice is more than 10%
// above the smallest's. Figures go to docs/scale.md; scale.json keeps them.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/store"
)

func main() {
	var (
		out      = flag.String("out", "build/bench-scale", "working directory (datasets, runs, scale.json)")
		bin      = flag.String("bin", "bin", "directory of duplexmpe and plugins/")
		pairs    = flag.Int("pairs", 2000, "pairs the procedural generator writes")
		slices   = flag.String("slices", "100,300,1000", "conversations per slice, growing")
		conc     = flag.Int("concurrency", 1, "conversations played at once")
		synthAll = flag.Bool("synth-all", false, "synthesise every conversation of the script set, not only the largest slice")
		compact  = flag.String("compact", "", "instead: measure what the FLAC store changes on this run directory (float32 audible.wav)")
		runFile  = flag.String("run-file", "", "with -compact: the run file whose asr and judge score both copies")
	)
	flag.Parse()
	if *compact != "" {
		if err := compactCheck(*compact, *runFile, *out, *bin); err != nil {
			fmt.Fprintln(os.Stderr, "bench-scale:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*out, *bin, *pairs, *slices, *conc, *synthAll); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(1)
	}
}

// Measure is one process's cost.
type Measure struct {
	CPUSeconds  float64 `json:"cpu_s"`        // user + system, with reaped children
	PeakRSSMiB  float64 `json:"peak_rss_mib"` // the largest of the process and its reaped children
	WallSeconds float64 `json:"wall_s"`       // for people only
}

// Slice is what one slice cost.
type Slice struct {
	Conversations int     `json:"conversations"`
	AudioHours    float64 `json:"played_audio_hours"`
	Play          Measure `json:"play"`
	Score         Measure `json:"score"`
	RunDirBytes   int64   `json:"run_dir_bytes"`
	AudioBytes    int64   `json:"audio_bytes"`
	Per           struct {
		DiskBytes  float64 `json:"disk_bytes"`
		AudioBytes float64 `json:"audio_bytes"`
		PlayCPU    float64 `json:"play_cpu_s"`
		ScoreCPU   float64 `json:"score_cpu_s"`
	} `json:"per_conversation"`
}

// resultsFile keeps the figures in the working directory (not a run directory's
// results.json: store.ResultsJSONFile).
const resultsFile = "scale.json"

// Results is scale.json.
type Results struct {
	Pairs, Conversations int
	GenerateCPUSeconds   float64 `json:"generate_cpu_s"`
	Turns                int     `json:"turns"`
	DistinctClips        int     `json:"distinct_clips"`
	Synth                struct {
		Conversations int     `json:"conversations"`
		Clips         int     `json:"clips"`
		Measure       Measure `json:"measure"`
	} `json:"synthesis"`
	Slices        []Slice `json:"slices"`
	MemoryRatio   float64 `json:"peak_rss_ratio_largest_to_smallest"`
	CPUPerConvRat float64 `json:"play_cpu_per_conversation_ratio_largest_to_smallest"`
}

func run(out, bin string, pairs int, sliceList string, conc int, synthAll bool) error {
	var sizes []int
	for _, s := range strings.Split(sliceList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 2 || n%2 != 0 {
			return fmt.Errorf("-slices %q: want even conversation counts (whole pairs)", sliceList)
		}
		sizes = append(sizes, n)
	}
	sort.Ints(sizes)
	out, _ = filepath.Abs(out)
	bin, _ = filepath.Abs(bin)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var res Results
	res.Pairs = pairs

	// The whole script set, as the paper's dataset block generates it.
	var before syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	scs, err := construct.Generate(construct.GenerateSpec{Pairs: pairs, Seed: 1, FourSpeakerShare: 0.25})
	if err != nil {
		return err
	}
	var after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	res.GenerateCPUSeconds = cpu(after) - cpu(before)
	res.Conversations = len(scs)
	clips := map[string]bool{}
	for _, sc := range scs {
		res.Turns += len(sc.Turns)
		for _, t := range sc.Turns {
			clips[t.Speaker+"\x00"+t.Text] = true
		}
	}
	res.DistinctClips = len(clips)
	if sizes[len(sizes)-1] > len(scs) {
		return fmt.Errorf("the largest slice (%d) is above the %d conversations generated", sizes[len(sizes)-1], len(scs))
	}
	fmt.Printf("generated %d pairs (%d conversations, %d turns, %d distinct clips) in %.2f s of CPU\n",
		pairs, len(scs), res.Turns, res.DistinctClips, res.GenerateCPUSeconds)

	// Synthesise once, into the largest slice's dataset (or the whole set's); the
	// smaller slices link its clips and so reuse them.
	synthN := sizes[len(sizes)-1]
	if synthAll {
		synthN = len(scs)
	}
	synthDir := filepath.Join(out, fmt.Sprintf("slice-%d", synthN))
	if err := writeSlice(out, bin, synthN, scs, conc); err != nil {
		return err
	}
	m, err := measure(filepath.Join(out, "synth.log"), filepath.Join(bin, "duplexmpe"), "build", filepath.Join(synthDir, "run.hcl"))
	if err != nil {
		return fmt.Errorf("synthesis: %w (see %s)", err, filepath.Join(out, "synth.log"))
	}
	res.Synth.Conversations, res.Synth.Measure = synthN, m
	res.Synth.Clips = countFiles(filepath.Join(synthDir, "dataset", dataset.ClipsDir))
	fmt.Printf("synthesised %d conversations (%d clips in the cache) with flite: %.0f s CPU, %.0f s wall, peak %.0f MiB\n",
		synthN, res.Synth.Clips, m.CPUSeconds, m.WallSeconds, m.PeakRSSMiB)

	for _, n := range sizes {
		dir := filepath.Join(out, fmt.Sprintf("slice-%d", n))
		if n != synthN {
			if err := writeSlice(out, bin, n, scs, conc); err != nil {
				return err
			}
			if err := linkClips(filepath.Join(synthDir, "dataset"), filepath.Join(dir, "dataset")); err != nil {
				return err
			}
			if _, err := measure(filepath.Join(dir, "build.log"), filepath.Join(bin, "duplexmpe"), "build", filepath.Join(dir, "run.hcl")); err != nil {
				return fmt.Errorf("slice %d: build: %w", n, err)
			}
		}
		runDir := filepath.Join(dir, "run")
		os.RemoveAll(runDir) // every slice is played from nothing
		var sl Slice
		sl.Conversations = n
		if sl.Play, err = measure(filepath.Join(dir, "play.log"), filepath.Join(bin, "duplexmpe"), "run", "--no-score", filepath.Join(dir, "run.hcl")); err != nil {
			return fmt.Errorf("slice %d: play: %w (see %s)", n, err, filepath.Join(dir, "play.log"))
		}
		if sl.Score, err = measure(filepath.Join(dir, "score.log"), filepath.Join(bin, "duplexmpe"), "score", runDir); err != nil {
			return fmt.Errorf("slice %d: score: %w (see %s)", n, err, filepath.Join(dir, "score.log"))
		}
		sl.RunDirBytes, sl.AudioBytes, sl.AudioHours, err = runDirSize(runDir)
		if err != nil {
			return err
		}
		f := float64(n)
		sl.Per.DiskBytes, sl.Per.AudioBytes = float64(sl.RunDirBytes)/f, float64(sl.AudioBytes)/f
		sl.Per.PlayCPU, sl.Per.ScoreCPU = sl.Play.CPUSeconds/f, sl.Score.CPUSeconds/f
		res.Slices = append(res.Slices, sl)
		fmt.Printf("slice %5d: %.2f h of audio; play %.0f s CPU (%.3f s each), peak %.0f MiB, %.0f s wall; score %.0f s CPU (%.3f each), peak %.0f MiB; disk %.1f KB each (%.1f KB audio)\n",
			n, sl.AudioHours, sl.Play.CPUSeconds, sl.Per.PlayCPU, sl.Play.PeakRSSMiB, sl.Play.WallSeconds,
			sl.Score.CPUSeconds, sl.Per.ScoreCPU, sl.Score.PeakRSSMiB, sl.Per.DiskBytes/1e3, sl.Per.AudioBytes/1e3)
	}
	first, last := res.Slices[0], res.Slices[len(res.Slices)-1]
	peak := func(s Slice) float64 { return max(s.Play.PeakRSSMiB, s.Score.PeakRSSMiB) }
	res.MemoryRatio = peak(last) / peak(first)
	res.CPUPerConvRat = last.Per.PlayCPU / first.Per.PlayCPU
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(filepath.Join(out, resultsFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("peak memory, %d vs %d conversations: %.3f (flat within 10%%: %v); play CPU per conversation: %.3f\n",
		last.Conversations, first.Conversations, res.MemoryRatio, res.MemoryRatio <= 1.10, res.CPUPerConvRat)
	fmt.Printf("results: %s\n", filepath.Join(out, resultsFile))
	if res.MemoryRatio > 1.10 {
		return fmt.Errorf("peak memory grew by %.0f%% from %d to %d conversations", 100*(res.MemoryRatio-1), first.Conversations, last.Conversations)
	}
	return nil
}

func cpu(r syscall.Rusage) float64 {
	return float64(r.Utime.Sec+r.Stime.Sec) + float64(r.Utime.Usec+r.Stime.Usec)/1e6
}

// measure runs one command to its end, its output into logPath, and returns what it
// cost from wait4's rusage.
func measure(logPath, name string, args ...string) (Measure, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return Measure{}, err
	}
	defer log.Close()
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	began := time.Now()
	err = cmd.Run()
	m := Measure{WallSeconds: time.Since(began).Seconds()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru != nil {
		m.CPUSeconds = cpu(*ru)
		m.PeakRSSMiB = float64(ru.Maxrss) / 1024 // Linux: KiB
	}
	return m, err
}

// writeSlice writes the first n conversations (n/2 whole pairs) as a scenario set, and
// a run file that synthesises them and plays the silent baseline.
func writeSlice(out, bin string, n int, scs []dataset.Scenario, conc int) error {
	dir := filepath.Join(out, fmt.Sprintf("slice-%d", n))
	plugin := func(name string) string { return filepath.Join(bin, "plugins", name) }
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		return err
	}
	jsonl, err := dataset.MarshalScenarios(scs[:n])
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts", dataset.ScenariosFile), jsonl, 0o644); err != nil {
		return err
	}
	hcl := fmt.Sprintf(`# Written by make bench-scale: the first %d conversations of the 2,000-pair
# procedural set, and the silent baseline.
plugin "flite" {
  source = %q
}
plugin "silent" {
  source = %q
}
plugin "pocketsphinx" {
  source = %q
}
plugin "lexical" {
  source = %q
}
dataset "slice" {
  scenarios = "scripts"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  preamble  = "default"
  out       = "dataset"
}
evaluation "silent" {
  dataset     = dataset.slice
  models      = [plugin.silent]
  asr         = plugin.pocketsphinx
  judge       = plugin.lexical
  concurrency = %d
  out         = "run"
}
`, n, plugin("flite"), plugin("silent"), plugin("pocketsphinx"), plugin("lexical-judge"), conc)
	return os.WriteFile(filepath.Join(dir, "run.hcl"), []byte(hcl), 0o644)
}

// linkClips hard links every cached clip of src into dst, so that building dst
// synthesises nothing that src already has.
func linkClips(src, dst string) error {
	from, to := filepath.Join(src, dataset.ClipsDir), filepath.Join(dst, dataset.ClipsDir)
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range ents {
		t := filepath.Join(to, e.Name())
		if _, err := os.Stat(t); err == nil {
			continue
		}
		if err := os.Link(filepath.Join(from, e.Name()), t); err != nil {
			return err
		}
	}
	return nil
}

func countFiles(dir string) int {
	ents, _ := os.ReadDir(dir)
	return len(ents)
}

// runDirSize sums the bytes of a run directory's files (as stored, not as allocated),
// those of the audio files, and the hours of audio the model played (frames in
// session.json).
func runDirSize(dir string) (total, audioBytes int64, hours float64, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		switch d.Name() {
		case store.AudibleFLAC, store.AudibleWAV:
			audioBytes += info.Size()
		case store.SessionFile:
			var s store.SessionInfo
			if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &s) == nil && s.Format.InputRate > 0 {
				hours += float64(s.Frames*s.Format.FrameSize) / float64(s.Format.InputRate) / 3600
			}
		}
		return nil
	})
	return total, audioBytes, hours, err
}
