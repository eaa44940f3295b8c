package viewer

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// Item is a stored conversation explained: its verdicts with the evidence and the rule
// behind each, exactly as its page in the viewer shows them (`duplexmpe explain
// RUN_DIR/items/<id>`).
type Item struct {
	ID        string `json:"id"`
	Model     string `json:"model"`
	Scenario  string `json:"scenario_id"`
	Condition string `json:"condition"`
	Status    string `json:"status"`
	// Failure is why the conversation failed (failure.json); Unscored why scoring left
	// it out. Either keeps it out of every denominator.
	Failure  string `json:"failure,omitempty"`
	Unscored string `json:"unscored,omitempty"`
	// Episodes are the model's speech episodes the verdicts were computed from.
	Episodes []timeline.Episode `json:"episodes"`
	// Words are what the ASR heard in each episode (score.Scored.Words); empty when
	// the verdicts have none.
	Words  []score.Words `json:"words"`
	Events []ItemEvent   `json:"events"`
	// Scored says verdicts.json was there; without it there is nothing to explain yet.
	Scored bool `json:"scored"`
	// Page is the conversation's viewer page, when the report wrote one.
	Page string `json:"page,omitempty"`
	// GoldNote says why the gold answer is not shown, when the dataset cannot be read.
	GoldNote string   `json:"gold_note,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

// ItemEvent is one scored event of an Item.
type ItemEvent struct {
	Label   string   `json:"label"`
	Speaker string   `json:"speaker,omitempty"`
	Start   float64  `json:"start"`
	End     float64  `json:"end"`
	Said    []string `json:"said"`
	Verdict string   `json:"verdict"`
	Pass    bool     `json:"pass"`
	// Excluded: in no rate, neither a pass nor a failure (an N4 event that is not
	// eligible).
	Excluded bool `json:"excluded,omitempty"`
	// Gold is the scenario's gold answer (T only); Transcript what the ASR heard of the
	// judged audio; Judge the judge's label and rationale; Raw its raw reply.
	Gold       string `json:"gold,omitempty"`
	Transcript string `json:"transcript,omitempty"`
	Judged     bool   `json:"judged"`
	Judge      string `json:"judge,omitempty"`
	Raw        string `json:"raw,omitempty"`
	// Rules say which rule of docs/protocol.md section 5 decided the verdict, and on
	// what evidence.
	Rules []string `json:"rules"`
}

// Explain explains the stored conversation id of the run directory runDir, scored
// under the protocol constants p, with the gold answer from the dataset in datasetDir
// (empty: not shown). An item that is not in runDir is an error saying what is there
// to explain.
func Explain(runDir, id string, p protocol.Params, datasetDir string) (*Item, error) {
	c, err := ReadItem(runDir, id)
	if err != nil {
		return nil, err
	}
	ds, dsErr := LoadDataset(datasetDir)
	return ExplainConv(runDir, c, p, ds, dsErr), nil
}

// ReadItem reads the one item id of the run directory runDir; an id that is not there
// is an error saying what is there to explain.
func ReadItem(runDir, id string) (*Conv, error) {
	d := filepath.Join(runDir, ItemsDir, id)
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s is not an item of a run directory (want RUN_DIR/%s/<id>, one of the directories in %s)", d, ItemsDir, filepath.Join(runDir, ItemsDir))
	}
	return readConv(store.ReadItemDir(d)), nil
}

// ExplainConv explains a conversation read from the run directory runDir (ReadItem,
// ReadOf), as Explain does, with the gold answer from ds (read once by the caller;
// dsErr is why it could not be read).
func ExplainConv(runDir string, c *Conv, p protocol.Params, ds *dataset.Dataset, dsErr error) *Item {
	r := c.Row
	id := r.ID
	it := &Item{ID: id, Model: r.Model, Scenario: r.Scenario, Condition: r.Condition, Status: r.Status,
		Failure: c.Failure, Episodes: c.Episodes, Problems: c.Problems, Events: []ItemEvent{}, Words: []score.Words{}}
	if it.Episodes == nil {
		it.Episodes = []timeline.Episode{}
	}
	if exists(filepath.Join(runDir, ViewerDir, pageName(id))) {
		it.Page = filepath.Join(runDir, ViewerDir, pageName(id))
	}
	if c.Scored == nil {
		return it
	}
	it.Scored, it.Unscored = true, c.Scored.Unscored
	if c.Scored.Words != nil {
		it.Words = c.Scored.Words
	}
	room := newRoom(ds, dsErr)
	sc := datasetScenario(room, c)
	if sc == nil {
		_, err := room.scenario(c)
		it.GoldNote = fmt.Sprintf("The gold answer is not shown: %v.", err)
	}
	for _, v := range EventsOf(c.Scored) {
		e := pageEventOf(c, v, sc, p)
		it.Events = append(it.Events, ItemEvent{Label: e.Label, Speaker: e.Speaker, Start: e.Start, End: e.End, Said: e.Said,
			Verdict: e.Verdict, Pass: e.Pass, Excluded: e.Excluded, Gold: e.Gold, Transcript: e.Transcript, Judged: e.HasTranscript,
			Judge: e.Judge, Raw: e.Raw, Rules: e.Rules})
	}
	return it
}
