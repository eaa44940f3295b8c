package session

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/core/vad"
	voice "github.com/duplexmpe/duplexmpe/plugins/always-talk/speech"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// sweepFormats are the frame sizes and rates the protocol must hold for (docs/protocol.md
// section 3.5): Voila-like 20 ms, Moshi's 80 ms, Freeze-Omni's 160 ms, MiniCPM-o's 1 s, at
// 16 and 24 kHz.
func sweepFormats() []sdk.Format {
	var out []sdk.Format
	for _, rate := range []int{16000, 24000} {
		for _, ms := range []int{20, 80, 160, 1000} {
			out = append(out, sdk.Format{InputRate: rate, OutputRate: rate, FrameSize: rate * ms / 1000})
		}
	}
	return out
}

// sweepConversation is short, so that the sweeps stay cheap: a 0.05 s preamble, N1, T and
// N3 (all whole samples at 16 and 24 kHz); T ends at sweepTE. The sweeps play it without
// a tail.
func sweepConversation() Conversation {
	return conversation(16000, 0.05, []clip{{protocol.LabelN1, 0.1, 0.1}, {protocol.LabelT, 0.2, 0.3}, {protocol.LabelN3, 0.3, 0.1}})
}

const sweepTE = 0.05 + 0.5 + 0.1 + 0.5 + 0.3

func sweepParams() protocol.Params {
	p := protocol.Defaults()
	p.Tail = 0
	return p
}

// heardLag bounds how far the detector's heard audio lags a decision: the partial 32 ms
// window and the streaming resampler's look-ahead (about 2 ms at 24 kHz).
const heardLag = 512.0/ListenerRate + 0.003

// knownLag bounds how long before a decision speech can begin and still not be known to
// be speech there (section 3.5, endpoint): the heard lag, and min_speech in whole windows
// (an open episode shorter than that is no speech yet: it may be a click).
func knownLag(v protocol.VAD) float64 {
	return heardLag + math.Ceil(v.MinSpeech*ListenerRate/512)*512/ListenerRate
}

// checkAgreement is the sweep's verdict on one session: the scheduler waited for the
// response exactly when the scorer counts response presence; a counted response is not
// cut by the next turn before t_end_silence of silence; an uncounted one does not hold
// the conversation longer than it takes to know. It returns a description of the
// disagreement, or "".
func checkAgreement(rec *record.Record, p protocol.Params, v protocol.VAD, frame float64) string {
	if rec.Failed() || rec.TWait == nil {
		return "session failed: " + rec.Failure
	}
	tv := tVerdict(rec, p)
	w := rec.TWait
	tE := w.Start
	switch {
	case tv.Presence != w.Onset:
		return fmt.Sprintf("scorer presence %v, scheduler onset %v (%s at %.3f)", tv.Presence, w.Onset, w.Ending, w.End)
	case tv.Presence && w.Ending != record.WaitEndpoint:
		return fmt.Sprintf("presence, but the wait ended by %s", w.Ending)
	case !tv.Presence && w.Ending != record.WaitNoOnset:
		return fmt.Sprintf("no presence, but the wait ended by %s", w.Ending)
	}
	win := 512.0 / ListenerRate
	if tv.Presence {
		// Every episode of the response ended t_end_silence before the next turn, and
		// the wait did not run on longer than hearing that silence takes. Speech that
		// begins in the last window before the decision is not heard yet, and speech that
		// began less than min_speech before it is not known to be speech yet: it begins
		// as the next turn does.
		last := 0.0
		for _, e := range rec.Episodes {
			if e.Start < w.End-knownLag(v) && e.End > tE {
				last = math.Max(last, e.End)
			}
		}
		if last+p.TEndSilence > w.End+1e-9 {
			return fmt.Sprintf("the next turn at %.3f starts %.3f s after the response ended at %.3f", w.End, w.End-last, last)
		}
		if w.End > last+p.TEndSilence+frame+2*win+0.01 {
			return fmt.Sprintf("endpoint at %.3f, %.3f s after the response ended at %.3f", w.End, w.End-last, last)
		}
		return ""
	}
	// No presence: the window closed once that was certain; an episode that began in it
	// (dropped later) can hold it until its pause closed it.
	limit := tE + p.TOnsetWindow + frame + 2*win + 0.01
	if late := tE + p.TOnsetWindow + v.MinSpeech + v.MergePause + frame + 3*win + 0.01; w.End > limit && w.End > late {
		return fmt.Sprintf("no onset, but the window closed only at %.3f", w.End)
	}
	return ""
}

