// Package protoconv is the one mapping between the plugin contract's values
// (sdk/contract, named sdk.Info, sdk.Verdict, ...) and the protocol's messages
// (internal/protocol, generated from sdk/proto). Both ends use it: the plugin side
// (sdk.Serve) reads requests with the From functions and writes replies with the To
// functions, the host side (core/pluginhost) the other way round, so a field added to a
// message is mapped once, in both directions, side by side (the idea of
// terraform-plugin-go's toproto and fromproto packages). Each To and From pair is the
// identity on the contract's values (TestRoundTrip).
//
// Checks that belong to one end stay there: the host's bounds on a model's audio and
// text, the plugin side's frame sizes and sample rates.
package protoconv

import (
	"encoding/json"
	"fmt"

	"github.com/duplexmpe/duplexmpe/internal/protocol"
	"github.com/duplexmpe/duplexmpe/sdk/contract"
	"github.com/duplexmpe/duplexmpe/sdk/wire"
)

// InfoToProto is a Describe reply: info with the kinds the plugin serves and the
// protocol version the SDK speaks (the plugin's own Info does not decide them). A
// default that cannot be encoded as JSON is an error naming the field.
func InfoToProto(info contract.Info, kinds []string, protocolVersion int) (*protocol.DescribeResponse, error) {
	resp := &protocol.DescribeResponse{
		Name:            info.Name,
		Version:         info.Version,
		Description:     info.Description,
		Kinds:           kinds,
		ProtocolVersion: uint32(max(protocolVersion, 0)),
		Capabilities:    info.Capabilities,
		Identity:        info.Identity,
	}
	for _, f := range info.Config {
		pf := &protocol.ConfigField{
			Name:        f.Name,
			Type:        f.Type,
			Required:    f.Required,
			Description: f.Description,
			Allowed:     f.Allowed,
			Transport:   f.Transport,
		}
		if f.Default != nil {
			b, err := json.Marshal(f.Default)
			if err != nil {
				return nil, fmt.Errorf("config field %q: default %v cannot be encoded as JSON: %v", f.Name, f.Default, err)
			}
			pf.DefaultJson = string(b)
		}
		resp.ConfigSchema = append(resp.ConfigSchema, pf)
	}
	return resp, nil
}

// InfoFromProto decodes a Describe reply; a default that is not JSON is an error.
func InfoFromProto(resp *protocol.DescribeResponse) (contract.Info, error) {
	info := contract.Info{
		Name:            resp.GetName(),
		Version:         resp.GetVersion(),
		Description:     resp.GetDescription(),
		Kinds:           resp.GetKinds(),
		ProtocolVersion: int(resp.GetProtocolVersion()),
		Capabilities:    resp.GetCapabilities(),
		Identity:        resp.GetIdentity(),
	}
	for _, pf := range resp.GetConfigSchema() {
		f := contract.ConfigField{
			Name:        pf.GetName(),
			Type:        pf.GetType(),
			Required:    pf.GetRequired(),
			Description: pf.GetDescription(),
			Allowed:     pf.GetAllowed(),
			Transport:   pf.GetTransport(),
		}
		if d := pf.GetDefaultJson(); d != "" {
			if err := json.Unmarshal([]byte(d), &f.Default); err != nil {
				return info, fmt.Errorf("config field %q: default %q is not valid JSON: %v", f.Name, d, err)
			}
		}
		info.Config = append(info.Config, f)
	}
	return info, nil
}

// StartToProto is the first message of a conversation.
func StartToProto(s contract.ConversationStart) *protocol.ModelInput {
	return &protocol.ModelInput{Msg: &protocol.ModelInput_Start{Start: &protocol.ConversationStart{
		ConversationId: s.ID, Seed: s.Seed, Instruction: s.Instruction,
	}}}
}

