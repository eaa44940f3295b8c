// Command silent is a baseline model plugin that never emits audio. It calibrates the
// measures: fresh onset 0, response presence 0, silence preservation 1, yield n/a.
package main

import (
	"context"
	"fmt"

	"github.com/duplexmpe/duplexmpe/plugins/always-talk/speech"
	"github.com/duplexmpe/duplexmpe/sdk"
)

const version = "1.0.0"

type silent struct {
	format sdk.Format
}

func (s *silent) Describe(context.Context) (sdk.Info, error) {
	return sdk.Info{
		Name:    "silent",
		Version: version,
		// Conversations share nothing, so the host may play several at once.
		Capabilities: []string{"model.concurrency=4"},
		Description:  "Baseline: never says anything.",
		Config:       speech.FormatFields(),
		Identity: map[string]string{
			"format": fmt.Sprintf("%d Hz in, %d Hz out, %d-sample frames", s.format.InputRate, s.format.OutputRate, s.format.FrameSize),
		},
	}, nil
}

func (s *silent) Configure(_ context.Context, config map[string]any) error {
	f, err := speech.ParseFormat(config)
	if err != nil {
		return err
	}
	s.format = f
	return nil
}

func (s *silent) Start(context.Context, sdk.ConversationStart) (sdk.Conversation, error) {
	return conversation{s.format}, nil
}

type conversation struct{ format sdk.Format }

func (c conversation) Format() sdk.Format { return c.format }

func (c conversation) Step(context.Context, []float32) (sdk.Output, error) {
	return sdk.Output{}, nil
}

func (c conversation) Close() error { return nil }

func main() { sdk.Serve(&silent{format: speech.DefaultFormat}) }
