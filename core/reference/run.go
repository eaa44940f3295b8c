// Package reference is the text reference track of protocol.md section 7: an LLM reads
// the speaker-attributed transcript turn by turn and decides, for every turn, RESPOND or
// SILENT (answering when it responds). The decisions are scored on the same items as
// the speech models: response on T (paired exact McNemar, explicit vs implicit), silence
// on N1-N3, answer accuracy by the judge plugin; two runs can be compared for agreement.
//
// Rules this package fixes where section 7 leaves room:
//   - Every human turn gets a decision (N4 turns too, so that run agreement covers the
//     whole conversation), but only T and N1-N3 are scored: the text track has no
//     timing, so N4 yield is not measured.
//   - A reply that does not parse (see ParseReply) is asked again, up to Options.Retries
//     more times; if it still does not parse the decision is "unparseable" and it is a
//     failure wherever it is scored: on T it is no response, on N1-N3 a broken silence.
//   - Accuracy is conditional, as for the speech models: correct answers over T turns
//     answered with RESPOND. An unparseable verdict counts as wrong.
//   - The answer is taken from every RESPOND, but judged only on T.
package reference

import (
	"context"
	"fmt"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	prompt "github.com/duplexmpe/duplexmpe/prompts/reference"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Unparseable is the decision recorded when no reply could be parsed.
const Unparseable = "unparseable"

// DefaultRetries is how many more times an unparseable reply is asked for.
const DefaultRetries = 2

// Options set how the LLM is asked.
type Options struct {
	// Duty is the duty instruction given as the system prompt (the dataset's preamble).
	Duty string `json:"duty"`
	// Retries is how many more times a turn is asked when the reply does not parse.
	Retries     int      `json:"retries"`
	Temperature *float64 `json:"temperature,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
}

// Verdict is the judge's verdict on a T answer.
type Verdict struct {
	Label     string `json:"label"`
	Parsed    bool   `json:"parsed"`
	Raw       string `json:"raw,omitempty"`
	Rationale string `json:"rationale,omitempty"`
}

// Decision is the LLM's decision on one turn of one scenario.
type Decision struct {
	ScenarioID string `json:"scenario_id"`
	PairID     string `json:"pair_id"`
	Condition  string `json:"condition"`
	Turn       int    `json:"turn"`
	Label      string `json:"label"`
	Addressee  string `json:"addressee,omitempty"`
	// Decision is RESPOND, SILENT or unparseable.
	Decision string `json:"decision"`
	Answer   string `json:"answer,omitempty"`
	// Attempts is how many times the turn was asked; Raw is the last reply and Error
	// why it did not parse.
	Attempts int      `json:"attempts"`
	Raw      string   `json:"raw,omitempty"`
	Error    string   `json:"error,omitempty"`
	Verdict  *Verdict `json:"verdict,omitempty"`
}

// Responded is true for a parsed RESPOND.
func (d Decision) Responded() bool { return d.Decision == Respond }

// Run asks llm for a decision on every turn of every scenario, in order, and has judge
// grade the answer on each T turn answered with RESPOND. done, when not nil, is called
// after each scenario. A plugin error stops the run: the error names the scenario and
// turn, and the decisions made so far are returned with it.
func Run(ctx context.Context, llm sdk.LLM, judge sdk.Judge, scs []dataset.Scenario, opts Options, done func()) ([]Decision, error) {
	var out []Decision
	for si := range scs {
		sc := &scs[si]
		var history []prompt.Line
		for ti, turn := range sc.Turns {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			d, err := decide(ctx, llm, opts, history, turn)
			if err != nil {
				return out, fmt.Errorf("scenario %s turn %d: llm: %w", sc.ScenarioID, ti, err)
			}
			d.ScenarioID, d.PairID, d.Condition = sc.ScenarioID, sc.PairID, sc.Condition
			d.Turn, d.Label, d.Addressee = ti, turn.Label, turn.Addressee
			if turn.Label == protocol.LabelT && d.Responded() {
				v, err := judge.JudgeAnswer(ctx, sdk.AnswerQuery{
					Context:    dialogue(history),
					Request:    turn.Text,
					GoldAnswer: sc.GoldAnswer,
					Response:   d.Answer,
				})
				if err != nil {
					return out, fmt.Errorf("scenario %s turn %d: judge: %w", sc.ScenarioID, ti, err)
				}
				d.Verdict = &Verdict{Label: v.Label, Parsed: v.Parsed, Raw: v.Raw, Rationale: v.Rationale}
			}
			out = append(out, d)
			history = append(history, prompt.Line{Speaker: turn.Speaker, Text: turn.Text})
		}
		if done != nil {
			done()
		}
	}
	return out, nil
}

// decide asks for one turn's decision, again while the reply does not parse.
func decide(ctx context.Context, llm sdk.LLM, opts Options, history []prompt.Line, turn dataset.Turn) (Decision, error) {
	p, err := prompt.Render(prompt.Decide, prompt.Data{Duty: opts.Duty, History: history,
		Current: prompt.Line{Speaker: turn.Speaker, Text: turn.Text}})
	if err != nil {
		return Decision{}, err
	}
	req := sdk.CompletionRequest{
		Messages:    []sdk.ChatMessage{{Role: "system", Content: p.System}, {Role: "user", Content: p.User}},
		Temperature: opts.Temperature, Seed: opts.Seed, MaxTokens: opts.MaxTokens, JSON: true,
	}
	var d Decision
	for attempt := 1; attempt <= 1+max(opts.Retries, 0); attempt++ {
		c, err := llm.Complete(ctx, req)
		if err != nil {
			return Decision{}, err
		}
		d.Attempts, d.Raw = attempt, c.Content
		r, perr := ParseReply(c.Content)
		if perr == nil {
			d.Decision, d.Error = r.Decision, ""
			if r.Decision == Respond {
				d.Answer = r.Answer
			}
			return d, nil
		}
		d.Decision, d.Error = Unparseable, perr.Error()
	}
	return d, nil
}

func dialogue(lines []prompt.Line) []sdk.DialogueTurn {
	out := make([]sdk.DialogueTurn, len(lines))
	for i, l := range lines {
		out[i] = sdk.DialogueTurn{Speaker: l.Speaker, Text: l.Text}
	}
	return out
}
