// Command testplugin serves every plugin kind with trivial, deterministic behaviour, so
// the conformance suite and the host adapters are exercised over real gRPC for all five
// kinds. TESTPLUGIN_FAULT=<name> makes it break one rule, to prove the suite notices:
// schema (a default of the wrong type), loud (model samples outside [-1, 1]), novoices
// (an empty voice list), label (a judge label outside the protocol), kinds (Describe
// claims a kind the process does not serve is impossible: Serve fills kinds itself, so
// this fault declares an unknown config type instead).
package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/duplexmpe/duplexmpe/sdk"
)

var fault = os.Getenv("TESTPLUGIN_FAULT")

type all struct{ gain float64 }

func (a *all) Describe(context.Context) (sdk.Info, error) {
	info := sdk.Info{
		Name:    "testplugin",
		Version: "1.0.0",
		Config: []sdk.ConfigField{
			{Name: "gain", Type: sdk.TypeNumber, Default: 0.5},
			{Name: "mode", Type: sdk.TypeString, Default: "plain", Allowed: []string{"plain", "fancy"}},
			{Name: "tags", Type: sdk.TypeListString, Default: []string{"a", "b"}},
			{Name: "endpoint", Type: sdk.TypeString, Default: "", Transport: true},
		},
	}
	switch fault {
	case "schema":
		info.Config[0].Default = "loud"
	case "kinds":
		info.Config[2].Type = "list(any)"
	}
	return info, nil
}

func (a *all) Configure(_ context.Context, config map[string]any) error {
	g, ok := config["gain"].(float64)
	if !ok {
		return errors.New("gain: want a number")
	}
	a.gain = g
	fmt.Println("configured gain", g) // reaches the host over go-plugin's stdio stream
	return nil
}

func (a *all) Start(context.Context, sdk.ConversationStart) (sdk.Conversation, error) {
	return &echo{gain: a.gain}, nil
}

// echo answers each 20 ms frame at 16 kHz with the frame scaled by gain, at 16 kHz.
type echo struct{ gain float64 }

func (e *echo) Format() sdk.Format {
	return sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 320}
}

func (e *echo) Step(_ context.Context, frame []float32) (sdk.Output, error) {
	out := make([]float32, len(frame))
	for i, v := range frame {
		out[i] = float32(e.gain) * v
	}
	if fault == "loud" {
		out[0] = 1.5
	}
	return sdk.Output{Samples: out}, nil
}

func (e *echo) Close() error { return nil }

func (a *all) Voices(context.Context) ([]sdk.Voice, error) {
	if fault == "novoices" {
		return nil, nil
	}
	return []sdk.Voice{{ID: "beep", Description: "one tone per character", Rate: 16000}}, nil
}

func (a *all) Synthesize(_ context.Context, text, voice string) (sdk.Audio, error) {
	if voice != "beep" {
		return sdk.Audio{}, fmt.Errorf("unknown voice %q; the voices are: beep", voice)
	}
	samples := make([]float32, 0, 800*len(text))
	for _, r := range text {
		f := 200 + float64(r%32)*20
		for i := range 800 {
			samples = append(samples, float32(0.2*math.Sin(2*math.Pi*f*float64(i)/16000)))
		}
	}
	return sdk.Audio{Samples: samples, Rate: 16000}, nil
}

func (a *all) Transcribe(_ context.Context, clip sdk.Audio, language string) (string, error) {
	if language == "panic" { // to show that Serve survives a panicking call
		panic("asked to panic")
	}
	return fmt.Sprintf("%d samples at %d Hz", len(clip.Samples), clip.Rate), nil
}

func (a *all) JudgeAnswer(_ context.Context, q sdk.AnswerQuery) (sdk.Verdict, error) {
	label := sdk.LabelIncorrect
	if strings.Contains(strings.ToLower(q.Response), strings.ToLower(q.GoldAnswer)) {
		label = sdk.LabelCorrect
	}
	if fault == "label" {
		label = "maybe"
	}
	return sdk.Verdict{Label: label, Parsed: true, Raw: label}, nil
}

func (a *all) ClassifySpeech(_ context.Context, q sdk.SpeechQuery) (sdk.Verdict, error) {
	label := sdk.LabelIntrusion
	if len(strings.Fields(q.Transcript)) <= 2 {
		label = sdk.LabelAcknowledgement
	}
	return sdk.Verdict{Label: label, Parsed: true, Raw: label}, nil
}

func (a *all) Complete(_ context.Context, r sdk.CompletionRequest) (sdk.Completion, error) {
	if len(r.Messages) == 0 {
		return sdk.Completion{}, errors.New("no messages")
	}
	last := r.Messages[len(r.Messages)-1].Content
	return sdk.Completion{Content: "echo: " + last, Model: "echo", PromptTokens: len(strings.Fields(last)), CompletionTokens: 1, FinishReason: "stop"}, nil
}

func main() { sdk.Serve(&all{gain: 0.5}) }
