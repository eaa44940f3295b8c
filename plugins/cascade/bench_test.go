package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/session"
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
// spotting the name (spot-cpu-s/audio-s, charged defaultSpotCost) and transcribing flite
// utterances with the cascade's bounded search (asr-cpu-s/audio-s, charged
// defaultASRCost), and flite
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
	dec, err := sphinx.Load(transcriberModel())
	if err != nil {
		b.Fatal(err)
	}
	defer dec.Close()
	spotter, err := sphinx.Load(spotterModel(defaultSpot, defaultSpotThreshold))
	if err != nil {
		b.Fatal(err)
	}
	defer spotter.Close()
	var spotCPU, asrCPU, ttsCPU, ttsS float64
	for b.Loop() {
		s0 := cpuSeconds(syscall.RUSAGE_SELF)
		for _, c := range clips {
			if _, err := spotter.Transcribe(c); err != nil {
				b.Fatal(err)
			}
		}
		c0 := cpuSeconds(syscall.RUSAGE_SELF)
		spotCPU += c0 - s0
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
	b.ReportMetric(spotCPU/(clipS*float64(b.N)), "spot-cpu-s/audio-s")
	b.ReportMetric(asrCPU/(clipS*float64(b.N)), "asr-cpu-s/audio-s")
	b.ReportMetric(ttsCPU/ttsS, "tts-cpu-s/audio-s")
}

func cpuSeconds(who int) float64 {
	var ru syscall.Rusage
	syscall.Getrusage(who, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkShippedConversationCPU is the cascade's CPU per conversation: the plugin
// process (gRPC, Silero, PocketSphinx, flite's processes) playing the shipped dataset
// (examples/scenarios, spoken by flite with bench.hcl's voices and the default 31 s
// preamble) through the real scheduler, one conversation after another, as `make run`
// plays it. It reports CPU time (the process's and its children's, from /proc), never
// wall time, so the figures hold on a loaded machine:
//   - cpu-s/conv: per conversation once the process is warm (the preamble's transcript
//     cached), which is what nearly every conversation of a run costs;
//   - first-conv-cpu-s: the first conversation, preamble included;
//   - answers/conv: answers started (the text channel's answer lines).
//
// It plays pairs hand-01 to hand-03 (6 conversations) per iteration; with
// DUPLEXMPE_MEASURE_CASCADE=1 every pair (24 conversations, the README's figures:
// `make measure-cascade`). DUPLEXMPE_CASCADE_BIN plays another build of the plugin
// instead of this package's (an earlier version, to compare).
func BenchmarkShippedConversationCPU(b *testing.B) {
	ds, err := dataset.Load("../../examples/scenarios")
	if err != nil {
		b.Fatal(err)
	}
	all := os.Getenv("DUPLEXMPE_MEASURE_CASCADE") == "1"
	var convs []session.Conversation
	pre, err := speak(context.Background(), "flite", construct.DefaultPreambleVoice, construct.DefaultPreamble, rate)
	if err != nil {
		b.Fatal(err)
	}
	for _, sc := range ds.Scenarios {
		if !all && sc.PairID > "hand-03" {
			continue
		}
		conv := session.Conversation{ID: sc.ScenarioID, PairID: sc.PairID, Preamble: pre}
		for i, tn := range sc.Turns {
			a, err := speak(context.Background(), "flite", voices[tn.Speaker], tn.Text, rate)
			if err != nil {
				b.Fatal(err)
			}
			addressee := tn.Addressee
			if addressee == "none" {
				addressee = ""
			}
			conv.Turns = append(conv.Turns, session.Turn{Index: i, Label: tn.Label, Speaker: tn.Speaker, Text: tn.Text, Addressee: addressee, Audio: a})
		}
		convs = append(convs, conv)
	}
	if len(convs) < 2 {
		b.Fatalf("%d conversations: want at least 2", len(convs))
	}
	bin := os.Getenv("DUPLEXMPE_CASCADE_BIN")
	if bin == "" {
		bin = pluginBin(b)
	}
	var steady, first float64
	var answers, steadyConvs int
	for b.Loop() {
		c, err := pluginhost.Start(context.Background(), pluginhost.Spec{Name: "cascade", Source: bin}, hclog.NewNullLogger())
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Configure(context.Background(), map[string]any{}); err != nil {
			c.Kill()
			b.Fatal(err)
		}
		m, err := c.Model()
		if err != nil {
			c.Kill()
			b.Fatal(err)
		}
		pid := c.Pid()
		before := processCPU(b, pid)
		var afterFirst float64
		for i, conv := range convs {
			rec, err := session.Run(context.Background(), m, conv, session.Options{Params: protocol.Defaults(), VAD: protocol.DefaultVAD(), Detector: detector(b)})
			if err != nil || rec.Failed() {
				c.Kill()
				b.Fatalf("%s: %v %v", conv.ID, err, rec.Failure)
			}
			for _, p := range rec.Text {
				if p.Text != "[barge-in]" {
					answers++
				}
			}
			if i == 0 {
				afterFirst = processCPU(b, pid)
			}
		}
		end := processCPU(b, pid)
		c.Kill()
		first += afterFirst - before
		steady += end - afterFirst
		steadyConvs += len(convs) - 1
	}
	b.ReportMetric(steady/float64(steadyConvs), "cpu-s/conv")
	b.ReportMetric(first/float64(b.N), "first-conv-cpu-s")
	b.ReportMetric(float64(answers)/float64(b.N*len(convs)), "answers/conv")
}

// processCPU is the user and system CPU seconds of a process and its waited-for
// children (flite), from /proc/PID/stat (in USER_HZ ticks, 100 per second on Linux).
func processCPU(tb testing.TB, pid int) float64 {
	tb.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		tb.Fatal(err)
	}
	// The command name (field 2) is in parentheses and may hold spaces: count from after it.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	var ticks float64
	for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime (fields 14-17)
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			tb.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		ticks += v
	}
	return ticks / 100
}
