// Package protocol holds the constants of the Duplex-MPE evaluation protocol
// (docs/protocol.md section 8) and the labels of section 2. Every value is a default that
// a run file may override; every run records the values it used.
package protocol

import (
	"fmt"
	"strings"
	"time"
)

// Turn labels (protocol section 2).
const (
	LabelT   = "T"    // the one unresolved request addressed to Aria: answer
	LabelN1  = "N1"   // Aria mentioned, not asked: stay silent
	LabelN2  = "N2"   // addressed to another human or device: stay silent
	LabelN3  = "N3"   // no addressee: stay silent
	LabelN4Q = "N4_Q" // a question to Aria ...
	LabelN4R = "N4_R" // ... resolved by a human: stop / stay silent
)

// Labels lists every turn label.
var Labels = []string{LabelT, LabelN1, LabelN2, LabelN3, LabelN4Q, LabelN4R}

// LabelMeaning says what a turn label means and what Aria should do, as the table of
// docs/protocol.md section 2.1 says it (a test holds the two equal); the report and the
// viewer define the labels with it on every page.
type LabelMeaning struct {
	Label, Meaning, Should string
}

// LabelMeanings are the labels of Labels, in order, with their meanings.
var LabelMeanings = []LabelMeaning{
	{LabelT, "the one unresolved request addressed to Aria", "answer"},
	{LabelN1, "Aria is mentioned but not asked anything", "stay silent"},
	{LabelN2, `addressed to someone else: a human, or another device ("Hey Siri, ...")`, "stay silent"},
	{LabelN3, "no addressee: self-talk, thinking aloud", "stay silent"},
	{LabelN4Q, "a question put to Aria ...", "answer in the gap or stay silent (either is right)"},
	{LabelN4R, `... then resolved by a human (answered, or "never mind")`, "stop, stay silent"},
}

// IsSilenceLabel reports whether a turn opens a silence window (N1, N2, N3).
func IsSilenceLabel(label string) bool {
	return label == LabelN1 || label == LabelN2 || label == LabelN3
}

// Conditions of a pair.
const (
	Explicit = "explicit"
	Implicit = "implicit"
)

// Roles a model plays in a run (section 6.3): under test (the default), or a baseline,
// reference or calibration model that calibrates the measures and stays out of the
// statistics family. A calibration model is told the answers (the oracle): its scores are
// what the chain of voices, VAD, ASR and judge lets a perfect model score.
const (
	RoleTest        = "test"
	RoleBaseline    = "baseline"
	RoleReference   = "reference"
	RoleCalibration = "calibration"
)

// Roles lists the accepted roles, the default first.
var Roles = []string{RoleTest, RoleBaseline, RoleReference, RoleCalibration}

// T position buckets.
var TPositions = []string{"early-middle", "middle", "late-middle"}

// N2 addressees.
const (
	AddresseeHuman  = "human"
	AddresseeDevice = "device"
)

// Params are the scheduling and scoring constants, in seconds (section 8).
type Params struct {
	PreambleGap   float64 `json:"preamble_gap"`
	TurnGap       float64 `json:"turn_gap"`
	TOnsetWindow  float64 `json:"t_onset_window"`
	TEndSilence   float64 `json:"t_end_silence"`
	TWaitCap      float64 `json:"t_wait_cap"`
	N4Gap         float64 `json:"n4_gap"`
	YieldDeadline float64 `json:"yield_deadline"`
	YieldObserve  float64 `json:"yield_observe"`
	MinEligible   int     `json:"min_eligible"`
	Tail          float64 `json:"tail"`
	// BootstrapResamples for between-model differences (section 6).
	BootstrapResamples int `json:"bootstrap_resamples"`
	// TimingControl pads every ordinary turn with the silence a request gets (section
	// 3.6), so that the length of a pause stops announcing the request. Off by default:
	// the paper's schedule.
	TimingControl bool `json:"timing_control,omitempty"`
	// GapProfile chooses the silence after an ordinary turn (section 3.3): GapPaper
	// (also written "", the default) is turn_gap after every one, as the paper;
	// GapNatural is each turn's own gap as the dataset records it (gap_after_s, drawn
	// from a naturalistic distribution when the set was compiled).
	GapProfile string `json:"gap_profile,omitempty"`
}

