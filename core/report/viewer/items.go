package viewer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// The per-item layout of a run directory (core/store): items/<id>/ holds item.json,
// the record files, verdicts.json once scored, and a done or failed marker. The viewer
// reads these files itself; only the audio's file names and format come from the store
// (store.AudibleFile), which alone knows which formats a run directory can hold.
const ItemsDir = "items"

var itemID = regexp.MustCompile(`^[0-9a-f]{16,64}$`)

// itemFiles are the files an item row links to, when present.
var itemFiles = []string{"item.json", "timeline.json", "episodes.json", "verdicts.json", "text.json", "session.json", "failure.json", store.AudibleFLAC, store.AudibleWAV}

// itemRow is one (model, conversation) of the run for the HTML drill-down.
type ItemRow struct {
	ID, Model, Condition, Scenario, Pair, TPosition, Status string
	// From verdicts.json when the item is scored; "-" otherwise.
	TOutcome, Answer, Silence, N4 string
	// Heard is the ASR transcript of the answer audio, shortened.
	Heard string
	Files []string // paths relative to the run directory
}

type ItemMeta struct {
	Model      string `json:"model"`
	ScenarioID string `json:"scenario_id"`
	PairID     string `json:"pair_id"`
	Condition  string `json:"condition"`
	TPosition  string `json:"t_position"`
	// Key holds what identifies the audio the scheduler played (core/store.ItemKey):
	// the viewer checks the dataset's clips against it before rebuilding the room.
	Key struct {
		Scenario struct {
			Content string   `json:"content"`
			Audio   []string `json:"audio"`
		} `json:"scenario"`
	} `json:"key"`
	Repeat int `json:"repeat"`
}

// sessionFile is session.json (core/store): the model's format and the wait after T.
type SessionFile struct {
	Format struct {
		InputRate, OutputRate, FrameSize int
	} `json:"format"`
	Frames  int `json:"frames"`
	Latency struct {
		Mean, P95, Max float64
	} `json:"latency"`
	TWait *struct {
		Start  float64 `json:"start"`
		End    float64 `json:"end"`
		Onset  bool    `json:"onset"`
		Ending string  `json:"ending"`
	} `json:"t_wait"`
}

type TextPiece struct {
	Time float64 `json:"time"`
	Text string  `json:"text"`
}

// conv is everything the report and the viewer know of one (model, conversation) in
// the run directory. Pointers are nil when the file is absent or unreadable; Problems
// says which could not be read.
type Conv struct {
	Row      ItemRow
	Meta     ItemMeta
	Timeline *timeline.Timeline
	Episodes []timeline.Episode
	Session  *SessionFile
	Text     []TextPiece
	Failure  string
	Scored   *score.Scored
	// Dir is the item directory.
	Dir      string
	Problems []string
}

// readConvs lists the run directory's items, sorted by model, condition, scenario. A
// directory without items gives none; an unreadable item is listed with its problem as
// its status, so nothing is silently dropped.
func Read(dir string) []*Conv {
	ents, err := os.ReadDir(filepath.Join(dir, ItemsDir))
	if err != nil {
		return nil
	}
	var cs []*Conv
	for _, e := range ents {
		if !e.IsDir() || !itemID.MatchString(e.Name()) {
			continue
		}
		cs = append(cs, readConv(dir, e.Name()))
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i].Row, cs[j].Row
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		if a.Condition != b.Condition {
			return conditionRank(a.Condition) < conditionRank(b.Condition) || (conditionRank(a.Condition) == conditionRank(b.Condition) && a.Condition < b.Condition)
		}
		return a.Scenario < b.Scenario
	})
	return cs
}

func conditionRank(c string) int {
	switch c {
	case "explicit":
		return 0
	case "implicit":
		return 1
	}
	return 2
}

