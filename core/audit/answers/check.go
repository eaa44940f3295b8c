package answers

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// AnswerJudge is what CheckAnswers asks: the answer half of a judge plugin (sdk.Judge;
// the host's client of a started plugin is one).
type AnswerJudge interface {
	JudgeAnswer(ctx context.Context, q sdk.AnswerQuery) (sdk.Verdict, error)
}

// Accepted is a wrong answer the judge accepted.
type Accepted struct {
	PairID     string `json:"pair_id"`
	ScenarioID string `json:"scenario_id"`
	Gold       string `json:"gold"`
	Wrong
	Rationale string `json:"rationale,omitempty"`
}

// Refused is a right answer the judge refused.
type Refused struct {
	ScenarioID string `json:"scenario_id"`
	Gold       string `json:"gold"`
	Text       string `json:"text"`
	Rationale  string `json:"rationale,omitempty"`
}

// Report is what CheckAnswers found.
type Report struct {
	Pairs     int `json:"pairs"`
	Scenarios int `json:"scenarios"`
	// Judged is how many wrong answers were put to the judge.
	Judged int `json:"judged"`
	// AcceptedPairs is how many pairs had at least one wrong answer accepted (the release
	// passes with 0); Accepted lists every accepted wrong answer.
	AcceptedPairs int        `json:"accepted_pairs"`
	Accepted      []Accepted `json:"accepted,omitempty"`
	// Rights is how many right answers (the gold and each accepted variant) were put to
	// the judge; Refused lists those it judged wrong. A judge that refuses a right answer
	// fails the release too: refusing everything must not pass the audit.
	Rights  int       `json:"rights"`
	Refused []Refused `json:"refused,omitempty"`
	// YesNoPairs is how many pairs have a yes or no gold (IsYesNo), Yes and No how many
	// of them are each; YesNoShare is YesNoPairs / Pairs.
	YesNoPairs int     `json:"yes_no_pairs"`
	Yes        int     `json:"yes"`
	No         int     `json:"no"`
	YesNoShare float64 `json:"yes_no_share"`
}

// Thresholds of the release (issue 28, item 1): no pair accepts a wrong answer; at most
// MaxYesNoShare of the golds are yes or no, and their yes and no counts differ by at most
// MaxYesNoImbalance.
const (
	MaxYesNoShare     = 0.03
	MaxYesNoImbalance = 1
)

// Pass reports whether r meets the release's thresholds, and what fails when not.
func (r Report) Pass() (bool, []string) {
	var why []string
	if r.AcceptedPairs > 0 {
		why = append(why, fmt.Sprintf("the judge accepts a wrong answer in %d of %d pairs", r.AcceptedPairs, r.Pairs))
	}
	if len(r.Refused) > 0 {
		why = append(why, fmt.Sprintf("the judge refuses %d of %d right answers", len(r.Refused), r.Rights))
	}
	if r.YesNoShare > MaxYesNoShare {
		why = append(why, fmt.Sprintf("%d of %d gold answers (%.1f%%) are yes or no; at most %.0f%%", r.YesNoPairs, r.Pairs, 100*r.YesNoShare, 100*MaxYesNoShare))
	}
	if d := r.Yes - r.No; d > MaxYesNoImbalance || -d > MaxYesNoImbalance {
		why = append(why, fmt.Sprintf("the yes/no golds are %d yes and %d no; balance them", r.Yes, r.No))
	}
	return len(why) == 0, why
}

// CheckAnswers puts every wrong answer of every scenario's Family to judge, with the
// query scoring sends (the conversation before T, T, the gold, its variants and its
// answer type), and counts the pairs where any is judged correct. Both versions of a pair
// are checked (their T and the turn before it differ). A judge error stops the check.
func CheckAnswers(ctx context.Context, scenarios []dataset.Scenario, judge AnswerJudge) (Report, error) {
	var r Report
	pairs := map[string]bool{}
	bad := map[string]bool{}
	yesNo := map[string]int{} // pair -> +1 yes, -1 no
	for i := range scenarios {
		s := &scenarios[i]
		r.Scenarios++
		pairs[s.PairID] = true
		if IsYesNo(s) {
			p, _ := goldPolarity(s.GoldAnswer)
			yesNo[s.PairID] = p
		}
		ti := s.TIndex()
		if ti < 0 {
			continue
		}
		q := sdk.AnswerQuery{Request: s.Turns[ti].Text, GoldAnswer: s.GoldAnswer, GoldAccepted: s.GoldAccepted, AnswerType: s.AnswerType}
		for _, t := range s.Turns[:ti] {
			q.Context = append(q.Context, sdk.DialogueTurn{Speaker: t.Speaker, Text: t.Text})
		}
		for _, f := range append([]string{s.GoldAnswer}, s.GoldAccepted...) {
			if strings.TrimSpace(f) == "" {
				continue
			}
			q.Response = f
			v, err := judge.JudgeAnswer(ctx, q)
			if err != nil {
				return r, fmt.Errorf("scenario %s: judging the right answer %q: %w", s.ScenarioID, f, err)
			}
			r.Rights++
			if v.Label != sdk.LabelCorrect {
				r.Refused = append(r.Refused, Refused{ScenarioID: s.ScenarioID, Gold: s.GoldAnswer, Text: f, Rationale: v.Rationale})
			}
		}
		for _, w := range Family(s) {
			if err := ctx.Err(); err != nil {
				return r, err
			}
			q.Response = w.Text
			v, err := judge.JudgeAnswer(ctx, q)
			if err != nil {
				return r, fmt.Errorf("scenario %s: judging the wrong answer %q: %w", s.ScenarioID, w.Text, err)
			}
			r.Judged++
			if v.Label == sdk.LabelCorrect {
				bad[s.PairID] = true
				r.Accepted = append(r.Accepted, Accepted{PairID: s.PairID, ScenarioID: s.ScenarioID, Gold: s.GoldAnswer, Wrong: w, Rationale: v.Rationale})
			}
		}
	}
	r.Pairs, r.AcceptedPairs, r.YesNoPairs = len(pairs), len(bad), len(yesNo)
	for _, p := range yesNo {
		if p > 0 {
			r.Yes++
		} else {
			r.No++
		}
	}
	if r.Pairs > 0 {
		r.YesNoShare = math.Round(1e4*float64(r.YesNoPairs)/float64(r.Pairs)) / 1e4
	}
	return r, nil
}
