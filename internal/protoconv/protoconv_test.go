package protoconv

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/duplexmpe/duplexmpe/internal/protocol"
	"github.com/duplexmpe/duplexmpe/sdk/contract"
)

// Each To and From pair is the identity on the contract's values, every field set, so a
// field one end sends and the other drops fails here; and each message survives the
// wire (proto.Marshal and Unmarshal) on the way.
func TestRoundTrip(t *testing.T) {
	temp, seed := 0.25, int64(-7)
	wire := func(m proto.Message) {
		t.Helper()
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		proto.Reset(m)
		if err := proto.Unmarshal(b, m); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: round trip gives\n%#v\nwant\n%#v", what, got, want)
		}
	}

	info := contract.Info{Name: "n", Version: "1.2.3", Description: "d", Kinds: []string{"model", "judge"}, ProtocolVersion: 1,
		Capabilities: []string{"model.text"}, Identity: map[string]string{"checkpoint": "c"},
		Config: []contract.ConfigField{
			{Name: "a", Type: "number", Required: true, Default: 0.5, Description: "x", Transport: true},
			{Name: "b", Type: "string", Default: "v", Allowed: []string{"v", "w"}},
			{Name: "c", Type: "list(string)", Default: []any{"p", "q"}},
			{Name: "e", Type: "map(string)"},
		}}
	resp, err := InfoToProto(info, info.Kinds, info.ProtocolVersion)
	if err != nil {
		t.Fatal(err)
	}
	wire(resp)
	back, err := InfoFromProto(resp)
	check("Info", back, info)
	if err != nil {
		t.Fatal(err)
	}

	start := contract.ConversationStart{ID: "c-1", Seed: -3, Instruction: "be brief"}
	in := StartToProto(start)
	wire(in)
	check("ConversationStart", StartFromProto(in.GetStart()), start)

	f := contract.Format{InputRate: 24000, OutputRate: 16000, FrameSize: 1920}
	ready := FormatToProto(f)
	wire(ready)
	check("Format", FormatFromProto(ready.GetReady()), f)

	out := contract.Output{Samples: []float32{0, 0.5, -1, float32(math.SmallestNonzeroFloat32)}, Text: "hi", Flush: true}
	frame := OutputToProto(9, out, make([]byte, 3))
	wire(frame)
	gotOut, err := OutputFromProto(frame.GetFrame())
	check("Output", gotOut, out)
	if err != nil || frame.GetFrame().GetIndex() != 9 {
		t.Errorf("Output: index %d, %v", frame.GetFrame().GetIndex(), err)
	}

	a := contract.Audio{Samples: []float32{0.1, -0.2}, Rate: 16000}
	pa := AudioToProto(a)
	wire(pa)
	gotA, err := AudioFromProto(pa)
	check("Audio", gotA, a)
	if err != nil {
		t.Fatal(err)
	}

	voices := []contract.Voice{{ID: "kal16", Description: "male", Rate: 16000}, {ID: "slt", Rate: 8000}}
	pv := VoicesToProto(voices)
	wire(pv)
	check("Voices", VoicesFromProto(pv), voices)

	turns := []contract.DialogueTurn{{Speaker: "A", Text: "Aria, when?"}, {Speaker: "B", Text: "six"}}
	aq := contract.AnswerQuery{Context: turns, Request: "when?", GoldAnswer: "6", Response: "at six", GoldAccepted: []string{"six"}, AnswerType: "clock_time"}
	paq := AnswerQueryToProto(aq)
	wire(paq)
	check("AnswerQuery", AnswerQueryFromProto(paq), aq)

	sq := contract.SpeechQuery{Context: turns, Transcript: "mm-hm"}
	psq := SpeechQueryToProto(sq)
	wire(psq)
	check("SpeechQuery", SpeechQueryFromProto(psq), sq)

	v := contract.Verdict{Label: "correct", Parsed: true, Raw: "{}", Rationale: "says six"}
	pvd := VerdictToProto(v)
	wire(pvd)
	check("Verdict", VerdictFromProto(pvd), v)

	cr := contract.CompletionRequest{Messages: []contract.ChatMessage{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}},
		Temperature: &temp, MaxTokens: 64, JSON: true, Seed: &seed}
	pcr := CompletionRequestToProto(cr)
	wire(pcr)
	check("CompletionRequest", CompletionRequestFromProto(pcr), cr)
	unset := contract.CompletionRequest{Messages: []contract.ChatMessage{{Role: "user", Content: "u"}}}
	pun := CompletionRequestToProto(unset)
	wire(pun)
	check("CompletionRequest without temperature and seed", CompletionRequestFromProto(pun), unset)

	c := contract.Completion{Content: "{}", Model: "m-2024", PromptTokens: 10, CompletionTokens: 3, FinishReason: "stop"}
	pc := CompletionToProto(c)
	wire(pc)
	check("Completion", CompletionFromProto(pc), c)
}

// What cannot be converted is an error naming the field, never a panic.
func TestBadValues(t *testing.T) {
	if _, err := InfoToProto(contract.Info{Config: []contract.ConfigField{{Name: "f", Default: math.NaN()}}}, nil, 1); err == nil || !strings.Contains(err.Error(), `config field "f"`) {
		t.Errorf("a NaN default: %v", err)
	}
	if _, err := InfoFromProto(&protocol.DescribeResponse{ConfigSchema: []*protocol.ConfigField{{Name: "g", DefaultJson: "{"}}}); err == nil || !strings.Contains(err.Error(), `config field "g"`) {
		t.Errorf("a default that is not JSON: %v", err)
	}
	if _, err := AudioFromProto(&protocol.Audio{Pcm: []byte{1, 2, 3}}); err == nil {
		t.Error("PCM of 3 bytes decoded")
	}
	if _, err := OutputFromProto(&protocol.OutputFrame{Pcm: []byte{1}}); err == nil {
		t.Error("a reply of 1 byte decoded")
	}
	if got := StartFromProto(nil); got != (contract.ConversationStart{}) {
		t.Errorf("a nil start: %+v", got)
	}
}
