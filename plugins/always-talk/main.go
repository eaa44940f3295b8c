// Command always-talk is a baseline model plugin that talks all the time: in reply to
// every input frame it emits one frame's worth of a looped recorded voice, so its
// audible output is speech from the end of the first frame to the end of the session.
// It calibrates the measures: fresh onset 0 (it is already speaking when T ends),
// response presence 1, silence preservation 0, yield n/a (no N4 event is eligible).
package main

import (
	"context"
	"fmt"

	"github.com/duplexmpe/duplexmpe/plugins/always-talk/speech"
	"github.com/duplexmpe/duplexmpe/sdk"
)

const version = "1.0.0"

type alwaysTalk struct {
	format sdk.Format
}

func (a *alwaysTalk) Describe(context.Context) (sdk.Info, error) {
	return sdk.Info{
		Name:    "always-talk",
		Version: version,
		// Conversations share nothing, so the host may play several at once.
		Capabilities: []string{"model.concurrency=4"},
		Description:  "Baseline: talks (a looped recorded voice) in every frame, whatever it hears.",
		Config:       speech.FormatFields(),
		Identity: map[string]string{
			"voice":  "flite 2.2 kal16, " + speech.VoiceDigest(),
			"format": fmt.Sprintf("%d Hz in, %d Hz out, %d-sample frames", a.format.InputRate, a.format.OutputRate, a.format.FrameSize),
		},
	}, nil
}

func (a *alwaysTalk) Configure(_ context.Context, config map[string]any) error {
	f, err := speech.ParseFormat(config)
	if err != nil {
		return err
	}
	a.format = f
	return nil
}

func (a *alwaysTalk) Start(_ context.Context, _ sdk.ConversationStart) (sdk.Conversation, error) {
	v, err := speech.Voice(a.format.OutputRate)
	if err != nil {
		return nil, err
	}
	return &talker{format: a.format, voice: speech.NewLoop(v, 0)}, nil
}

type talker struct {
	format sdk.Format
	voice  *speech.Loop
	k      int
}

func (t *talker) Format() sdk.Format { return t.format }

func (t *talker) Step(context.Context, []float32) (sdk.Output, error) {
	n := speech.FrameOutput(t.format, t.k)
	t.k++
	return sdk.Output{Samples: t.voice.Next(n)}, nil
}

func (t *talker) Close() error { return nil }

func main() { sdk.Serve(&alwaysTalk{format: speech.DefaultFormat}) }
