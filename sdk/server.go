package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/duplexmpe/duplexmpe/internal/protocol"
	"github.com/duplexmpe/duplexmpe/internal/protoconv"
	"github.com/duplexmpe/duplexmpe/sdk/wire"
)

const (
	pluginSetKey    = wire.PluginSetKey
	maxMessageBytes = wire.MaxMessageBytes
)

// grpcPlugin is the plugin side of go-plugin's GRPCPlugin: it registers the Plugin
// service and one service per kind p implements.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl   Plugin
	logger hclog.Logger
}

func (g *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	protocol.RegisterPluginServer(s, &pluginServer{impl: g.impl})
	if m, ok := g.impl.(Model); ok {
		protocol.RegisterModelServer(s, &modelServer{impl: m, logger: g.logger})
	}
	if t, ok := g.impl.(TTS); ok {
		protocol.RegisterTTSServer(s, &ttsServer{impl: t})
	}
	if a, ok := g.impl.(ASR); ok {
		protocol.RegisterASRServer(s, &asrServer{impl: a})
	}
	if j, ok := g.impl.(Judge); ok {
		protocol.RegisterJudgeServer(s, &judgeServer{impl: j})
	}
	if l, ok := g.impl.(LLM); ok {
		protocol.RegisterLLMServer(s, &llmServer{impl: l})
	}
	return nil
}

func (g *grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("sdk serves plugins; the host side is core/pluginhost")
}

// kindsOf lists, in a fixed order, the kinds whose interface p implements.
func kindsOf(p Plugin) []string {
	var kinds []string
	if _, ok := p.(Model); ok {
		kinds = append(kinds, KindModel)
	}
	if _, ok := p.(TTS); ok {
		kinds = append(kinds, KindTTS)
	}
	if _, ok := p.(ASR); ok {
		kinds = append(kinds, KindASR)
	}
	if _, ok := p.(Judge); ok {
		kinds = append(kinds, KindJudge)
	}
	if _, ok := p.(LLM); ok {
		kinds = append(kinds, KindLLM)
	}
	return kinds
}

type pluginServer struct {
	protocol.UnimplementedPluginServer
	impl Plugin
}

func (s *pluginServer) Describe(ctx context.Context, _ *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	info, err := s.impl.Describe(ctx)
	if err != nil {
		return nil, toStatus(codes.Internal, err)
	}
	resp, err := protoconv.InfoToProto(info, kindsOf(s.impl), ProtocolVersion)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return resp, nil
}

func (s *pluginServer) Configure(ctx context.Context, req *protocol.ConfigureRequest) (*protocol.ConfigureResponse, error) {
	config := map[string]any{}
	if req.GetConfigJson() != "" {
		if err := json.Unmarshal([]byte(req.GetConfigJson()), &config); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "config_json is not a JSON object: %v", err)
		}
	}
	if err := s.impl.Configure(ctx, config); err != nil {
		return nil, toStatus(codes.InvalidArgument, err)
	}
	return &protocol.ConfigureResponse{}, nil
}

type modelServer struct {
	protocol.UnimplementedModelServer
	impl   Model
	logger hclog.Logger
}

// Converse runs one conversation: start -> ready, then one reply per frame, in order,
// until end or until the host goes away. The conversation is always closed.
func (s *modelServer) Converse(stream protocol.Model_ConverseServer) (err error) {
	ctx := stream.Context()
	first, err := stream.Recv()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	start := first.GetStart()
	if start == nil {
		return status.Errorf(codes.FailedPrecondition,
			"the first message of a conversation must be start, got %s", describeInput(first))
	}
	conv, err := s.impl.Start(ctx, protoconv.StartFromProto(start))
	if err != nil {
		return toStatus(codes.Internal, fmt.Errorf("start conversation %q: %w", start.GetConversationId(), err))
	}
	defer func() {
		if cerr := conv.Close(); cerr != nil {
			s.logger.Warn("closing the conversation failed", "conversation", start.GetConversationId(), "error", cerr)
			if err == nil {
				err = status.Errorf(codes.Internal, "close conversation %q: %v", start.GetConversationId(), cerr)
			}
		}
	}()
	f := conv.Format()
	if f.InputRate <= 0 || f.OutputRate <= 0 || f.FrameSize <= 0 {
		return status.Errorf(codes.Internal,
			"the plugin declared an invalid format (input rate %d, output rate %d, frame size %d); all must be positive",
			f.InputRate, f.OutputRate, f.FrameSize)
	}
	if err := stream.Send(protoconv.FormatToProto(f)); err != nil {
		return err
	}

	wantBytes := 4 * f.FrameSize
	var next uint64
	var out []byte // reused: Send marshals before it returns
	for {
		in, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err // the host went away; the deferred Close ends the conversation
		}
		switch m := in.GetMsg().(type) {
		case *protocol.ModelInput_End:
			return nil
		case *protocol.ModelInput_Start:
			return status.Errorf(codes.FailedPrecondition,
				"conversation %q is already started; send end and open a new stream for the next conversation",
				start.GetConversationId())
		case *protocol.ModelInput_Frame:
			idx := m.Frame.GetIndex()
			if idx != next {
				return status.Errorf(codes.InvalidArgument, "frame index %d out of order: expected %d", idx, next)
			}
			pcm := m.Frame.GetPcm()
			if len(pcm) != wantBytes {
				return status.Errorf(codes.InvalidArgument,
					"frame %d has %d bytes; expected exactly %d samples (%d bytes of float32 little-endian) per frame",
					idx, len(pcm), f.FrameSize, wantBytes)
			}
			// A fresh slice per frame: the model may keep it.
			frame, _ := wire.DecodePCM(make([]float32, f.FrameSize), pcm)
			o, err := conv.Step(ctx, frame)
			if err != nil {
				return toStatus(codes.Internal, fmt.Errorf("step frame %d: %w", idx, err))
			}
			reply := protoconv.OutputToProto(idx, o, out)
			out = reply.GetFrame().GetPcm()
			if err := stream.Send(reply); err != nil {
				return err
			}
			next++
		default:
			return status.Error(codes.InvalidArgument, "empty message: expected start, frame or end")
		}
	}
}