// StartFromProto reads a conversation's start message.
func StartFromProto(s *protocol.ConversationStart) contract.ConversationStart {
	return contract.ConversationStart{ID: s.GetConversationId(), Seed: s.GetSeed(), Instruction: s.GetInstruction()}
}

// FormatToProto is the ready reply that declares a conversation's format.
func FormatToProto(f contract.Format) *protocol.ModelOutput {
	return &protocol.ModelOutput{Msg: &protocol.ModelOutput_Ready{Ready: &protocol.ModelReady{
		InputRate: uint32(max(f.InputRate, 0)), OutputRate: uint32(max(f.OutputRate, 0)), FrameSize: uint32(max(f.FrameSize, 0)),
	}}}
}

// FormatFromProto reads a ready reply's format.
func FormatFromProto(r *protocol.ModelReady) contract.Format {
	return contract.Format{InputRate: int(r.GetInputRate()), OutputRate: int(r.GetOutputRate()), FrameSize: int(r.GetFrameSize())}
}

// OutputToProto is the reply to input frame idx; its PCM is appended to buf[:0], which
// the caller may reuse once the message is sent (Send marshals before it returns).
func OutputToProto(idx uint64, o contract.Output, buf []byte) *protocol.ModelOutput {
	return &protocol.ModelOutput{Msg: &protocol.ModelOutput_Frame{Frame: &protocol.OutputFrame{
		Index: idx, Pcm: wire.AppendPCM(buf[:0], o.Samples), Text: o.Text, Flush: o.Flush,
	}}}
}

// OutputFromProto reads a reply frame (its index is the caller's to check); PCM that is
// not whole float32 samples is an error.
func OutputFromProto(f *protocol.OutputFrame) (contract.Output, error) {
	samples, err := wire.DecodePCM(nil, f.GetPcm())
	if err != nil {
		return contract.Output{}, err
	}
	return contract.Output{Samples: samples, Text: f.GetText(), Flush: f.GetFlush()}, nil
}

// AudioToProto encodes a clip.
func AudioToProto(a contract.Audio) *protocol.Audio {
	return &protocol.Audio{Pcm: wire.AppendPCM(nil, a.Samples), SampleRate: uint32(max(a.Rate, 0))}
}

// AudioFromProto decodes a clip; PCM that is not whole float32 samples is an error.
func AudioFromProto(a *protocol.Audio) (contract.Audio, error) {
	samples, err := wire.DecodePCM(nil, a.GetPcm())
	if err != nil {
		return contract.Audio{}, err
	}
	return contract.Audio{Samples: samples, Rate: int(a.GetSampleRate())}, nil
}

// VoicesToProto is a ListVoices reply.
func VoicesToProto(voices []contract.Voice) *protocol.ListVoicesResponse {
	resp := &protocol.ListVoicesResponse{}
	for _, v := range voices {
		resp.Voices = append(resp.Voices, &protocol.Voice{Id: v.ID, Description: v.Description, SampleRate: uint32(max(v.Rate, 0))})
	}
	return resp
}

// VoicesFromProto reads a ListVoices reply.
func VoicesFromProto(resp *protocol.ListVoicesResponse) []contract.Voice {
	voices := make([]contract.Voice, 0, len(resp.GetVoices()))
	for _, v := range resp.GetVoices() {
		voices = append(voices, contract.Voice{ID: v.GetId(), Description: v.GetDescription(), Rate: int(v.GetSampleRate())})
	}
	return voices
}

// AnswerQueryToProto is a JudgeAnswer request.
func AnswerQueryToProto(q contract.AnswerQuery) *protocol.JudgeAnswerRequest {
	return &protocol.JudgeAnswerRequest{Context: turnsToProto(q.Context), Request: q.Request, GoldAnswer: q.GoldAnswer,
		Response: q.Response, GoldAccepted: q.GoldAccepted, AnswerType: q.AnswerType}
}

