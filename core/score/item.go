package score

import (
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// Item is one evaluated conversation of one model: what scoring needs from the run store.
type Item struct {
	Model      string `json:"model"`
	Condition  string `json:"condition"` // protocol.Explicit or protocol.Implicit
	PairID     string `json:"pair_id"`   // both versions of a scenario share it
	ScenarioID string `json:"scenario_id"`
	TPosition  string `json:"t_position"` // early-middle, middle, late-middle
	// Repeat is which play of the (model, conversation) this is, 0 for the first (a
	// run with repeats = N plays each N times; section 6.5).
	Repeat     int                `json:"repeat,omitempty"`
	GoldAnswer string             `json:"gold_answer"`
	Timeline   timeline.Timeline  `json:"timeline"`
	Episodes   []timeline.Episode `json:"episodes"` // merged model speech (section 4)
	// GoldAccepted are the scenario's other ways of saying the gold answer; the judge
	// counts an answer matching any of them as correct.
	GoldAccepted []string `json:"gold_accepted,omitempty"`
	// AnswerType is the scenario's answer_type (sdk.AnswerTypes), sent to the judge;
	// empty when the scenario states none.
	AnswerType string `json:"answer_type,omitempty"`
}

// Scored is an item's identity with its verdicts; Summarize aggregates these.
type Scored struct {
	Model      string  `json:"model"`
	Condition  string  `json:"condition"`
	PairID     string  `json:"pair_id"`
	ScenarioID string  `json:"scenario_id"`
	TPosition  string  `json:"t_position"`
	Repeat     int     `json:"repeat,omitempty"` // which repeat (section 6.5); 0, the first, is left out
	Events     []Event `json:"events"`
	// Words are what the model said: each of its speech episodes transcribed once by the
	// run's ASR (Judge), for people reading the conversation (the viewer's timeline,
	// explain). No verdict reads them. Absent when no ASR ran.
	Words []Words `json:"words,omitempty"`
	// Failed says why the conversation itself failed (the model: a crash, a deadline, a
	// reply out of protocol); Unscored why scoring it could not finish (an ASR or judge
	// service failure). Either keeps the item out of every denominator; Summarize counts
	// them per model and condition and the paired tests count the pairs they cost
	// (section 5.7).
	Failed   string `json:"failed,omitempty"`
	Unscored string `json:"unscored,omitempty"`
}

// Counted reports whether the item's verdicts enter the rates.
func (s Scored) Counted() bool { return s.Failed == "" && s.Unscored == "" }

// Score computes the item's verdicts without ASR or judge: answer accuracy is left
// unjudged and speech in a silence window is not a pass until Judge classifies it.
func Score(item Item, p protocol.Params) Scored {
	return Scored{
		Model: item.Model, Condition: item.Condition, PairID: item.PairID,
		ScenarioID: item.ScenarioID, TPosition: item.TPosition, Repeat: item.Repeat,
		Events: Events(item.Timeline, item.Episodes, p),
	}
}
