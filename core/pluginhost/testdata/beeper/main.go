// Command beeper is the host's test fixture: a model plugin that stays silent until it
// hears loud input (frame RMS over a threshold), then answers at once with a short tone.
// Its behaviour is simple enough to check frame by frame, which is what the pluginhost
// and CLI tests need; examples/plugin-go is the example to copy, and it speaks.
package main

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/duplexmpe/duplexmpe/sdk"
)

const (
	rate      = 24000
	frameSize = 1920 // 80 ms at 24 kHz, like Moshi
)

// beeper is the plugin. Configure sets its fields; every conversation reads them.
type beeper struct {
	mu          sync.Mutex // Configure may run while a conversation starts
	threshold   float64    // frame RMS that counts as "loud"
	toneHz      float64
	toneSeconds float64
}

func (b *beeper) Describe(context.Context) (sdk.Info, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return sdk.Info{
		Name:        "example-beeper",
		Version:     "0.1.0",
		Description: "Silent until the input is loud, then a short sine tone. An example, not a model.",
		Config: []sdk.ConfigField{
			{Name: "threshold", Type: sdk.TypeNumber, Default: 0.05, Description: "frame RMS (0..1) above which the input counts as loud"},
			{Name: "tone_hz", Type: sdk.TypeNumber, Default: 440.0, Description: "frequency of the answer tone, Hz"},
			{Name: "tone_seconds", Type: sdk.TypeNumber, Default: 0.4, Description: "duration of the answer tone, seconds"},
		},
		Identity: map[string]string{
			"threshold":    fmt.Sprint(b.threshold),
			"tone_hz":      fmt.Sprint(b.toneHz),
			"tone_seconds": fmt.Sprint(b.toneSeconds),
		},
	}, nil
}

func (b *beeper) Configure(_ context.Context, config map[string]any) error {
	get := func(name string, def float64, ok func(float64) bool, want string) (float64, error) {
		v, present := config[name]
		if !present {
			return def, nil
		}
		f, isNum := v.(float64)
		if !isNum || !ok(f) {
			return 0, fmt.Errorf("config %s = %v: want %s", name, v, want)
		}
		return f, nil
	}
	// Parse everything first: a rejected config leaves the previous one in place.
	var next struct{ threshold, toneHz, toneSeconds float64 }
	var err error
	if next.threshold, err = get("threshold", 0.05, func(f float64) bool { return f >= 0 && f <= 1 }, "a number in [0, 1]"); err != nil {
		return err
	}
	if next.toneHz, err = get("tone_hz", 440, func(f float64) bool { return f > 0 && f < rate/2 }, "a frequency in (0, 12000) Hz"); err != nil {
		return err
	}
	if next.toneSeconds, err = get("tone_seconds", 0.4, func(f float64) bool { return f > 0 && f <= 10 }, "a duration in (0, 10] seconds"); err != nil {
		return err
	}
	b.mu.Lock()
	b.threshold, b.toneHz, b.toneSeconds = next.threshold, next.toneHz, next.toneSeconds
	b.mu.Unlock()
	return nil
}

func (b *beeper) Start(context.Context, sdk.ConversationStart) (sdk.Conversation, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return &conversation{threshold: b.threshold, toneHz: b.toneHz, toneSeconds: b.toneSeconds}, nil
}

// conversation is one conversation's state: how much of the tone is left to play.
type conversation struct {
	threshold, toneHz, toneSeconds float64

	remaining int // tone samples still to emit
	phase     int // samples of tone emitted so far, for a continuous sine
}

func (c *conversation) Format() sdk.Format {
	return sdk.Format{InputRate: rate, OutputRate: rate, FrameSize: frameSize}
}

func (c *conversation) Step(_ context.Context, frame []float32) (sdk.Output, error) {
	var out sdk.Output
	if c.remaining == 0 && rms(frame) > c.threshold {
		c.remaining = int(c.toneSeconds * rate)
		c.phase = 0
		out.Text = "beep"
	}
	n := min(c.remaining, frameSize) // real time: at most one frame of output per frame
	if n > 0 {
		out.Samples = make([]float32, n)
		for i := range out.Samples {
			out.Samples[i] = float32(0.3 * math.Sin(2*math.Pi*c.toneHz*float64(c.phase)/rate))
			c.phase++
		}
		c.remaining -= n
	}
	return out, nil
}

func (c *conversation) Close() error { return nil }

func rms(x []float32) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(x)))
}

func main() { sdk.Serve(&beeper{threshold: 0.05, toneHz: 440, toneSeconds: 0.4}) }