// tVerdict is the scorer's verdict on the session's T.
func tVerdict(rec *record.Record, p protocol.Params) *score.TVerdict {
	var tv *score.TVerdict
	for _, ev := range score.Events(rec.Timeline, rec.Episodes, p) {
		if ev.T != nil {
			tv = ev.T
		}
	}
	return tv
}

// onsetSweep plays, for every sweep format, responses starting at each of offsets after
// tE and lasting each of lengths, made by model(format, start, end), and counts the
// sessions whose scheduler and scorer disagree (checkAgreement). It fails the test on
// each disagreement, and when the sweep does not straddle the window's end.
func onsetSweep(t *testing.T, opts Options, offsets, lengths []float64, model func(f sdk.Format, start, end float64) sdk.Model) {
	var mu sync.Mutex
	var runs, presence, disagreements int
	t.Cleanup(func() {
		t.Logf("%d sessions, %d with presence, %d disagreements", runs, presence, disagreements)
		if !t.Failed() && (presence == 0 || presence == runs) {
			t.Errorf("the sweep did not straddle the window end: %d of %d sessions with presence", presence, runs)
		}
	})
	for _, f := range sweepFormats() {
		frame := float64(f.FrameSize) / float64(f.InputRate)
		t.Run(fmt.Sprintf("%d_Hz_%.0f_ms", f.InputRate, frame*1000), func(t *testing.T) {
			t.Parallel()
			conv := sweepConversation()
			for _, x := range offsets {
				for _, l := range lengths {
					rec := run(t, model(f, sweepTE+x, sweepTE+x+l), conv, opts)
					d := checkAgreement(rec, opts.Params, protocol.DefaultVAD(), frame)
					mu.Lock()
					runs++
					if rec.TWait.Onset {
						presence++
					}
					if d != "" {
						disagreements++
					}
					mu.Unlock()
					if d != "" {
						t.Errorf("response at tE+%.3f for %.2f s (episodes %v): %s", x, l, rec.Episodes, d)
					}
				}
			}
		})
	}
}

// offsetsAround are the onset offsets after tE from window - before to window + after
// in steps of step seconds.
func offsetsAround(window, before, after, step float64) []float64 {
	var out []float64
	for i := -int(math.Round(before / step)); i <= int(math.Round(after/step)); i++ {
		out = append(out, window+float64(i)*step)
	}
	return out
}

// The sweep of docs/protocol.md section 3.5: onsets swept across the end of the onset
// window (4.85 .. 5.07 s after tE in 5 ms steps), for every frame size and rate, with
// responses too short to keep, just long enough and long. Zero disagreements between what
// the scheduler waited for and what the scorer counts. (TestOnsetSweepWithSilero is the
// same with real Silero on real speech.)
func TestOnsetSweep(t *testing.T) {
	opts := testOptions()
	opts.Params = sweepParams()
	onsetSweep(t, opts, offsetsAround(opts.Params.TOnsetWindow, 0.15, 0.07, 0.005), []float64{0.06, 0.13, 1.5},
		func(f sdk.Format, start, end float64) sdk.Model { return speaker(f, speech(start, end)) })
}

