package cli

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// scoredRun stores two scored conversations of one model (hand-01, both versions) the
// way `run` and `score` leave them: a T answer and two silence windows judged each.
func scoredRun(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	s, err := store.Create(dir, store.Manifest{Name: "run"})
	if err != nil {
		t.Fatal(err)
	}
	audible := audio.PCM{Rate: 16000, Samples: make([]float32, 30*16000)}
	for i, cond := range []string{"explicit", "implicit"} {
		id := strings.Repeat(string(rune('a'+i)), 16)
		sc := "hand-01-" + cond
		tl := timeline.Timeline{Duration: 30, Turns: []timeline.Turn{
			{Index: 0, Label: "N3", Text: "Okay, the chicken goes in.", Start: 0, End: 3},
			{Index: 1, Label: "T", Text: "Aria, when does the chicken come out?", Start: 5, End: 8},
			{Index: 2, Label: "N1", Text: "Aria saved us last week.", Start: 15, End: 18},
		}}
		if err := s.Save(store.Meta{ID: id, Model: "silent", ScenarioID: sc, PairID: "hand-01", Condition: cond},
			&record.Record{Timeline: tl, Audible: audible, Frames: 1}); err != nil {
			t.Fatal(err)
		}
		label := []string{"correct", "incorrect"}[i]
		ev := []score.Event{
			{Turn: 0, Label: "N3", Silence: &score.SilenceVerdict{Judgement: &score.Judgement{Spans: []score.Span{{Start: 3, End: 3.5}}, Transcript: "okay", Label: "acknowledgement", Parsed: true}}},
			{Turn: 1, Label: "T", T: &score.TVerdict{Answer: &score.Judgement{Spans: []score.Span{{Start: 8, End: 10}}, Transcript: "seven oh five", Label: label, Parsed: true}}},
			{Turn: 2, Label: "N1", Silence: &score.SilenceVerdict{Judgement: &score.Judgement{Spans: []score.Span{{Start: 18, End: 19}}, Transcript: "nine dollars", Label: "intrusion", Parsed: true}}},
		}
		if err := s.SaveVerdicts(id, evaluate.StoredVerdicts{Key: "k", Scored: score.Scored{Model: "silent", Condition: cond, PairID: "hand-01", ScenarioID: sc, Events: ev}}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSampleThenAgreement(t *testing.T) {
	run := scoredRun(t)
	wd := filepath.Dir(run)
	code, stdout, stderr := runDatasetCLI(wd, "sample", "run", "--per-stratum", "5", "--dataset", mustAbs(t, "../../examples/scenarios"))
	if code != ExitOK || !strings.Contains(stdout, "sampled 6 of 6 judge verdicts from 6 strata") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	sheet := filepath.Join(run, "review", "sheet.csv")
	f, err := os.Open(sheet)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) != 7 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	gold := 0
	for _, r := range recs[1:] {
		if r[6] == "answer" && r[9] == "7:05" {
			gold++
		}
		if _, err := os.Stat(filepath.Join(run, "review", r[12])); err != nil {
			t.Errorf("clip: %v", err)
		}
	}
	if gold != 2 {
		t.Errorf("gold answers on %d answer rows, want 2", gold)
	}

	// Reviewer 1 agrees with the judge except on one answer; reviewer 2 reviews the
	// silence windows only, and agrees.
	recs[0] = append(recs[0], "reviewer_2")
	for i, r := range recs[1:] {
		r[13] = r[11]
		if r[6] == "answer" && r[11] == "correct" {
			r[13] = "incorrect"
		}
		second := ""
		if r[6] == "silence" {
			second = r[11]
		}
		recs[i+1] = append(r, second)
	}
	f, _ = os.Create(sheet)
	w := csv.NewWriter(f)
	w.WriteAll(recs)
	f.Close()

	code, stdout, stderr = runDatasetCLI(wd, "agreement", "run/review/sheet.csv")
	// judge vs reviewer, answers: judge c i, reviewer i i: po 1/2, pe 1/2, kappa 0.
	for _, want := range []string{
		"| judge | reviewer | all | 6 | 83.3% (5/6) |",
		"| judge | reviewer | answer | 2 | 50.0% (1/2) | 0.000 |",
		"| judge | reviewer | silence | 4 | 100.0% (4/4) | 1.000 |",
		"| judge | reviewer_2 | all | 4 | 100.0% (4/4) | 1.000 |",
		"| reviewer | reviewer_2 | silence | 4 | 100.0% (4/4) | 1.000 |",
	} {
		if code != ExitOK || !strings.Contains(stdout, want) {
			t.Errorf("agreement lacks %q: exit %d\n%s\n%s", want, code, stdout, stderr)
		}
	}
	code, stdout, _ = runDatasetCLI(wd, "agreement", "run/review/sheet.csv", "--json")
	if code != ExitOK || !strings.Contains(stdout, `"reviewers": [`) || !strings.Contains(stdout, `"kappa_ok": true`) {
		t.Errorf("json: %s", stdout)
	}
}

func TestSampleAndAgreementErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sample", "nowhere"}, ExitFailed, "is not a run directory"},
		{[]string{"sample", "nowhere", "--per-stratum", "0"}, ExitUsage, "--per-stratum 0"},
		{[]string{"agreement", "missing.csv"}, ExitFailed, "missing.csv"},
	} {
		code, stdout, stderr := runDatasetCLI(dir, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d and %q\n%s\n%s", c.args, code, c.code, c.want, stdout, stderr)
		}
	}
	// A run that was never scored has nothing to review.
	s, _ := store.Create(filepath.Join(dir, "bare"), store.Manifest{Name: "bare"})
	s.Save(store.Meta{ID: strings.Repeat("c", 16), Model: "m", ScenarioID: "x"}, &record.Record{Frames: 1})
	code, _, stderr := runDatasetCLI(dir, "sample", "bare")
	if code != ExitFailed || !strings.Contains(stderr, "no judge verdicts to review (1 items not scored)") {
		t.Errorf("unscored run: exit %d %s", code, stderr)
	}
}
