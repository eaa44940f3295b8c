// Package record holds what one played conversation produced (Record): the scheduler
// (core/session) writes it, the run store (core/store) saves it and reads it back, and
// session.json's shape (store.SessionInfo) is made of its Latency and TWait. It is its
// own package so that the store needs nothing of the scheduler.
package record

import (
	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Record is everything a session produced.
type Record struct {
	ConversationID string     `json:"conversation_id"`
	Format         sdk.Format `json:"format"`
	// Timeline holds the actual preamble span and turn spans, and the session length.
	Timeline timeline.Timeline `json:"timeline"`
	// Audible is the audible output at Format.OutputRate, sample-aligned with the input
	// timeline: len = floor(Frames*FrameSize*OutputRate/InputRate).
	Audible audio.PCM `json:"-"`
	// Episodes are the model's speech episodes on the audible waveform (section 4), from
	// the online detector at the end of the session: equal to the offline detector's.
	// Empty for a failed record.
	Episodes []timeline.Episode `json:"episodes,omitempty"`
	Text     []TextPiece        `json:"text,omitempty"`
	Latency  Latency            `json:"latency"`
	Frames   int                `json:"frames"`
	// TWait describes the closed-loop wait after T; nil when T was not reached.
	TWait *TWait `json:"t_wait,omitempty"`
	// Failure says why the conversation failed (model error, crash, deadline, protocol
	// violation); empty on success. A failed record is partial.
	Failure string `json:"failure,omitempty"`
	// FailureKind is what kind of failure Failure is (one of the Fail* kinds), for the
	// give-up rule, which counts failures by kind, never by their text (a message with a
	// random temporary path in it differs every time). Not stored: the text is.
	FailureKind string `json:"-"`
}

// The kinds of a conversation's failure (Record.FailureKind).
const (
	FailStart    = "start"     // Model.Start failed or missed its deadline
	FailFormat   = "format"    // the format the model declared is refused
	FailDeadline = "deadline"  // a Step (or Close) missed its deadline
	FailStep     = "step"      // a Step returned an error (the model's own, or a bound it broke)
	FailAudio    = "audio"     // the model sent samples that are not finite numbers
	FailQueue    = "queue"     // the model queued more unplayed audio than the bound
	FailWallTime = "wall-time" // the conversation ran past its wall-time bound
	FailDied     = "died"      // the plugin process died (the evaluation loop's finding)
)

// Failed reports whether the conversation failed.
func (r *Record) Failed() bool { return r.Failure != "" }

// TextPiece is one piece of the model's text channel; Time is when the reply carrying it
// arrived on the virtual clock (the end of the frame it answers).
type TextPiece struct {
	Frame int     `json:"frame"`
	Time  float64 `json:"time"`
	Text  string  `json:"text"`
}

// Latency summarises the wall time of Step, in seconds.
type Latency struct {
	Frames int     `json:"frames"`
	Mean   float64 `json:"mean"`
	P50    float64 `json:"p50"`
	P95    float64 `json:"p95"`
	Max    float64 `json:"max"`
}

// Ways the wait after T ended (section 3 rule 3).
const (
	WaitNoOnset  = "no-onset"  // no onset within t_onset_window
	WaitEndpoint = "endpoint"  // the model spoke, then was silent for t_end_silence
	WaitCap      = "cap"       // t_wait_cap reached
	WaitCut      = "cut-short" // the session ended (failure) before the wait was over
)

// TWait is the closed-loop wait after T, on the timeline.
type TWait struct {
	Start float64 `json:"start"` // = the end of T
	End   float64 `json:"end"`   // the start of the next turn
	// Onset: the audio heard during the wait established response presence (a fresh
	// onset in the window, or speaking when T ended), so the wait followed the response
	// to its endpoint. It equals the scorer's presence on the final episodes.
	Onset  bool   `json:"onset"`
	Ending string `json:"ending"`
}
