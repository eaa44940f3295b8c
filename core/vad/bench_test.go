package vad

import (
	"slices"
	"testing"
	"time"

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

func reportRTF(b *testing.B, audioSeconds float64, windows int) {
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(audioSeconds/perOp, "x-realtime")
	b.ReportMetric(perOp/float64(windows)*1e6, "µs/window")
}

// BenchmarkProbabilities is the Go path: window framing, context and state carrying.
// Run with -cpu 1; the session itself uses one thread.
func BenchmarkProbabilities(b *testing.B) {
	for _, model := range models {
		b.Run(model, func(b *testing.B) {
			d := openDetector(b, model)
			p := benchAudio(b)
			n := (len(p.Samples) + Window - 1) / Window
			b.ResetTimer()
			for b.Loop() {
				if _, err := d.Probabilities(p.Samples); err != nil {
					b.Fatal(err)
				}
			}
			reportRTF(b, p.Duration(), n)
		})
	}
}

// BenchmarkBareRuntime is the floor: only the ONNX Runtime Run calls, one per window of
// the same audio, on a session with the same bound tensors and options.
func BenchmarkBareRuntime(b *testing.B) {
	for _, model := range models {
		b.Run(model, func(b *testing.B) {
			d := openDetector(b, model)
			p := benchAudio(b)
			n := (len(p.Samples) + Window - 1) / Window
			s, err := d.get()
			if err != nil {
				b.Fatal(err)
			}
			defer d.put(s)
			copy(s.in[Context:], p.Samples[len(p.Samples)/2:])
			b.ResetTimer()
			for b.Loop() {
				for range n {
					if err := s.sess.Run(); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportRTF(b, p.Duration(), n)
		})
	}
}

// BenchmarkEpisodes24k is what scoring one conversation costs: 100 s of 24 kHz model
// output resampled, run through Silero v5 and segmented.
func BenchmarkEpisodes24k(b *testing.B) {
	d := openDetector(b, protocol.SileroV5)
	p := audio.Resample(benchAudio(b), 24000)
	n := int(p.Duration()*SampleRate+Window-1) / Window
	s := protocol.DefaultVAD()
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.Episodes(p, s); err != nil {
			b.Fatal(err)
		}
	}
	reportRTF(b, p.Duration(), n)
}

// BenchmarkOverhead measures how much the Go path adds to the bare ONNX Runtime call. Per
// window it times one step (framing, context and state copies, the Run call) and then one
// bare Run on the same session, so that load from other processes hits both alike, and it
// compares the medians, which ignore the windows where the process was preempted.
func BenchmarkOverhead(b *testing.B) {
	for _, model := range models {
		b.Run(model, func(b *testing.B) {
			d := openDetector(b, model)
			p := readPCM(b, "conversation_16k.wav")
			s, err := d.get()
			if err != nil {
				b.Fatal(err)
			}
			defer d.put(s)
			var goPath, bare []time.Duration
			for b.Loop() {
				s.reset()
				for off := 0; off < len(p.Samples); off += Window {
					t0 := time.Now()
					if _, err := s.step(p.Samples[off:min(off+Window, len(p.Samples))]); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					if err := s.sess.Run(); err != nil {
						b.Fatal(err)
					}
					goPath, bare = append(goPath, t1.Sub(t0)), append(bare, time.Since(t1))
				}
			}
			g, r := median(goPath), median(bare)
			b.ReportMetric(100*(g-r)/r, "%overhead")
			b.ReportMetric(r*1e6, "bare-µs/window")
			b.ReportMetric(g*1e6, "go-µs/window")
		})
	}
}

func median(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2].Seconds()
}