func describeInput(in *protocol.ModelInput) string {
	switch m := in.GetMsg().(type) {
	case *protocol.ModelInput_Frame:
		return fmt.Sprintf("frame %d", m.Frame.GetIndex())
	case *protocol.ModelInput_End:
		return "end"
	case nil:
		return "an empty message"
	}
	return fmt.Sprintf("%T", in.GetMsg())
}

type ttsServer struct {
	protocol.UnimplementedTTSServer
	impl TTS
}

func (s *ttsServer) ListVoices(ctx context.Context, _ *protocol.ListVoicesRequest) (*protocol.ListVoicesResponse, error) {
	voices, err := s.impl.Voices(ctx)
	if err != nil {
		return nil, toStatus(codes.Internal, err)
	}
	return protoconv.VoicesToProto(voices), nil
}

func (s *ttsServer) Synthesize(ctx context.Context, req *protocol.SynthesizeRequest) (*protocol.SynthesizeResponse, error) {
	a, err := s.impl.Synthesize(ctx, req.GetText(), req.GetVoice())
	if err != nil {
		return nil, toStatus(codes.Internal, err)
	}
	return &protocol.SynthesizeResponse{Audio: protoconv.AudioToProto(a)}, nil
}

type asrServer struct {
	protocol.UnimplementedASRServer
	impl ASR
}

func (s *asrServer) Transcribe(ctx context.Context, req *protocol.TranscribeRequest) (*protocol.TranscribeResponse, error) {
	clip, err := protoconv.AudioFromProto(req.GetAudio())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "audio: %v", err)
	}
	if clip.Rate <= 0 {
		return nil, status.Error(codes.InvalidArgument, "audio: sample_rate must be positive")
	}
	text, err := s.impl.Transcribe(ctx, clip, req.GetLanguage())
	if err != nil {
		return nil, toStatus(codes.Internal, err)
	}
	return &protocol.TranscribeResponse{Text: text}, nil
}

type judgeServer struct {
	protocol.UnimplementedJudgeServer
	impl Judge
}

func (s *judgeServer) JudgeAnswer(ctx context.Context, req *protocol.JudgeAnswerRequest) (*protocol.Verdict, error) {
	v, err := s.impl.JudgeAnswer(ctx, protoconv.AnswerQueryFromProto(req))
	if err != nil {
		return nil, toStatus(codes.Internal, err)
	}
	return protoconv.VerdictToProto(v), nil
}

func (s *judgeServer) ClassifySpeech(ctx context.Context, req *protocol.ClassifySpeechRequest) (*protocol.Verdict, error) {
	v, err := s.impl.ClassifySpeech(ctx, protoconv.SpeechQueryFromProto(req))
	if err != nil {
		return nil, toStatus(codes.Internal, err)
	}
	return protoconv.VerdictToProto(v), nil
}

type llmServer struct {
	protocol.UnimplementedLLMServer
	impl LLM
}

func (s *llmServer) Complete(ctx context.Context, req *protocol.CompleteRequest) (*protocol.CompleteResponse, error) {
	c, err := s.impl.Complete(ctx, protoconv.CompletionRequestFromProto(req))
	if err != nil {
		return nil, toStatus(codes.Internal, err)
	}
	return protoconv.CompletionToProto(c), nil
}
