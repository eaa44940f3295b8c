package viewer

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"

	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// ItemsDir is the run directory's folder of items; core/store owns the layout and reads
// the items (store.ReadItems).
const ItemsDir = store.ItemsDir

var itemID = regexp.MustCompile(`^[0-9a-f]{16,64}$`)

// itemRow is one (model, conversation) of the run for the HTML drill-down.
type ItemRow struct {
	ID, Model, Condition, Scenario, Pair, TPosition, Status string
	// From verdicts.json when the item is scored; "-" otherwise.
	TOutcome, Answer, Silence, N4 string
	// Heard is the ASR transcript of the answer audio, shortened.
	Heard string
	Files []string // paths relative to the run directory
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
	Meta     store.Meta
	Timeline *timeline.Timeline
	Episodes []timeline.Episode
	Session  *store.SessionInfo
	Text     []TextPiece
	Failure  string
	Scored   *score.Scored
	// Dir is the item directory.
	Dir      string
	Problems []string
}

// Read lists the run directory's items (store.ReadItems), sorted by model,
// condition, scenario. A directory without items gives none; an unreadable item is
// listed with its problem as its status, so nothing is silently dropped.
func Read(dir string) []*Conv { return ReadOf(dir, nil) }

// ReadOf is Read limited to the items keep keeps (every item when keep is nil): the
// report passes the run's current plan, so that the items of earlier plans appear
// nowhere.
func ReadOf(dir string, keep func(id string) bool) []*Conv {
	var cs []*Conv
	for _, ic := range store.ReadItems(dir) {
		if keep == nil || keep(ic.ID) {
			cs = append(cs, readConv(ic))
		}
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

func readConv(ic *store.ItemContents) *Conv {
	id := ic.ID
	c := &Conv{Dir: ic.Dir, Row: ItemRow{ID: id, Status: "not finished", TOutcome: "-", Answer: "-", Silence: "-", N4: "-"}}
	r := &c.Row
	switch ic.Marker {
	case store.Done:
		r.Status = "done"
	case store.Failed:
		r.Status = "failed"
	}
	for _, f := range ic.Files {
		r.Files = append(r.Files, store.ItemsDir+"/"+id+"/"+f)
	}
	for _, p := range ic.Problems {
		if p.Name != store.VerdictsFile {
			c.Problems = append(c.Problems, p.String())
		}
	}
	if ic.Meta == nil {
		r.Status += "; " + ic.Problems[0].String()
		return c
	}
	c.Meta = *ic.Meta
	m := c.Meta
	r.Model, r.Condition, r.Scenario, r.Pair, r.TPosition = m.Model, m.Condition, m.ScenarioID, m.PairID, m.TPosition
	c.Timeline, c.Episodes, c.Session, c.Failure = ic.Timeline, ic.Episodes, ic.Session, ic.Failure
	for _, t := range ic.Text {
		c.Text = append(c.Text, TextPiece{Time: t.Time, Text: t.Text})
	}
	if m.Repeat > 0 {
		r.Scenario += fmt.Sprintf(" (repeat %d)", m.Repeat)
	}
	if !ic.Has(store.VerdictsFile) {
		return c
	}
	// verdicts.json is score.Scored, possibly wrapped with the key it was scored under:
	// {"key": ..., "scored": {...}}.
	var v struct {
		score.Scored
		Wrapped *score.Scored `json:"scored"`
	}
	err := ic.Problem(store.VerdictsFile)
	if err == nil {
		err = json.Unmarshal(ic.Verdicts, &v)
	}
	if err != nil {
		r.Status += "; " + store.VerdictsFile + ": " + err.Error()
		c.Problems = append(c.Problems, store.VerdictsFile+": "+err.Error())
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
