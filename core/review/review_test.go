package review

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

const rate = 8000

// level is the audible waveform of the fixture: its value tells the time it was taken
// at, so a clip shows what it was cut from.
func level(t float64) float32 { return float32(math.Mod(t, 10) / 10) }

// fixture is a run directory made through the store, with verdicts.json as `score`
// writes it. Per model (m1, m2) and condition (explicit, implicit) there are four
// conversations; each has a T answer judged correct on even conversations and
// incorrect on odd ones, and two silence windows with speech judged acknowledgement
// and intrusion. m2/implicit conversation 0 also has an unparsed verdict, and one
// more conversation is stored but never scored.
func fixture(t *testing.T) (*store.Store, map[string]int) {
	t.Helper()
	s, err := store.Create(t.TempDir(), store.Manifest{Name: "fixture"})
	if err != nil {
		t.Fatal(err)
	}
	audible := audio.PCM{Rate: rate, Samples: make([]float32, 40*rate)}
	for i := range audible.Samples {
		audible.Samples[i] = level(float64(i) / rate)
	}
	n := 0
	strata := map[string]int{}
	save := func(model, cond string, k int, scored bool) {
		n++
		sum := sha256.Sum256([]byte(fmt.Sprint(model, cond, k)))
		id := hex.EncodeToString(sum[:8])
		scen := fmt.Sprintf("p%d-%s", k, cond)
		tl := timeline.Timeline{Duration: 40}
		for i, lab := range []string{"N2", "T", "N1", "N3"} {
			tl.Turns = append(tl.Turns, timeline.Turn{Index: i, Label: lab, Speaker: "A", Text: fmt.Sprintf("turn %d of %s", i, scen), Start: float64(8 * i), End: float64(8*i + 3)})
		}
		rec := &record.Record{ConversationID: scen, Timeline: tl, Audible: audible, Frames: 1}
		if err := s.Save(store.Meta{ID: id, Model: model, ScenarioID: scen, PairID: fmt.Sprint("p", k), Condition: cond}, rec); err != nil {
			t.Fatal(err)
		}
		if !scored {
			return
		}
		answer := "correct"
		if k%2 == 1 {
			answer = "incorrect"
		}
		ev := []score.Event{
			{Turn: 0, Label: "N2", Silence: &score.SilenceVerdict{Judgement: &score.Judgement{Spans: []score.Span{{Start: 4, End: 4.5}, {Start: 6, End: 6.25}}, Transcript: "mm-hm", Label: "acknowledgement", Parsed: true, OK: true}}},
			{Turn: 1, Label: "T", T: &score.TVerdict{Answer: &score.Judgement{Spans: []score.Span{{Start: 11, End: 13}}, Transcript: "it is seven", Label: answer, Parsed: true}}},
			{Turn: 2, Label: "N1", Silence: &score.SilenceVerdict{Judgement: &score.Judgement{Spans: []score.Span{{Start: 19.5, End: 20}}, Transcript: "nine dollars", Label: "intrusion", Parsed: true}}},
			{Turn: 3, Label: "N3", Silence: &score.SilenceVerdict{}}, // silent: nothing judged
		}
		strata[model+"/"+cond+"/acknowledgement"]++
		strata[model+"/"+cond+"/"+answer]++
		strata[model+"/"+cond+"/intrusion"]++
		if model == "m2" && cond == "implicit" && k == 0 {
			ev[3].Silence.Judgement = &score.Judgement{Spans: []score.Span{{Start: 25, End: 26}}, Transcript: "uh", Raw: "???", Parsed: false}
		}
		if err := s.SaveVerdicts(id, scoredItem{Key: "k", Scored: score.Scored{Model: model, Condition: cond, PairID: fmt.Sprint("p", k), ScenarioID: scen, Events: ev}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []string{"m1", "m2"} {
		for _, c := range []string{"explicit", "implicit"} {
			for k := range 4 {
				save(m, c, k, true)
			}
		}
	}
	save("m1", "explicit", 9, false)
	return s, strata
}

func TestCandidatesAndStratifiedSample(t *testing.T) {
	s, strata := fixture(t)
	rows, unscored, err := Candidates(s, map[string]string{"p0-explicit": "7:05"})
	if err != nil {
		t.Fatal(err)
	}
	if unscored != 1 || len(rows) != 2*2*4*3 {
		t.Fatalf("%d rows, %d unscored", len(rows), unscored)
	}
	if len(strata) != 2*2*4 {
		t.Fatalf("fixture strata %v", strata)
	}
	for _, r := range rows {
		if r.Event == EventAnswer && r.ScenarioID == "p0-explicit" && r.GoldAnswer != "7:05" {
			t.Errorf("gold answer not attached: %+v", r)
		}
		if r.TurnText != fmt.Sprintf("turn %d of %s", r.Turn, r.ScenarioID) {
			t.Errorf("turn text %q", r.TurnText)
		}
	}

	const per = 1
	a := Sample(rows, per, 7)
	count := map[string]int{}
	for _, r := range a {
		count[r.Model+"/"+r.Condition+"/"+r.JudgeLabel]++
	}
	for k, have := range strata {
		if count[k] != min(per, have) {
			t.Errorf("stratum %s: %d rows, want %d", k, count[k], min(per, have))
		}
	}
	if len(count) != len(strata) {
		t.Errorf("strata in the sample %v", count)
	}
	if b := Sample(rows, per, 7); fmt.Sprint(ids(a)) != fmt.Sprint(ids(b)) {
		t.Error("same seed, different sheet")
	}
	differs := false
	for seed := uint64(8); seed < 20 && !differs; seed++ {
		differs = fmt.Sprint(ids(Sample(rows, per, seed))) != fmt.Sprint(ids(a))
	}
	if !differs {
		t.Error("the seed does not change the draw")
	}
	if all := Sample(rows, 100, 1); len(all) != len(rows) {
		t.Errorf("a large stratum size takes %d of %d rows", len(all), len(rows))
	}
}

func ids(rows []Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return out
}

func TestExportSheetWithClips(t *testing.T) {
	s, _ := fixture(t)
	rows, _, err := Candidates(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows = Sample(rows, 1, 3)
	dir := t.TempDir()
	if err := Clips(s, dir, rows); err != nil {
		t.Fatal(err)
	}
	if err := WriteSheet(dir, rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		clip, err := audio.ReadWAV(filepath.Join(dir, r.Audio))
		if err != nil {
			t.Fatal(err)
		}
		want := 0.0
		for _, sp := range r.Spans {
			want += sp.Duration()
		}
		if clip.Rate != rate || math.Abs(clip.Duration()-want) > 1.0/rate {
			t.Errorf("%s: clip %.4f s at %d Hz, spans total %.4f s", r.ID, clip.Duration(), clip.Rate, want)
		}
		if got, w := clip.Samples[0], level(r.Spans[0].Start); math.Abs(float64(got-w)) > 1e-3 {
			t.Errorf("%s: clip starts at level %.4f, want the audible at %.2f s: %.4f", r.ID, got, r.Spans[0].Start, w)
		}
	}

	f, _ := os.Open(filepath.Join(dir, CSVFile))
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(recs[0], ",") != "id,item,model,condition,scenario_id,turn,event,turn_label,turn_text,gold_answer,transcript,judge_label,audio,reviewer" {
		t.Errorf("header %v", recs[0])
	}
	if len(recs) != len(rows)+1 {
		t.Fatalf("%d CSV records for %d rows", len(recs), len(rows))
	}
	for i, rec := range recs[1:] {
		r := rows[i]
		if rec[0] != r.ID || rec[2] != r.Model || rec[3] != r.Condition || rec[6] != r.Event || rec[10] != r.Transcript ||
			rec[11] != r.JudgeLabel || rec[12] != "clips/"+r.ID+".wav" || rec[13] != "" {
			t.Errorf("CSV row %d %v for %+v", i+1, rec, r)
		}
	}

	page, _ := os.ReadFile(filepath.Join(dir, HTMLFile))
	srcs := regexp.MustCompile(`<audio controls preload="none" src="([^"]+)">`).FindAllStringSubmatch(string(page), -1)
	if len(srcs) != len(rows) {
		t.Fatalf("%d audio players for %d rows", len(srcs), len(rows))
	}
	for i, m := range srcs {
		if m[1] != rows[i].Audio {
			t.Errorf("player %d plays %s, want %s", i, m[1], rows[i].Audio)
		}
		if _, err := os.Stat(filepath.Join(dir, m[1])); err != nil {
			t.Errorf("player %d: %v", i, err)
		}
	}
}

// Text that a spreadsheet would run as a formula is written as plain text.
func TestSheetCellsAreNeverFormulas(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://x\")": "'=HYPERLINK(\"http://x\")",
		"+1 555":                   "'+1 555",
		"-5 degrees":               "'-5 degrees",
		"@sum":                     "'@sum",
		"nine dollars":             "nine dollars",
		"":                         "",
	} {
		if got := plainCell(in); got != want {
			t.Errorf("plainCell(%q) = %q, want %q", in, got, want)
		}
	}
}

// Issue 31: a scenario id starting with "=" was written into sheet.csv as a formula
// (only the turn text, gold answer and transcript were escaped). Every column is now,
// and the sheet reads back with the values it was written with.
func TestEverySheetColumnIsNeutralised(t *testing.T) {
	rows := []Row{{ID: "=1+1", Item: "+item", Model: "-model", Condition: "@cond", ScenarioID: "=HYPERLINK(\"http://x\")",
		Turn: 2, Event: EventAnswer, TurnLabel: "=T", TurnText: "+text", GoldAnswer: "-5", Transcript: "@t",
		JudgeLabel: "correct", Audio: "=clips/a.wav"}}
	dir := t.TempDir()
	if err := WriteSheet(dir, rows); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, CSVFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("records %v, %v", recs, err)
	}
	for i, cell := range recs[1] {
		if cell != "" && strings.ContainsRune("=+-@", rune(cell[0])) {
			t.Errorf("column %s: %q starts like a formula", recs[0][i], cell)
		}
	}
	sh, err := ReadSheet(filepath.Join(dir, CSVFile))
	if err != nil {
		t.Fatal(err)
	}
	got := sh.Rows[0]
	if got.ID != rows[0].ID || got.ScenarioID != rows[0].ScenarioID || got.Model != rows[0].Model || got.Item != rows[0].Item ||
		got.Condition != rows[0].Condition || got.Audio != rows[0].Audio {
		t.Errorf("read back %+v; want the values written", got)
	}
}
