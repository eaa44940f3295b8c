package main

import (
	"context"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/duplexmpe/duplexmpe/plugins/pocketsphinx/sphinx"
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

// BenchmarkComputeCost measures, in CPU time (getrusage, not wall time, so the figures
// hold on a loaded machine), what the default cost model charges per second: PocketSphinx
// transcribing flite utterances (asr-cpu-s/audio-s, charged defaultASRCost) and flite
// synthesising answers, its processes included (tts-cpu-s/audio-s, charged
// defaultTTSCost).
func BenchmarkComputeCost(b *testing.B) {
	ctx := context.Background()
	answers := []string{
		"It's six twenty as I heard okay the chicken goes in at six twenty done.",
		"It's forty five minutes as I heard recipe says forty five minutes at four hundred.",
		"Sorry, I did not hear anything in the conversation that answers that.",
	}
	var clips [][]float32
	var clipS float64
	for i, text := range answers {
		p, err := speak(ctx, "flite", []string{"kal16", "awb", "rms"}[i], text, rate)
		if err != nil {
			b.Fatal(err)
		}
		clips = append(clips, p.Samples)
		clipS += p.Duration()
	}
	dec, err := sphinx.Load(sphinx.DefaultModel())
	if err != nil {
		b.Fatal(err)
	}
	defer dec.Close()
	var asrCPU, ttsCPU, ttsS float64
	for b.Loop() {
		c0 := cpuSeconds(syscall.RUSAGE_SELF)
		for _, c := range clips {
			if _, err := dec.Transcribe(c); err != nil {
				b.Fatal(err)
			}
		}
		c1, k1 := cpuSeconds(syscall.RUSAGE_SELF), cpuSeconds(syscall.RUSAGE_CHILDREN)
		for _, text := range answers {
			p, err := speak(ctx, "flite", "slt", text, rate)
			if err != nil {
				b.Fatal(err)
			}
			ttsS += p.Duration()
		}
		asrCPU += c1 - c0
		ttsCPU += cpuSeconds(syscall.RUSAGE_SELF) - c1 + cpuSeconds(syscall.RUSAGE_CHILDREN) - k1
	}
	b.ReportMetric(asrCPU/(clipS*float64(b.N)), "asr-cpu-s/audio-s")
	b.ReportMetric(ttsCPU/ttsS, "tts-cpu-s/audio-s")
}

func cpuSeconds(who int) float64 {
	var ru syscall.Rusage
	syscall.Getrusage(who, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
