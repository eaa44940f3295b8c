// Package review validates the judge against people: it samples judge verdicts from a
// scored run directory into a review sheet (CSV, plus an HTML page that plays each cut
// clip), stratified by model, condition and the judge's label, and measures agreement
// (percent and Cohen's kappa) between the reviewers who filled the sheet and the judge,
// and between the reviewers themselves.
//
// Only verdicts the judge actually gave are sampled: a T answer or a silence-window
// speech with a parsed label. Failures before the judge (an empty or failed
// transcription, a judge error) have nothing for a reviewer to check.
package review

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// Events a row can be about.
const (
	EventAnswer  = "answer"  // the answer after T: correct or incorrect
	EventSilence = "silence" // speech in an N1-N3 window: acknowledgement or intrusion
)

// DefaultPerStratum is how many verdicts a sheet takes from each stratum by default.
const DefaultPerStratum = 10

// Row is one judge verdict to review.
type Row struct {
	ID         string // unique in the sheet: the item id's first 12 digits and the turn
	Item       string // the run item id (RUN_DIR/items/<id>)
	Model      string
	Condition  string
	ScenarioID string
	Turn       int
	Event      string // EventAnswer or EventSilence
	TurnLabel  string // T, N1, N2, N3
	TurnText   string // what the human said in that turn
	GoldAnswer string // for answers, when known
	Transcript string // what the ASR heard of the model
	JudgeLabel string
	Audio      string       // the cut clip, relative to the sheet's directory
	Spans      []score.Span // what was cut (not in the sheet)
	// Reviewers holds the reviewers' labels, one per reviewer column, when read back.
	Reviewers []string
}

// Stratum is the model, condition and judge label a row is drawn from.
func (r Row) Stratum() string { return r.Model + "\x00" + r.Condition + "\x00" + r.JudgeLabel }

// scoredItem is verdicts.json as `duplexmpe score` writes it.
type scoredItem struct {
	Key    string       `json:"key"`
	Scored score.Scored `json:"scored"`
}

// Candidates lists every judge verdict of the scored items of s, ordered by item and
// turn. gold maps a scenario id to its gold answer (may be nil). Items not scored yet
// are skipped and counted in unscored.
func Candidates(s *store.Store, gold map[string]string) (rows []Row, unscored int, err error) {
	ids, err := s.IDs()
	if err != nil {
		return nil, 0, err
	}
	sort.Strings(ids)
	for _, id := range ids {
		if s.Status(id) != store.Done {
			continue
		}
		var v scoredItem
		if err := s.LoadVerdicts(id, &v); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				unscored++
				continue
			}
			return nil, 0, fmt.Errorf("item %s: %w; score the run again with `duplexmpe score`", id, err)
		}
		var turns []timeline.Turn // the turn texts are a help, not a need
		if tl := store.ReadItemDir(s.ItemDir(id)).Timeline; tl != nil {
			turns = tl.Turns
		}
		sc := v.Scored
		for _, e := range sc.Events {
			var j *score.Judgement
			event := ""
			switch {
			case e.T != nil && e.T.Answer != nil:
				j, event = e.T.Answer, EventAnswer
			case e.Silence != nil && e.Silence.Judgement != nil:
				j, event = e.Silence.Judgement, EventSilence
			default:
				continue
			}
			if !j.Parsed || j.Label == "" {
				continue
			}
			r := Row{ID: fmt.Sprintf("%s-t%d", short(id), e.Turn), Item: id, Model: sc.Model, Condition: sc.Condition,
				ScenarioID: sc.ScenarioID, Turn: e.Turn, Event: event, TurnLabel: e.Label, Transcript: j.Transcript,
				JudgeLabel: j.Label, Spans: j.Spans}
			if e.Turn >= 0 && e.Turn < len(turns) {
				r.TurnText = turns[e.Turn].Text
			}
			if event == EventAnswer {
				r.GoldAnswer = gold[sc.ScenarioID]
			}
			rows = append(rows, r)
		}
	}
	return rows, unscored, nil
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// Sample takes up to perStratum rows from every stratum (model, condition, judge
// label), drawn at random with the seed; a stratum with fewer rows gives all of them.
// The same candidates and seed give the same sheet. The result is ordered by stratum,
// then by item and turn.
func Sample(rows []Row, perStratum int, seed uint64) []Row {
	by := map[string][]Row{}
	var keys []string
	for _, r := range rows {
		k := r.Stratum()
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	sort.Strings(keys)
	rng := rand.New(rand.NewPCG(seed, 0x7265766965770a)) // "review"
	var out []Row
	for _, k := range keys {
		group := append([]Row(nil), by[k]...)
		sort.Slice(group, func(i, j int) bool { return less(group[i], group[j]) })
		rng.Shuffle(len(group), func(i, j int) { group[i], group[j] = group[j], group[i] })
		group = group[:min(perStratum, len(group))]
		sort.Slice(group, func(i, j int) bool { return less(group[i], group[j]) })
		out = append(out, group...)
	}
	return out
}

func less(a, b Row) bool {
	if a.Item != b.Item {
		return a.Item < b.Item
	}
	return a.Turn < b.Turn
}

// Clips cuts each row's audio from its item's audible output into dir/clips/<id>.wav and
// sets Row.Audio to that path relative to dir.
func Clips(s *store.Store, dir string, rows []Row) error {
	if err := os.MkdirAll(filepath.Join(dir, "clips"), 0o755); err != nil {
		return err
	}
	audible := map[string]audio.PCM{}
	for i := range rows {
		r := &rows[i]
		pcm, ok := audible[r.Item]
		if !ok {
			p, err := audio.ReadFile(store.AudibleFile(s.ItemDir(r.Item)))
			if err != nil {
				return fmt.Errorf("item %s: %w", r.Item, err)
			}
			audible = map[string]audio.PCM{r.Item: p} // rows are grouped by item within a stratum: keep one
			pcm = p
		}
		rel := filepath.ToSlash(filepath.Join("clips", r.ID+".wav"))
		if err := audio.WriteWAV(filepath.Join(dir, rel), score.Cut(pcm, r.Spans)); err != nil {
			return fmt.Errorf("row %s: %w", r.ID, err)
		}
		r.Audio = rel
	}
	return nil
}
