// Package sdk is the contract a plugin author implements, in Go: one small interface per
// plugin kind, plus Plugin, which every plugin implements. Serve (in serve.go) runs a
// plugin as a go-plugin process speaking the gRPC protocol of sdk/proto/duplexmpe/v1.
//
// The host (core/pluginhost) hands out values that implement the same interfaces over
// gRPC, so code that uses a TTS or a Model does not know whether it is in-process or a
// plugin.
package sdk

import (
	"context"
	"strconv"
	"strings"

	"github.com/duplexmpe/duplexmpe/sdk/contract"
)

// ProtocolVersion is the plugin protocol major version: the go-plugin protocol version
// and the proto package duplexmpe.v1.
const ProtocolVersion = 1

// The go-plugin handshake cookie. It is a guard against running a plugin by hand, not a
// security measure.
const (
	MagicCookieKey   = "DUPLEXMPE_PLUGIN"
	MagicCookieValue = "b3c1f0a4e5d2497c9a6e8f7d1c2b3a40"
)

// Plugin kinds.
const (
	KindModel = "model"
	KindTTS   = "tts"
	KindASR   = "asr"
	KindJudge = "judge"
	KindLLM   = "llm"
)

// Capabilities a plugin may declare in Info.Capabilities: optional features of the
// contract, which the host uses only when they are declared.
const (
	// CapText: the model emits a text channel (Output.Text), which the host records.
	CapText = "model.text"
	// CapInstruction: the model honours ConversationStart.Instruction. The host refuses
	// to send an instruction to a model that does not declare it, since it would be
	// silently ignored.
	CapInstruction = "model.instruction"
	// CapConcurrency is the prefix by which a model says how many conversations it can
	// play at once: "model.concurrency=4" (see Concurrency).
	CapConcurrency = "model.concurrency="
)

// Concurrency is N of a "model.concurrency=N" capability with N > 0; 0 when caps declare
// none (the host then plays one conversation at a time).
func Concurrency(caps []string) int {
	for _, c := range caps {
		if v, ok := strings.CutPrefix(c, CapConcurrency); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// Info is what a plugin says about itself (the Describe call). The JSON form is what
// `duplexmpe plugins --json` prints.
type Info = contract.Info

// Config field types (contract.TypeString ...).
const (
	TypeString     = contract.TypeString
	TypeNumber     = contract.TypeNumber
	TypeBool       = contract.TypeBool
	TypeListString = contract.TypeListString
	TypeListNumber = contract.TypeListNumber
	TypeMapString  = contract.TypeMapString
	// TypePath is a string naming a file or directory. The host resolves a relative
	// value against the run file's directory before Configure, so the plugin always
	// gets a path that works from its own working directory.
	TypePath = contract.TypePath
)

// ConfigField describes one attribute of the plugin's config block.
type ConfigField = contract.ConfigField

// WithoutTransport is config less the fields schema marks as transport: what a plugin's
// configuration means for its results.
func WithoutTransport(schema []ConfigField, config map[string]any) map[string]any {
	if config == nil {
		return nil
	}
	transport := map[string]bool{}
	for _, f := range schema {
		if f.Transport {
			transport[f.Name] = true
		}
	}
	out := make(map[string]any, len(config))
	for k, v := range config {
		if !transport[k] {
			out[k] = v
		}
	}
	return out
}

// Plugin is implemented by every plugin.
type Plugin interface {
	Describe(ctx context.Context) (Info, error)
	// Configure receives the run file's config block, already checked against the
	// schema, with defaults filled in, as decoded JSON (numbers are float64). It is
	// called once, before any kind call. An error without a gRPC status means a value
	// is wrong (InvalidArgument): the host reports it at the run file's config block in
	// the error's own words (name the field), as a failure a retry cannot mend (exit 3).
	// A failure that is not the config's (weights that cannot be fetched, a missing
	// tool) should carry another status, such as FailedPrecondition or Unavailable.
	Configure(ctx context.Context, config map[string]any) error
}

// Audio is a mono clip of float32 samples in [-1, 1].
type Audio = contract.Audio

// Model is a full-duplex speech model driven in lockstep (kind "model").
type Model interface {
	// Start begins one conversation with fresh model state.
	Start(ctx context.Context, req ConversationStart) (Conversation, error)
}

// ConversationStart opens a conversation.
type ConversationStart = contract.ConversationStart

// Format is what a model declares for a conversation.
type Format = contract.Format

// Conversation is one conversation in progress. Step is called once per input frame, in
// order, never concurrently; it is the only clock the model has.
type Conversation interface {
	Format() Format
	// Step takes exactly Format().FrameSize input samples and returns what the model
	// emits in response.
	Step(ctx context.Context, frame []float32) (Output, error)
	Close() error
}

// Output is a model's reply to one input frame.
type Output = contract.Output

// Voice is a TTS voice.
type Voice = contract.Voice

// TTS synthesises speech (kind "tts").
type TTS interface {
	Voices(ctx context.Context) ([]Voice, error)
	Synthesize(ctx context.Context, text, voice string) (Audio, error)
}

// ASR transcribes speech (kind "asr").
type ASR interface {
	// Transcribe returns the text of the clip; language may be empty.
	Transcribe(ctx context.Context, clip Audio, language string) (string, error)
}

// DialogueTurn is one attributed line of a conversation, given to judges as context.
type DialogueTurn = contract.DialogueTurn

// AnswerQuery asks whether a response answers a request.
type AnswerQuery = contract.AnswerQuery

// Answer types of AnswerQuery.AnswerType (see contract.AnswerTypes).
const (
	AnswerNumber   = contract.AnswerNumber
	AnswerMoney    = contract.AnswerMoney
	AnswerDuration = contract.AnswerDuration
	AnswerClock    = contract.AnswerClock
	AnswerDate     = contract.AnswerDate
	AnswerName     = contract.AnswerName
	AnswerYesNo    = contract.AnswerYesNo
	AnswerCode     = contract.AnswerCode
	AnswerText     = contract.AnswerText
)

// AnswerTypes lists every answer type.
var AnswerTypes = contract.AnswerTypes

// SpeechQuery asks whether speech in a silence window is an acknowledgement.
type SpeechQuery = contract.SpeechQuery

// Verdict labels.
const (
	LabelCorrect         = "correct"
	LabelIncorrect       = "incorrect"
	LabelAcknowledgement = "acknowledgement"
	LabelIntrusion       = "intrusion"
)

// Verdict is a judge's structured answer.
type Verdict = contract.Verdict

// Judge gives verdicts on transcribed model speech (kind "judge").
type Judge interface {
	JudgeAnswer(ctx context.Context, q AnswerQuery) (Verdict, error)
	ClassifySpeech(ctx context.Context, q SpeechQuery) (Verdict, error)
}

// ChatMessage is one message of a chat completion request.
type ChatMessage = contract.ChatMessage

// CompletionRequest asks an LLM for one reply.
type CompletionRequest = contract.CompletionRequest

// Completion is an LLM reply.
type Completion = contract.Completion

// LLM is a chat-completion service (kind "llm").
type LLM interface {
	Complete(ctx context.Context, req CompletionRequest) (Completion, error)
}
