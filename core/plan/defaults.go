package plan

import (
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// SecondsPerWord is how long flite takes to say a word of the scripts, for datasets not
// synthesised yet: measured on the shipped dataset (274 turns, 2,129 words, 798.6 s).
const SecondsPerWord = 0.375

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

// ConversationSeconds is the nominal length of a conversation as played (protocol
// section 3), the one formula of it: the preamble and its gap, the turns with a gap
// after each, the wait after T (its onset window, what a model that does not answer
// gets), N4's gap, the tail. The plan's audio hours and the disk check before playing
// both use it.
func ConversationSeconds(sc *dataset.Scenario, preambleS float64, p protocol.Params) float64 {
	s := preambleS + p.PreambleGap + p.Tail
	for _, t := range sc.Turns {
		s += t.DurationS + p.TurnGap
		switch t.Label {
		case "T":
			s += p.TOnsetWindow
		case "N4_R":
			s += p.N4Gap
		}
	}
	return s
}
