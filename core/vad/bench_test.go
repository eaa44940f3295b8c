package vad

import (
	"syscall"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// benchAudio is about 100 s of 16 kHz audio: the test conversation repeated.
func benchAudio(b *testing.B) audio.PCM {
	conv := readPCM(b, "conversation_16k.wav")
	var parts []audio.PCM
	for range 7 {
		parts = append(parts, conv)
	}
	p, err := audio.Concat(parts...)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// cpuSeconds is the user and system CPU time of this process so far: benchmarks report
// CPU time, which load from other processes does not inflate as it does wall time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkThroughput measures, in one run and in CPU time, the VAD's offline throughput
// (audio seconds per CPU second, x-realtime-per-core) at batch 1 and batch 32, for the
// bare ONNX Runtime calls (a bound session, Run and nothing else) and for this package's
// path (Probabilities for one clip, ProbabilitiesMany for 32), and their ratios:
// go/bare-b1 and go/bare-b32 (1 = no overhead) and go-b32/go-b1 (what batching gains).
// Run with -cpu 1; every session uses one thread.
func BenchmarkThroughput(b *testing.B) {
	for _, model := range models {
		b.Run(model, func(b *testing.B) {
			d := openDetector(b, model)
			long := benchAudio(b).Samples
			// 32 clips of 10 s, each from another point of the audio, none starting with
			// digital silence (the silent prefix would skip windows).
			clips := make([][]float32, DefaultBatchRows)
			for i := range clips {
				off := (i * 3 * SampleRate) % (len(long) - 11*SampleRate)
				for off < len(long) && long[off] == 0 {
					off++
				}
				clips[i] = long[off : off+10*SampleRate]
			}
			nLong := (len(long) + Window - 1) / Window
			nClip := (10*SampleRate + Window - 1) / Window
			bare1, bare32 := newBare(b, d, 1), newBare(b, d, DefaultBatchRows)
			copy(bare1.in.GetData()[Context:], long[len(long)/2:])
			for i := range DefaultBatchRows {
				copy(bare32.in.GetData()[i*(Context+Window)+Context:], clips[i])
			}
			var cpu [4]float64 // bare b1, go b1, bare b32, go b32
			b.ResetTimer()
			for b.Loop() {
				c0 := cpuSeconds()
				for range nLong {
					if err := bare1.sess.Run(); err != nil {
						b.Fatal(err)
					}
				}
				c1 := cpuSeconds()
				if _, err := d.Probabilities(long); err != nil {
					b.Fatal(err)
				}
				c2 := cpuSeconds()
				for range nClip {
					if err := bare32.sess.Run(); err != nil {
						b.Fatal(err)
					}
				}
				c3 := cpuSeconds()
				if _, err := d.ProbabilitiesMany(clips); err != nil {
					b.Fatal(err)
				}
				c4 := cpuSeconds()
				cpu[0], cpu[1], cpu[2], cpu[3] = cpu[0]+c1-c0, cpu[1]+c2-c1, cpu[2]+c3-c2, cpu[3]+c4-c3
			}
			n := float64(b.N)
			longS, manyS := float64(len(long))/SampleRate*n, float64(DefaultBatchRows*10)*n
			b.ReportMetric(longS/cpu[0], "bare-b1-x-realtime")
			b.ReportMetric(longS/cpu[1], "go-b1-x-realtime")
			b.ReportMetric(manyS/cpu[2], "bare-b32-x-realtime")
			b.ReportMetric(manyS/cpu[3], "go-b32-x-realtime")
			b.ReportMetric(cpu[0]/cpu[1], "go/bare-b1")
			b.ReportMetric(cpu[2]/cpu[3], "go/bare-b32")
			b.ReportMetric((manyS/cpu[3])/(longS/cpu[1]), "go-b32/go-b1")
		})
	}
}

// BenchmarkEpisodes24k is what scoring one conversation costs: 100 s of 24 kHz model
// output resampled, run through Silero v5 and segmented.
func BenchmarkEpisodes24k(b *testing.B) {
	d := openDetector(b, protocol.SileroV5)
	p := audio.Resample(benchAudio(b), 24000)
	s := protocol.DefaultVAD()
	b.ResetTimer()
	c0 := cpuSeconds()
	for b.Loop() {
		if _, err := d.Episodes(p, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(p.Duration()*float64(b.N)/(cpuSeconds()-c0), "x-realtime-per-core")
}

// BenchmarkSilentOnline is the detector's share of a silent model's conversation: 100 s
// of digital silence pushed in 80 ms frames into an online detector, once the silent
// prefix is in the table (after the first conversation of a process).
func BenchmarkSilentOnline(b *testing.B) {
	d := openDetector(b, protocol.SileroV5)
	frame := make([]float32, 1280)
	play := func() {
		on, err := d.NewOnline(protocol.DefaultVAD())
		if err != nil {
			b.Fatal(err)
		}
		for range 1250 {
			if err := on.Push(frame); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := on.Finish(); err != nil {
			b.Fatal(err)
		}
	}
	c0 := cpuSeconds()
	play()
	first := cpuSeconds() - c0
	b.ResetTimer()
	c0 = cpuSeconds()
	for b.Loop() {
		play()
	}
	b.ReportMetric(first, "first-cpu-s/100s")
	b.ReportMetric((cpuSeconds()-c0)/float64(b.N), "cpu-s/100s")
}