// The endpoint side of the sweep: an answer, a pause swept across t_end_silence, then
// more speech. The wait ends exactly when t_end_silence of silence has been heard: a pause
// shorter than that keeps it (the second part is part of the response), a longer one ends
// it before the second part begins.
func TestEndpointSweep(t *testing.T) {
	opts := testOptions()
	opts.Params = protocol.Defaults() // the tail plays the second part after an endpoint
	p := opts.Params
	const tE = sweepTE
	var mu sync.Mutex
	var runs, disagreements int
	t.Cleanup(func() { t.Logf("%d sessions, %d disagreements", runs, disagreements) })
	for _, f := range sweepFormats() {
		frame := float64(f.FrameSize) / float64(f.InputRate)
		t.Run(fmt.Sprintf("%d_Hz_%.0f_ms", f.InputRate, frame*1000), func(t *testing.T) {
			t.Parallel()
			conv := sweepConversation()
			for i := -20; i <= 40; i++ {
				pause := p.TEndSilence + float64(i)*0.01
				rec := run(t, speaker(f, speech(tE+1, tE+2), speech(tE+2+pause, tE+3+pause)), conv, opts)
				d := checkAgreement(rec, p, protocol.DefaultVAD(), frame)
				// The second part is either under the next turn's start (the wait ended
				// first, after t_end_silence of heard silence) or wholly before it.
				if d == "" {
					second := tE + 2 + pause
					w := rec.TWait
					if w.End-knownLag(protocol.DefaultVAD()) > second && w.End < second+1 {
						d = fmt.Sprintf("the wait ended at %.3f, inside the second part [%.3f, %.3f)", w.End, second, second+1)
					}
					if w.End <= second && !timeline.Active(rec.Episodes, second+0.5) {
						d = "the second part is not an episode"
					}
				}
				mu.Lock()
				runs++
				if d != "" {
					disagreements++
				}
				mu.Unlock()
				if d != "" {
					t.Errorf("pause %.2f s (episodes %v): %s", pause, rec.Episodes, d)
				}
			}
		})
	}
}

// voiceSpeaker plays the recorded voice of the baselines over audible [start, end) and
// is silent elsewhere, sample-exactly like speaker.
func voiceSpeaker(v []float32, f sdk.Format, start, end float64) *scripted {
	m := &scripted{format: f}
	fr, ro, ri := int64(f.FrameSize), int64(f.OutputRate), int64(f.InputRate)
	first := int64(math.Round(start * float64(ro)))
	m.reply = func(k int) (sdk.Output, error) {
		from, to := (int64(k)+1)*fr*ro/ri, (int64(k)+2)*fr*ro/ri
		out := make([]float32, to-from)
		for i := range out {
			j := from + int64(i)
			if tt := float64(j) / float64(ro); tt >= start && tt < end {
				out[i] = v[(j-first)%int64(len(v))]
			}
		}
		return sdk.Output{Samples: out}, nil
	}
	return m
}

// The onset sweep with the real Silero online detector on real (flite) speech: every
// frame size and rate, onsets across the window end (4.75 .. 5.10 s after tE in 25 ms
// steps), a response of 0.12 s and one of 1.5 s. Zero disagreements between the scheduler
// and the scorer.
func TestOnsetSweepWithSilero(t *testing.T) {
	det, err := vad.Open(vad.Options{})
	if err != nil {
		t.Fatalf("%v\n(this test runs the real Silero model: run `make deps` first)", err)
	}
	t.Cleanup(func() { det.Close() })
	voices := map[int][]float32{}
	for _, rate := range []int{16000, 24000} {
		if voices[rate], err = voice.Voice(rate); err != nil {
			t.Fatal(err)
		}
	}
	opts := Options{Params: sweepParams(), VAD: protocol.DefaultVAD(), Detector: det}
	onsetSweep(t, opts, offsetsAround(opts.Params.TOnsetWindow, 0.25, 0.1, 0.025), []float64{0.12, 1.5},
		func(f sdk.Format, start, end float64) sdk.Model {
			return voiceSpeaker(voices[f.OutputRate], f, start, end)
		})
}
