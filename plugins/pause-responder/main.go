// Command pause-responder is a baseline model plugin that understands nothing: it answers
// (a stretch of the recorded voice of the baselines) whenever its input has been silent
// for pause_ms, then waits for input speech before it can answer again. In the paper's
// schedule only T (the closed-loop wait) and N4_Q (the 3 s gap) are followed by more than
// turn_gap of silence, so this detector of pauses finds the requests without hearing a
// word: its fresh-onset rate is what the timing cue alone is worth (docs/protocol.md
// section 9). With timing_control every turn gets such a pause, and it answers them all.
package main

import (
	"context"
	"fmt"
	"math"

	"github.com/duplexmpe/duplexmpe/plugins/always-talk/speech"
	"github.com/duplexmpe/duplexmpe/sdk"
)

const version = "1.0.0"

type pauseResponder struct {
	format   sdk.Format
	pauseMS  float64 // silence that triggers an answer
	answerMS float64 // length of an answer
	level    float64 // input amplitude below which a sample is silence
}

func (p *pauseResponder) Describe(context.Context) (sdk.Info, error) {
	fields := append(speech.FormatFields(),
		sdk.ConfigField{Name: "pause_ms", Type: sdk.TypeNumber, Default: 1000.0, Description: "input silence, milliseconds, after which it answers"},
		sdk.ConfigField{Name: "answer_ms", Type: sdk.TypeNumber, Default: 2500.0, Description: "length of each answer, milliseconds"},
		sdk.ConfigField{Name: "silence_level", Type: sdk.TypeNumber, Default: 0.01, Description: "input amplitude (full scale 1) below which a sample counts as silence"},
	)
	return sdk.Info{
		Name:    "pause-responder",
		Version: version,
		// Conversations share nothing, so the host may play several at once.
		Capabilities: []string{"model.concurrency=4"},
		Description:  "Baseline: answers (a recorded voice) after every pause of pause_ms in its input, understanding nothing.",
		Config:       fields,
		Identity: map[string]string{
			"voice":         "flite 2.2 kal16, " + speech.VoiceDigest(),
			"format":        fmt.Sprintf("%d Hz in, %d Hz out, %d-sample frames", p.format.InputRate, p.format.OutputRate, p.format.FrameSize),
			"pause_ms":      fmt.Sprint(p.pauseMS),
			"answer_ms":     fmt.Sprint(p.answerMS),
			"silence_level": fmt.Sprint(p.level),
		},
	}, nil
}

func (p *pauseResponder) Configure(_ context.Context, config map[string]any) error {
	f, err := speech.ParseFormat(config)
	if err != nil {
		return err
	}
	pause, err := speech.Number(config, "pause_ms", 1000, 1, 600000)
	if err != nil {
		return err
	}
	answer, err := speech.Number(config, "answer_ms", 2500, 1, 600000)
	if err != nil {
		return err
	}
	level, err := speech.Number(config, "silence_level", 0.01, 0, 1)
	if err != nil {
		return err
	}
	*p = pauseResponder{format: f, pauseMS: pause, answerMS: answer, level: level}
	return nil
}

func (p *pauseResponder) Start(_ context.Context, _ sdk.ConversationStart) (sdk.Conversation, error) {
	v, err := speech.Voice(p.format.OutputRate)
	if err != nil {
		return nil, err
	}
	return &listener{
		cfg:   *p,
		voice: speech.NewLoop(v, 0),
		pause: int(math.Round(p.pauseMS / 1000 * float64(p.format.InputRate))),
		total: int(math.Round(p.answerMS / 1000 * float64(p.format.OutputRate))),
	}, nil
}

// listener is one conversation: it counts the trailing silent input samples, answers
// once they reach pause (if it heard speech since its last answer), and plays the answer
// one frame's worth per frame.
type listener struct {
	cfg     pauseResponder
	voice   *speech.Loop
	pause   int  // silent input samples that trigger an answer
	total   int  // output samples of an answer
	silent  int  // trailing silent input samples
	armed   bool // speech heard since the last answer
	playing int  // output samples of the current answer still to play
	k       int
}

func (l *listener) Format() sdk.Format { return l.cfg.format }

func (l *listener) Step(_ context.Context, frame []float32) (sdk.Output, error) {
	k := l.k
	l.k++
	for _, x := range frame {
		if math.Abs(float64(x)) >= l.cfg.level {
			l.silent, l.armed = 0, true
		} else {
			l.silent++
		}
	}
	if l.armed && l.playing == 0 && l.silent >= l.pause {
		l.armed, l.playing = false, l.total
	}
	if l.playing == 0 {
		return sdk.Output{}, nil
	}
	n := min(speech.FrameOutput(l.cfg.format, k), l.playing)
	l.playing -= n
	return sdk.Output{Samples: l.voice.Next(n)}, nil
}

func (l *listener) Close() error { return nil }

func main() {
	sdk.Serve(&pauseResponder{format: speech.DefaultFormat, pauseMS: 1000, answerMS: 2500, level: 0.01})
}
