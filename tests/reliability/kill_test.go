package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// killRunFile is the evaluation the kill trials interrupt: one shipped pair, the silent
// and random-talk baselines (random talk speaks, so transcription and judging run), two
// conversations at once, PocketSphinx and the lexical judge. The dataset is shared
// (built once); each trial has its own run directory.
func killRunFile(t *testing.T, dir, scen, datasetOut string) string {
	t.Helper()
	src := fmt.Sprintf(`
plugin "flite" { source = %q }
plugin "silent" { source = %q }
plugin "random_talk" { source = %q }
plugin "pocketsphinx" {
  source = %q
  config { decoders = 1 }
}
plugin "lexical" { source = %q }

dataset "d" {
  scenarios = %q
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out       = %q
}

evaluation "e" {
  dataset     = dataset.d
  models      = [plugin.silent, plugin.random_talk]
  asr         = plugin.pocketsphinx
  judge       = plugin.lexical
  concurrency = 2
  out         = "runs/e"
}
`, bin(t, "plugins/flite"), bin(t, "plugins/silent"), bin(t, "plugins/random-talk"), bin(t, "plugins/pocketsphinx"),
		bin(t, "plugins/lexical-judge"), scen, datasetOut)
	path := filepath.Join(dir, "run.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// itemFiles are compared byte for byte (session.json without its wall-clock latency).
var itemFiles = []string{"item.json", "timeline.json", "episodes.json", "text.json", "audible.flac", "audible.wav", "verdicts.json", "done"}

// compareRuns counts the reference's items missing from got (or not done there) and
// those whose files differ, and says how.
func compareRuns(ref, got string) (lost, differ int, diffs []string) {
	ids, _ := os.ReadDir(filepath.Join(ref, "items"))
	for _, e := range ids {
		a, b := filepath.Join(ref, "items", e.Name()), filepath.Join(got, "items", e.Name())
		if _, err := os.Stat(filepath.Join(b, "done")); err != nil {
			lost++
			diffs = append(diffs, "lost "+e.Name())
			continue
		}
		var why []string
		for _, f := range itemFiles {
			x, errA := os.ReadFile(filepath.Join(a, f))
			y, errB := os.ReadFile(filepath.Join(b, f))
			if (errA == nil) != (errB == nil) || !bytes.Equal(x, y) {
				why = append(why, f)
			}
		}
		if !sameSession(filepath.Join(a, "session.json"), filepath.Join(b, "session.json")) {
			why = append(why, "session.json")
		}
		if len(why) > 0 {
			differ++
			diffs = append(diffs, fmt.Sprintf("%s differs in %s", e.Name(), strings.Join(why, ", ")))
		}
	}
	if got, _ := os.ReadDir(filepath.Join(got, "items")); len(got) != len(ids) {
		diffs = append(diffs, fmt.Sprintf("%d items, the reference has %d", len(got), len(ids)))
		differ++
	}
	x, _ := os.ReadFile(filepath.Join(ref, "summary.json"))
	y, err := os.ReadFile(filepath.Join(got, "summary.json"))
	if err != nil || !bytes.Equal(x, y) {
		differ++
		diffs = append(diffs, "summary.json differs")
	}
	return lost, differ, diffs
}

func sameSession(a, b string) bool {
	var x, y map[string]any
	ra, _ := os.ReadFile(a)
	rb, _ := os.ReadFile(b)
	if json.Unmarshal(ra, &x) != nil || json.Unmarshal(rb, &y) != nil {
		return false
	}
	delete(x, "latency")
	delete(y, "latency")
	return reflect.DeepEqual(x, y)
}

// TestKillAtRandomPoints SIGKILLs `duplexmpe run` at a seeded random moment of each
// trial (building, starting plugins, playing, saving, scoring, reporting), then runs it
// again to the end, and compares the result with an uninterrupted run: nothing lost,
// nothing different, no process of the killed host left, no temporary file left.
func TestKillAtRandomPoints(t *testing.T) {
	trials := envInt("DUPLEXMPE_RELIABILITY_TRIALS", 12)
	seed := uint64(envInt("DUPLEXMPE_RELIABILITY_SEED", 1))
	base := t.TempDir()
	scen := scenarios(t, base, 2)
	dsOut := filepath.Join(base, "dataset")

	refDir := filepath.Join(base, "reference")
	os.MkdirAll(refDir, 0o755)
	runFile := killRunFile(t, refDir, scen, dsOut)
	if code, out, _, _ := duplexmpe(t, refDir, "build", runFile); code != 0 {
		t.Fatalf("building the dataset: exit %d\n%s", code, out)
	}
	code, out, refSecs, inv := duplexmpe(t, refDir, "run", runFile)
	if code != 0 {
		t.Fatalf("the uninterrupted run: exit %d\n%s", code, out)
	}
	if left := inv.orphans(5 * time.Second); len(left) > 0 {
		t.Errorf("the uninterrupted run left processes: %v", left)
	}
	ref := filepath.Join(refDir, "runs", "e")

	var lost, differ, orphans, temps, kills, resumes int
	var resumeSecs float64
	rng := rand.New(rand.NewPCG(seed, 0x6b696c6c))
	for trial := range trials {
		dir := filepath.Join(base, fmt.Sprintf("trial-%02d", trial))
		os.MkdirAll(dir, 0o755)
		rf := killRunFile(t, dir, scen, dsOut)
		// One or two kills a trial, each at a uniform moment of the reference run's span.
		for range 1 + rng.IntN(2) {
			delay := time.Duration(rng.Float64() * refSecs * float64(time.Second))
			inv := start(t, dir, "run", rf)
			done := make(chan struct{})
			go func() { inv.wait(); close(done) }()
			select {
			case <-time.After(delay):
				inv.cmd.Process.Kill()
				<-done
				kills++
			case <-done: // finished before the kill
			}
			if left := inv.orphans(5 * time.Second); len(left) > 0 {
				orphans += len(left)
				t.Errorf("trial %d: processes outlived the killed host (killed after %s): %v", trial, delay.Round(time.Millisecond), left)
			}
		}
		code, out, secs, inv := duplexmpe(t, dir, "run", rf)
		resumes++
		resumeSecs += secs
		if code != 0 {
			t.Errorf("trial %d: the resumed run exited %d:\n%s", trial, code, out)
		}
		if left := inv.orphans(5 * time.Second); len(left) > 0 {
			orphans += len(left)
			t.Errorf("trial %d: the resumed run left processes: %v", trial, left)
		}
		l, d, diffs := compareRuns(ref, filepath.Join(dir, "runs", "e"))
		lost, differ = lost+l, differ+d
		if l+d > 0 {
			t.Errorf("trial %d: %d lost, %d differ: %s", trial, l, d, strings.Join(diffs, "; "))
		}
		if tf := tempFiles(dir); len(tf) > 0 {
			temps += len(tf)
			t.Errorf("trial %d: temporary files left: %v", trial, tf)
		}
	}
	if tf := tempFiles(dsOut); len(tf) > 0 {
		temps += len(tf)
		t.Errorf("temporary files left in the dataset: %v", tf)
	}
	report(t, map[string]any{"trials": trials, "seed": seed, "kills": kills, "lost": lost, "differ": differ,
		"orphans": orphans, "temp_files": temps, "reference_run_s": round(refSecs), "mean_resume_s": round(resumeSecs / float64(resumes))})
}

func round(x float64) float64 { return float64(int(x*10+0.5)) / 10 }