// Gap profiles (section 3.3).
const (
	GapPaper   = "paper"
	GapNatural = "natural"
)

// Canonical is p with equal settings written one way (gap_profile "paper" as ""), so
// that keys built from it change with behaviour only.
func (p Params) Canonical() Params {
	if p.GapProfile == GapPaper {
		p.GapProfile = ""
	}
	return p
}

// Natural reports whether the gap profile is GapNatural.
func (p Params) Natural() bool { return p.GapProfile == GapNatural }

// Revisions of the rules the code implements. A revision changes when the same inputs
// would give another result, and only then; the item key carries SchedulerRevision and
// the scoring key ScoringRevision, so stored sessions and verdicts made under other rules
// are not reused (docs/protocol.md section 10).
const (
	// 2: the wait after T decides on episodes as heard (section 3.4), not on raw windows.
	// 3: a pause closes its episode merge_pause after it began even when faint (section
	// 4.2), and the endpoint counts no open episode shorter than min_speech (section 3.5).
	SchedulerRevision = 3
	// 2: answer audio per the paper, the N4 partition, window response closed at r.
	// 3: episodes recomputed for other VAD settings follow the faint-pause rule of
	// section 4.2.
	// 4: every speech episode of the model is transcribed once for the record (the
	// verdicts' words, shown by the viewer and explain); no verdict reads them.
	// 5: the words are the transcripts of the clips the verdicts cut out plus every
	// stretch of an episode none covered, not every episode whole again.
	ScoringRevision = 5
)

// Defaults returns the protocol defaults of section 8.
func Defaults() Params {
	return Params{
		PreambleGap:        0.5,
		TurnGap:            0.5,
		TOnsetWindow:       5,
		TEndSilence:        2,
		TWaitCap:           60,
		N4Gap:              3,
		YieldDeadline:      2,
		YieldObserve:       0.5,
		MinEligible:        30,
		Tail:               2,
		BootstrapResamples: 10000,
	}
}

// Validate reports values that make no sense, naming each.
func (p Params) Validate() error {
	var bad []string
	check := func(name string, v float64) {
		if v < 0 {
			bad = append(bad, fmt.Sprintf("%s = %g must not be negative", name, v))
		}
	}
	check("preamble_gap", p.PreambleGap)
	check("turn_gap", p.TurnGap)
	check("t_onset_window", p.TOnsetWindow)
	check("t_end_silence", p.TEndSilence)
	check("t_wait_cap", p.TWaitCap)
	check("n4_gap", p.N4Gap)
	check("yield_deadline", p.YieldDeadline)
	check("yield_observe", p.YieldObserve)
	check("tail", p.Tail)
	switch p.GapProfile {
	case "", GapPaper:
	case GapNatural:
		if p.TimingControl {
			bad = append(bad, "gap_profile = \"natural\" and timing_control = true both set the silence after ordinary turns; choose one")
		}
	default:
		bad = append(bad, fmt.Sprintf("gap_profile = %q must be %q or %q", p.GapProfile, GapPaper, GapNatural))
	}
	if p.TWaitCap < p.TOnsetWindow {
		bad = append(bad, fmt.Sprintf("t_wait_cap = %g must be at least t_onset_window = %g", p.TWaitCap, p.TOnsetWindow))
	}
	if p.MinEligible < 1 {
		bad = append(bad, fmt.Sprintf("min_eligible = %d must be at least 1", p.MinEligible))
	}
	if p.BootstrapResamples < 1 {
		bad = append(bad, fmt.Sprintf("bootstrap_resamples = %d must be at least 1", p.BootstrapResamples))
	}
	if len(bad) > 0 {
		return fmt.Errorf("protocol: %s", strings.Join(bad, "; "))
	}
	return nil
}

