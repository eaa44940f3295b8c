package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"

	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/vad"
)

// compactCheck measures what the 16-bit FLAC run store changes on a real run written
// with float32 audio (audible.wav): it copies the run twice, once as it is and once
// saved again through the store (audible.flac), finds the speech episodes of every
// item on the float audio and on the FLAC audio offline with Silero and compares both
// with the episodes recorded online at play time, then scores both copies from
// nothing with one worker (PocketSphinx's transcripts depend on the order of its clips)
// and compares every item's verdicts.
func compactCheck(src, runFile, out, bin string) error {
	floatDir, flacDir := filepath.Join(out, "float"), filepath.Join(out, "flac")
	for _, d := range []string{floatDir, flacDir} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	if err := copyRun(src, floatDir); err != nil {
		return err
	}
	if err := copyRun(src, flacDir); err != nil {
		return err
	}
	fl, err := store.Open(floatDir)
	if err != nil {
		return err
	}
	fc, err := store.Open(flacDir)
	if err != nil {
		return err
	}
	ids, err := fl.IDs()
	if err != nil {
		return err
	}
	det, err := vad.Open(vad.Options{Model: fl.Manifest().VAD.Model})
	if err != nil {
		return err
	}
	defer det.Close()
	settings := fl.Manifest().VAD

	type modelCount struct{ items, exact, floatBytes, flacBytes, offlineMoved, flacMoved, verdictsMoved, spansMoved, transcriptsMoved, labelsMoved int }
	counts := map[string]*modelCount{}
	for _, id := range ids {
		if fl.Status(id) != store.Done {
			continue
		}
		it, err := fl.Load(id)
		if err != nil {
			return err
		}
		if err := fc.Save(it.Meta, it.Record); err != nil { // rewrites the item as a run writes it now
			return err
		}
		if err := os.Remove(filepath.Join(fc.ItemDir(id), store.VerdictsFile)); err != nil && !os.IsNotExist(err) {
			return err
		}
		c := counts[it.Meta.Model]
		if c == nil {
			c = &modelCount{}
			counts[it.Meta.Model] = c
		}
		c.items++
		c.floatBytes += fileSize(filepath.Join(fl.ItemDir(id), store.AudibleWAV))
		c.flacBytes += fileSize(filepath.Join(fc.ItemDir(id), store.AudibleFLAC))
		back, err := fc.Load(id)
		if err != nil {
			return err
		}
		if slices.Equal(back.Record.Audible.Samples, it.Record.Audible.Samples) {
			c.exact++
		}
		offline, err := det.Episodes(it.Record.Audible, settings)
		if err != nil {
			return err
		}
		onFLAC, err := det.Episodes(back.Record.Audible, settings)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(norm(offline), norm(it.Record.Episodes)) {
			c.offlineMoved++
		}
		if !reflect.DeepEqual(norm(onFLAC), norm(it.Record.Episodes)) {
			c.flacMoved++
			fmt.Printf("episodes moved: %s %s %s: online %v, on FLAC %v\n", it.Meta.Model, it.Meta.ScenarioID, id, it.Record.Episodes, onFLAC)
		}
	}
	for _, d := range []string{floatDir, flacDir} {
		cmd := exec.Command(filepath.Join(bin, "duplexmpe"), "score", d, "--run-file", runFile)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "NO_COLOR=1")
		if outp, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("score %s: %v\n%s", d, err, outp)
		}
	}
	for _, id := range ids {
		var a, b evaluate.StoredVerdicts
		if fl.LoadVerdicts(id, &a) != nil || fc.LoadVerdicts(id, &b) != nil {
			continue
		}
		meta, _, _ := fl.LoadMeta(id)
		c := counts[meta.Model]
		ja, _ := json.Marshal(a.Scored)
		jb, _ := json.Marshal(b.Scored)
		if bytes.Equal(ja, jb) {
			continue
		}
		c.verdictsMoved++
		for i := range min(len(a.Scored.Events), len(b.Scored.Events)) {
			ea, eb := a.Scored.Events[i], b.Scored.Events[i]
			for _, pair := range [][2]*judged{{tJudgement(ea.T), tJudgement(eb.T)}, {silenceJudgement(ea.Silence), silenceJudgement(eb.Silence)}} {
				x, y := pair[0], pair[1]
				if x == nil || y == nil {
					continue
				}
				c.spansMoved++
				if x.transcript != y.transcript {
					c.transcriptsMoved++
					fmt.Printf("transcript moved: %s %s turn %d: float %q, FLAC %q\n", meta.Model, meta.ScenarioID, ea.Turn, x.transcript, y.transcript)
				}
				if x.label != y.label || x.ok != y.ok {
					c.labelsMoved++
					fmt.Printf("verdict moved: %s %s turn %d: float %s/%v, FLAC %s/%v\n", meta.Model, meta.ScenarioID, ea.Turn, x.label, x.ok, y.label, y.ok)
				}
			}
		}
	}
	var models []string
	for m := range counts {
		models = append(models, m)
	}
	sort.Strings(models)
	fmt.Printf("\n%-12s %5s %6s %12s %12s %7s %16s %14s %15s %12s\n", "model", "items", "exact", "float32 KB", "FLAC KB", "ratio", "offline!=online", "FLAC!=online", "verdicts moved", "labels moved")
	for _, m := range models {
		c := counts[m]
		fmt.Printf("%-12s %5d %6d %12.1f %12.1f %7.3f %16d %14d %15d %12d\n", m, c.items, c.exact,
			float64(c.floatBytes)/1e3/float64(c.items), float64(c.flacBytes)/1e3/float64(c.items),
			float64(c.flacBytes)/float64(c.floatBytes), c.offlineMoved, c.flacMoved, c.verdictsMoved, c.labelsMoved)
	}
	return nil
}

type judged struct {
	transcript, label string
	ok                bool
}

func fromJudgement(j *score.Judgement) *judged {
	if j == nil {
		return nil
	}
	return &judged{transcript: j.Transcript, label: j.Label + j.Failure, ok: j.OK}
}

func tJudgement(t *score.TVerdict) *judged {
	if t == nil {
		return nil
	}
	return fromJudgement(t.Answer)
}

func silenceJudgement(s *score.SilenceVerdict) *judged {
	if s == nil {
		return nil
	}
	return fromJudgement(s.Judgement)
}

// norm makes an empty episode list and a nil one equal.
func norm[T any](xs []T) []T {
	if len(xs) == 0 {
		return nil
	}
	return xs
}

func fileSize(path string) int {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return int(fi.Size())
}

// copyRun copies a run directory's manifest and finished items, without verdicts or
// reports.
func copyRun(src, dst string) error {
	if err := os.MkdirAll(filepath.Join(dst, store.ItemsDir), 0o755); err != nil {
		return err
	}
	for _, f := range []string{store.ManifestFile, store.RunInfoFile} {
		if err := copyFile(filepath.Join(src, f), filepath.Join(dst, f)); err != nil && f == store.ManifestFile {
			return err
		}
	}
	ents, err := os.ReadDir(filepath.Join(src, store.ItemsDir))
	if err != nil {
		return err
	}
	for _, e := range ents {
		from, to := filepath.Join(src, store.ItemsDir, e.Name()), filepath.Join(dst, store.ItemsDir, e.Name())
		files, err := os.ReadDir(from)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(to, 0o755); err != nil {
			return err
		}
		for _, f := range files {
			if f.Name() == store.VerdictsFile || f.IsDir() {
				continue
			}
			if err := copyFile(filepath.Join(from, f.Name()), filepath.Join(to, f.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
