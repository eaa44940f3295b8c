package hosted

import (
	"context"

	judgeprompt "github.com/duplexmpe/duplexmpe/prompts/judge"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Chat sends one system and one user message and returns the reply's text.
type Chat func(ctx context.Context, system, user string) (string, error)

// Judge is an sdk.Judge on any chat model: the prompts/judge templates, strict parsing.
// A reply that does not parse is a verdict (incorrect or intrusion, Parsed false), not
// an error; a failed call is an error.
type Judge struct{ Chat Chat }

// JudgeAnswer implements sdk.Judge.
func (j Judge) JudgeAnswer(ctx context.Context, q sdk.AnswerQuery) (sdk.Verdict, error) {
	p, err := judgeprompt.RenderAnswer(q)
	if err != nil {
		return sdk.Verdict{}, err
	}
	raw, err := j.Chat(ctx, p.System, p.User)
	if err != nil {
		return sdk.Verdict{}, err
	}
	return judgeprompt.ParseAnswer(raw), nil
}

// ClassifySpeech implements sdk.Judge.
func (j Judge) ClassifySpeech(ctx context.Context, q sdk.SpeechQuery) (sdk.Verdict, error) {
	p, err := judgeprompt.RenderSpeech(q)
	if err != nil {
		return sdk.Verdict{}, err
	}
	raw, err := j.Chat(ctx, p.System, p.User)
	if err != nil {
		return sdk.Verdict{}, err
	}
	return judgeprompt.ParseSpeech(raw), nil
}
