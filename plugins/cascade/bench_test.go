package main

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// BenchmarkStepListening is the per-frame cost the cascade does not charge to virtual
// time: one 80 ms frame of quiet noise through the online Silero detector, in process.
func BenchmarkStepListening(b *testing.B) {
	c := &cascade{}
	if err := c.Configure(context.Background(), map[string]any{}); err != nil {
		b.Fatal(err)
	}
	defer c.closeLocked()
	conv, err := c.Start(context.Background(), sdk.ConversationStart{ID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer conv.Close()
	r := rand.New(rand.NewPCG(1, 2))
	frame := make([]float32, frameSize)
	for i := range frame {
		frame[i] = float32(r.NormFloat64() * 0.003)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := conv.Step(context.Background(), frame); err != nil {
			b.Fatal(err)
		}
	}
}
