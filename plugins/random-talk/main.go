// Command random-talk is a baseline model plugin that talks in random bursts, deaf to
// what it hears: bursts start as a Poisson process (burst_rate per minute) and last an
// exponentially distributed time (mean mean_length seconds), each a stretch of a looped
// recorded voice. The draws are seeded by the config seed, the conversation's seed and
// its id, so a conversation replays identically.
package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/duplexmpe/duplexmpe/plugins/always-talk/speech"
	"github.com/duplexmpe/duplexmpe/sdk"
)

const version = "1.0.0"

type randomTalk struct {
	format     sdk.Format
	burstRate  float64 // bursts per minute of silence
	meanLength float64 // seconds
	seed       int64
}

func (r *randomTalk) Describe(context.Context) (sdk.Info, error) {
	fields := append(speech.FormatFields(),
		sdk.ConfigField{Name: "burst_rate", Type: sdk.TypeNumber, Default: 6.0, Description: "bursts per minute of silence (a Poisson process)"},
		sdk.ConfigField{Name: "mean_length", Type: sdk.TypeNumber, Default: 2.0, Description: "mean burst length, seconds (exponentially distributed)"},
		sdk.ConfigField{Name: "seed", Type: sdk.TypeNumber, Default: 0.0, Description: "seed, combined with each conversation's seed and id"},
	)
	return sdk.Info{
		Name:    "random-talk",
		Version: version,
		// Conversations share nothing, so the host may play several at once.
		Capabilities: []string{"model.concurrency=4"},
		Description:  "Baseline: talks in seeded random bursts, whatever it hears.",
		Config:       fields,
		Identity: map[string]string{
			"format":      fmt.Sprintf("%d Hz in, %d Hz out, %d-sample frames", r.format.InputRate, r.format.OutputRate, r.format.FrameSize),
			"burst_rate":  fmt.Sprint(r.burstRate),
			"mean_length": fmt.Sprint(r.meanLength),
			"seed":        fmt.Sprint(r.seed),
		},
	}, nil
}

func (r *randomTalk) Configure(_ context.Context, config map[string]any) error {
	f, err := speech.ParseFormat(config)
	if err != nil {
		return err
	}
	rate, err := speech.Number(config, "burst_rate", 6, 0, 600)
	if err != nil {
		return err
	}
	mean, err := speech.Number(config, "mean_length", 2, 0.01, 600)
	if err != nil {
		return err
	}
	seed, err := speech.Number(config, "seed", 0, math.MinInt32, math.MaxInt32)
	if err != nil {
		return err
	}
	if seed != math.Trunc(seed) {
		return fmt.Errorf("config seed = %v: want a whole number", seed)
	}
	*r = randomTalk{format: f, burstRate: rate, meanLength: mean, seed: int64(seed)}
	return nil
}

func (r *randomTalk) Start(_ context.Context, req sdk.ConversationStart) (sdk.Conversation, error) {
	v, err := speech.Voice(r.format.OutputRate)
	if err != nil {
		return nil, err
	}
	h := fnv.New64a()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(r.seed))
	binary.LittleEndian.PutUint64(b[8:], uint64(req.Seed))
	h.Write(b[:])
	h.Write([]byte(req.ID))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
	frameSec := float64(r.format.FrameSize) / float64(r.format.InputRate)
	return &burster{
		cfg:    *r,
		rng:    rng,
		voice:  speech.NewLoop(v, rng.IntN(len(v))),
		pStart: 1 - math.Exp(-r.burstRate/60*frameSec),
		frame:  frameSec,
	}, nil
}

type burster struct {
	cfg    randomTalk
	rng    *rand.Rand
	voice  *speech.Loop
	pStart float64 // probability that a burst starts in a silent frame
	frame  float64 // seconds per frame
	left   int     // frames of the current burst still to play
	k      int
}

func (b *burster) Format() sdk.Format { return b.cfg.format }

func (b *burster) Step(context.Context, []float32) (sdk.Output, error) {
	k := b.k
	b.k++
	if b.left == 0 && b.rng.Float64() < b.pStart {
		length := b.rng.ExpFloat64() * b.cfg.meanLength
		b.left = max(1, int(math.Round(length/b.frame)))
	}
	if b.left == 0 {
		return sdk.Output{}, nil
	}
	b.left--
	return sdk.Output{Samples: b.voice.Next(speech.FrameOutput(b.cfg.format, k))}, nil
}

func (b *burster) Close() error { return nil }

func main() { sdk.Serve(&randomTalk{format: speech.DefaultFormat, burstRate: 6, meanLength: 2}) }