// AnswerQueryFromProto reads a JudgeAnswer request.
func AnswerQueryFromProto(r *protocol.JudgeAnswerRequest) contract.AnswerQuery {
	return contract.AnswerQuery{Context: turnsFromProto(r.GetContext()), Request: r.GetRequest(), GoldAnswer: r.GetGoldAnswer(),
		Response: r.GetResponse(), GoldAccepted: r.GetGoldAccepted(), AnswerType: r.GetAnswerType()}
}

// SpeechQueryToProto is a ClassifySpeech request.
func SpeechQueryToProto(q contract.SpeechQuery) *protocol.ClassifySpeechRequest {
	return &protocol.ClassifySpeechRequest{Context: turnsToProto(q.Context), Transcript: q.Transcript}
}

// SpeechQueryFromProto reads a ClassifySpeech request.
func SpeechQueryFromProto(r *protocol.ClassifySpeechRequest) contract.SpeechQuery {
	return contract.SpeechQuery{Context: turnsFromProto(r.GetContext()), Transcript: r.GetTranscript()}
}

// VerdictToProto is a judge's reply.
func VerdictToProto(v contract.Verdict) *protocol.Verdict {
	return &protocol.Verdict{Label: v.Label, Parsed: v.Parsed, Raw: v.Raw, Rationale: v.Rationale}
}

// VerdictFromProto reads a judge's reply.
func VerdictFromProto(v *protocol.Verdict) contract.Verdict {
	return contract.Verdict{Label: v.GetLabel(), Parsed: v.GetParsed(), Raw: v.GetRaw(), Rationale: v.GetRationale()}
}

// CompletionRequestToProto is a Complete request.
func CompletionRequestToProto(r contract.CompletionRequest) *protocol.CompleteRequest {
	req := &protocol.CompleteRequest{Temperature: r.Temperature, MaxTokens: uint32(max(r.MaxTokens, 0)), Json: r.JSON, Seed: r.Seed}
	for _, m := range r.Messages {
		req.Messages = append(req.Messages, &protocol.ChatMessage{Role: m.Role, Content: m.Content})
	}
	return req
}

// CompletionRequestFromProto reads a Complete request.
func CompletionRequestFromProto(req *protocol.CompleteRequest) contract.CompletionRequest {
	r := contract.CompletionRequest{Temperature: req.Temperature, MaxTokens: int(req.GetMaxTokens()), JSON: req.GetJson(), Seed: req.Seed}
	for _, m := range req.GetMessages() {
		r.Messages = append(r.Messages, contract.ChatMessage{Role: m.GetRole(), Content: m.GetContent()})
	}
	return r
}

// CompletionToProto is a Complete reply.
func CompletionToProto(c contract.Completion) *protocol.CompleteResponse {
	return &protocol.CompleteResponse{Content: c.Content, Model: c.Model, PromptTokens: uint32(max(c.PromptTokens, 0)),
		CompletionTokens: uint32(max(c.CompletionTokens, 0)), FinishReason: c.FinishReason}
}

// CompletionFromProto reads a Complete reply.
func CompletionFromProto(resp *protocol.CompleteResponse) contract.Completion {
	return contract.Completion{Content: resp.GetContent(), Model: resp.GetModel(), PromptTokens: int(resp.GetPromptTokens()),
		CompletionTokens: int(resp.GetCompletionTokens()), FinishReason: resp.GetFinishReason()}
}

func turnsToProto(turns []contract.DialogueTurn) []*protocol.DialogueTurn {
	out := make([]*protocol.DialogueTurn, len(turns))
	for i, t := range turns {
		out[i] = &protocol.DialogueTurn{Speaker: t.Speaker, Text: t.Text}
	}
	return out
}

func turnsFromProto(turns []*protocol.DialogueTurn) []contract.DialogueTurn {
	out := make([]contract.DialogueTurn, len(turns))
	for i, t := range turns {
		out[i] = contract.DialogueTurn{Speaker: t.GetSpeaker(), Text: t.GetText()}
	}
	return out
}
