package plan

import (
	"math"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/session"
)

// SecondsPerWord is how long flite takes to say a word of the scripts, for datasets not
// synthesised yet: measured on the shipped dataset (274 turns, 2,129 words, 798.6 s).
const SecondsPerWord = 0.375

// SynthesisCPUPerAudioS is the CPU a dataset build spends per second of speech it
// synthesises, for `plan`'s estimate of a build: Kokoro's int8 graph on one thread,
// measured at 1.30 (jm_kumo) and 1.27 (jf_tebukuro) CPU-s per audio-s
// (plugins/onnx-tts/README.md). flite and Piper cost far less (Piper joe 0.098), so the
// estimate is an upper one for a set in those voices.
const SynthesisCPUPerAudioS = 1.3

// Build is what a dataset build has still to synthesise for a run: the distinct clips
// (a speaker's line, the preamble) of the scenarios it plays that the built dataset
// does not hold yet, their length from their words (SecondsPerWord), and the CPU that
// costs at SynthesisCPUPerAudioS. An estimate: the voices a scenario draws are known
// only at build time, so a line is counted once per speaker.
type Build struct {
	// Pairs the run plays, of OfPairs in the set.
	Pairs      int     `json:"pairs"`
	OfPairs    int     `json:"of_pairs"`
	Clips      int     `json:"clips"`
	AudioS     float64 `json:"audio_s"`
	CPUSeconds float64 `json:"cpu_s"`
}

// Defaults are the rates of a model with no measurement of its own, measured on the
// 2-core development machine (docs/scale.md, "Measured"):
//
//   - PlayOverheadS: the harness's own host CPU per conversation, playing the silent
//     baseline over 1,000 generated conversations of 84 s (make bench-scale: 0.270 s,
//     and 0.279 s over 100). The VAD costs more on a model that talks;
//   - DiskPerItem: an item's files other than its audio, verdicts included;
//   - DiskPerAudioS: the most audio per second of conversation of the baselines
//     measured, 16-bit FLAC of the beeper (a 440 Hz tone two thirds of the time, at
//     24 kHz): 7.8 KB/s. A model that talks more, or whose silence is noise rather than
//     zeros, takes more: measure a pilot run (--measured);
//   - ScorePerItemS: scoring a conversation of the shipped baselines with one worker
//     (pocketsphinx and the lexical judge).
//
// A model's RTF is never assumed.
var Defaults = Rates{
	PlayOverheadS: 0.27,
	DiskPerItem:   18e3,
	DiskPerAudioS: 7.8e3,
	ScorePerItemS: 5,
	Source:        "defaults measured on the development machine (docs/scale.md)",
}

// Clips says how long a dataset's audio is: the sample rate of its clips (0: unknown,
// lengths estimated from words) and the length of its preamble.
type Clips struct {
	Rate      int
	PreambleS float64
}

// Frame is a model's input stream as a played item records it (session.json): its
// input rate and frame size. The zero Frame is a model not measured yet: lengths are
// counted on the sample at the clips' rate.
type Frame struct {
	InputRate int `json:"input_rate,omitempty"`
	Size      int `json:"frame_size,omitempty"`
}

// Shape is sc as the scheduler lays it out (session.Lay): each clip DurationS long at
// the clips' rate.
func Shape(sc *dataset.Scenario, clips Clips) session.Shape {
	rate := clips.Rate
	if rate <= 0 {
		rate = unknownRate
	}
	n := func(sec float64) session.Clip {
		return session.Clip{Samples: int64(math.Round(sec * float64(rate))), Rate: rate}
	}
	sh := session.Shape{ID: sc.ScenarioID, PairID: sc.PairID, Preamble: n(clips.PreambleS)}
	for _, t := range sc.Turns {
		sh.Turns = append(sh.Turns, session.ShapeTurn{Label: t.Label, Clip: n(t.DurationS), GapAfterS: t.GapAfterS})
	}
	return sh
}

// unknownRate stands for the clips' rate of a dataset not synthesised yet.
const unknownRate = 16000

// ConversationSeconds is the length of sc as the scheduler plays it (session.Lay,
// protocol section 3.3: the preamble and its gap, the turns with the gap the profile
// gives each, n4_gap, the tail) to a model with input stream f, every wait after T at
// its cap (t_wait_cap; Layout.Length): the longest the conversation lasts. seed is the
// item's (the timing-cue control's pads depend on it). The plan's audio hours and
// disk, and the disk check before playing, all count it.
func ConversationSeconds(sc *dataset.Scenario, clips Clips, p protocol.Params, seed int64, f Frame) float64 {
	rate := f.InputRate
	if rate <= 0 {
		rate = max(clips.Rate, 0)
	}
	if rate <= 0 {
		rate = unknownRate
	}
	return session.Lay(Shape(sc, clips), p, seed, rate).Seconds(f.Size)
}