// Silero model names.
const (
	SileroV5 = "silero-v5"
	SileroV6 = "silero-v6"
)

// VAD are the speech-detection settings of section 4, durations in seconds.
type VAD struct {
	Model     string  `json:"model"`
	Threshold float64 `json:"threshold"`
	// NegThreshold ends a running episode; 0 means max(Threshold - 0.15, 0.01).
	NegThreshold float64 `json:"neg_threshold"`
	MinSpeech    float64 `json:"min_speech"`
	MergePause   float64 `json:"merge_pause"`
	SpeechPad    float64 `json:"speech_pad"`
}

// DefaultVAD returns the VAD defaults of section 8.
func DefaultVAD() VAD {
	return VAD{Model: SileroV5, Threshold: 0.5, MinSpeech: 0.120, MergePause: 0.800, SpeechPad: 0}
}

// NegThresholdFloor is the lowest default negative threshold: Silero's
// get_speech_timestamps uses max(threshold - 0.15, 0.01) (section 4.2).
const NegThresholdFloor = 0.01

// EffectiveNegThreshold is the probability below which a running episode may end: the
// configured one, or max(threshold - 0.15, 0.01) as Silero's reference does.
func (v VAD) EffectiveNegThreshold() float64 {
	if v.NegThreshold > 0 {
		return v.NegThreshold
	}
	return max(v.Threshold-0.15, NegThresholdFloor)
}

// Causal reports whether episodes are known from the audio heard so far (section 3.4):
// padding moves an episode's start earlier than the speech and its end by what comes
// next, so with speech_pad > 0 the scheduler's decisions can differ from the scorer's.
func (v VAD) Causal() bool { return v.SpeechPad <= 0 }

// Validate reports values that make no sense, naming each.
func (v VAD) Validate() error {
	var bad []string
	if v.Model != SileroV5 && v.Model != SileroV6 {
		bad = append(bad, fmt.Sprintf("model = %q must be %q or %q", v.Model, SileroV5, SileroV6))
	}
	if v.Threshold <= 0 || v.Threshold >= 1 {
		bad = append(bad, fmt.Sprintf("threshold = %g must be between 0 and 1", v.Threshold))
	}
	if n := v.EffectiveNegThreshold(); n <= 0 || n > v.Threshold {
		bad = append(bad, fmt.Sprintf("negative threshold = %g must be in (0, threshold]", n))
	}
	for name, d := range map[string]float64{"min_speech": v.MinSpeech, "merge_pause": v.MergePause, "speech_pad": v.SpeechPad} {
		if d < 0 {
			bad = append(bad, fmt.Sprintf("%s = %g must not be negative", name, d))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("vad: %s", strings.Join(bad, "; "))
	}
	return nil
}

// The bounds of one conversation (docs/protocol.md sections 2.2, 3.1 and 3.7): the
// project's choice, so that no valid input costs without limit. A scenario of 10,010
// short turns took the host past 4 GB; 1-sample frames at 192 kHz are 3.3 hours of
// round trips for one 75 s conversation.
const (
	// MaxTurns is the most turns a scenario has (open v1's longest has 15).
	MaxTurns = 100
	// MaxScenarioSeconds bounds a scenario's audio: its clips and natural gaps (the
	// preamble has its own bound).
	MaxScenarioSeconds = 900.0
	// MinFrameSeconds is the shortest frame a model may declare (10 ms; real models use
	// 20 ms to 1 s).
	MinFrameSeconds = 0.01
	// DefaultConversationWallTime bounds the wall time of one conversation, start to
	// close: past it the conversation fails and the run goes on (the plugin block's
	// conversation_timeout changes it).
	DefaultConversationWallTime = time.Hour
)