func readConv(dir, id string) *Conv {
	d := filepath.Join(dir, ItemsDir, id)
	c := &Conv{Dir: d, Row: ItemRow{ID: id, Status: "not finished", TOutcome: "-", Answer: "-", Silence: "-", N4: "-"}}
	r := &c.Row
	switch {
	case exists(filepath.Join(d, "done")):
		r.Status = "done"
	case exists(filepath.Join(d, "failed")):
		r.Status = "failed"
	}
	for _, f := range itemFiles {
		if exists(filepath.Join(d, f)) {
			r.Files = append(r.Files, ItemsDir+"/"+id+"/"+f)
		}
	}
	if err := readSmallJSON(filepath.Join(d, "item.json"), &c.Meta); err != nil {
		r.Status += "; item.json: " + err.Error()
		c.Problems = append(c.Problems, "item.json: "+err.Error())
		return c
	}
	m := c.Meta
	r.Model, r.Condition, r.Scenario, r.Pair, r.TPosition = m.Model, m.Condition, m.ScenarioID, m.PairID, m.TPosition
	optional := func(name string, v any) bool {
		path := filepath.Join(d, name)
		if !exists(path) {
			return false
		}
		if err := readSmallJSON(path, v); err != nil {
			c.Problems = append(c.Problems, name+": "+err.Error())
			return false
		}
		return true
	}
	var tl timeline.Timeline
	if optional("timeline.json", &tl) {
		c.Timeline = &tl
	}
	optional("episodes.json", &c.Episodes)
	var ses SessionFile
	if optional("session.json", &ses) {
		c.Session = &ses
	}
	optional("text.json", &c.Text)
	var fail struct {
		Failure string `json:"failure"`
	}
	if optional("failure.json", &fail) {
		c.Failure = fail.Failure
	}
	if m.Repeat > 0 {
		r.Scenario += fmt.Sprintf(" (repeat %d)", m.Repeat)
	}
	if !exists(filepath.Join(d, "verdicts.json")) {
		return c
	}
	// verdicts.json is score.Scored, possibly wrapped with the key it was scored under:
	// {"key": ..., "scored": {...}}.
	var v struct {
		score.Scored
		Wrapped *score.Scored `json:"scored"`
	}
	if err := readSmallJSON(filepath.Join(d, "verdicts.json"), &v); err != nil {
		r.Status += "; verdicts.json: " + err.Error()
		c.Problems = append(c.Problems, "verdicts.json: "+err.Error())
		return c
	}
	sc := v.Scored
	if v.Wrapped != nil {
		sc = *v.Wrapped
	}
	c.Scored = &sc
	switch {
	case sc.Failed != "":
		r.Status += "; in no denominator: " + sc.Failed
	case sc.Unscored != "":
		r.Status += "; unscored, in no denominator: " + sc.Unscored
	}
	summarizeRow(r, sc)
	return c
}

// summarizeRow fills the drill-down columns from the verdicts.
func summarizeRow(r *ItemRow, sc score.Scored) {
	var silN, silK, n4Pass, n4Elig, n4All int
	for _, ev := range sc.Events {
		switch {
		case ev.T != nil:
			r.TOutcome = ev.T.Outcome
			switch {
			case !ev.T.Presence:
				r.Answer = "no response"
			case ev.T.Answer == nil:
				r.Answer = score.FailNotJudged
			case ev.T.Answer.OK:
				r.Answer = "correct"
			default:
				r.Answer = ev.T.Answer.Failure
			}
			if ev.T.Answer != nil {
				r.Heard = Shorten(ev.T.Answer.Transcript, 80)
			}
		case ev.Silence != nil:
			silN++
			if ev.Silence.Pass() {
				silK++
			}
		case ev.N4 != nil:
			n4All++
			if ev.N4.Eligible {
				n4Elig++
				if ev.N4.Yield == score.YieldPass {
					n4Pass++
				}
			}
		}
	}
	r.Silence = fmt.Sprintf("%d/%d kept", silK, silN)
	events := "events"
	if n4All == 1 {
		events = "event"
	}
	r.N4 = fmt.Sprintf("%d %s: %d eligible, %d yielded", n4All, events, n4Elig, n4Pass)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readSmallJSON reads a per-item JSON file; items are small, so a huge one is damage.
func readSmallJSON(path string, v any) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.Size() > 64<<20 {
		return fmt.Errorf("%d bytes, too large", info.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Shorten cuts s to at most n runes, marking the cut.
func Shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
