package pluginhost_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/internal/protocol"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/wire"
)

// rogue is a plugin that speaks the model protocol wrongly in one way: the host must
// report it as a protocol violation naming the plugin, never crash or hang. sdk.Serve
// cannot produce these (it is correct by construction); a plugin in another language
// could.
type rogue struct {
	protocol.UnimplementedPluginServer
	protocol.UnimplementedModelServer
	fault string
}

func (r *rogue) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{Name: "rogue", Version: "1", Kinds: []string{"model"}, ProtocolVersion: 1}, nil
}

func (r *rogue) Converse(stream protocol.Model_ConverseServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	ready := &protocol.ModelReady{InputRate: 16000, OutputRate: 16000, FrameSize: 4}
	switch r.fault {
	case "zero_rate":
		ready.OutputRate = 0
	case "frame_first":
		return stream.Send(&protocol.ModelOutput{Msg: &protocol.ModelOutput_Frame{Frame: &protocol.OutputFrame{}}})
	}
	if err := stream.Send(&protocol.ModelOutput{Msg: &protocol.ModelOutput_Ready{Ready: ready}}); err != nil {
		return err
	}
	for {
		in, err := stream.Recv()
		if err != nil {
			return nil
		}
		f := in.GetFrame()
		if f == nil {
			return nil
		}
		out := &protocol.OutputFrame{Index: f.GetIndex(), Pcm: wire.AppendPCM(nil, []float32{0.5})}
		switch r.fault {
		case "wrong_index":
			out.Index++
		case "odd_pcm":
			out.Pcm = out.Pcm[:3]
		case "ready_again":
			if err := stream.Send(&protocol.ModelOutput{Msg: &protocol.ModelOutput_Ready{Ready: ready}}); err != nil {
				return err
			}
			continue
		}
		if err := stream.Send(&protocol.ModelOutput{Msg: &protocol.ModelOutput_Frame{Frame: out}}); err != nil {
			return err
		}
	}
}

type roguePlugin struct {
	plugin.NetRPCUnsupportedPlugin
	r *rogue
}

func (p roguePlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	protocol.RegisterPluginServer(s, p.r)
	protocol.RegisterModelServer(s, p.r)
	return nil
}

func (roguePlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, nil
}

// serveRogue serves a rogue plugin in this process (go-plugin's test mode) and returns
// the reattach JSON for it.
func serveRogue(t *testing.T, fault string) string {
	ctx, cancel := context.WithCancel(context.Background())
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	go plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  plugin.HandshakeConfig{ProtocolVersion: 1, MagicCookieKey: sdk.MagicCookieKey, MagicCookieValue: sdk.MagicCookieValue},
		VersionedPlugins: map[int]plugin.PluginSet{1: {wire.PluginSetKey: roguePlugin{r: &rogue{fault: fault}}}},
		GRPCServer:       plugin.DefaultGRPCServer,
		Test:             &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: closed},
	})
	t.Cleanup(func() { cancel(); <-closed })
	rc := <-reattach
	b, err := json.Marshal(sdk.Reattach{Protocol: "grpc", ProtocolVersion: 1, Pid: rc.Pid, Test: true,
		Addr: sdk.ReattachAddr{Network: rc.Addr.Network(), String: rc.Addr.String()}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestModelProtocolViolationsAreReported(t *testing.T) {
	cases := map[string]string{
		"zero_rate":   "ready has input rate 16000, output rate 0",
		"frame_first": "the first reply must be ready, got frame 0",
		"wrong_index": "reply index 1, expected 0",
		"odd_pcm":     "not a multiple of 4",
		"ready_again": "expected the reply to frame 0, got ready",
	}
	for fault, want := range cases {
		t.Run(fault, func(t *testing.T) {
			ctx := context.Background()
			c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "rogue", Reattach: serveRogue(t, fault)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Kill()
			m, err := c.Model()
			if err != nil {
				t.Fatal(err)
			}
			conv, err := m.Start(ctx, sdk.ConversationStart{ID: "c"})
			if err == nil {
				_, err = conv.Step(ctx, []float32{0, 0, 0, 0})
				conv.Close()
			}
			if err == nil || !strings.Contains(err.Error(), `plugin "rogue"`) || !strings.Contains(err.Error(), "protocol violation") || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v; want a protocol violation of plugin \"rogue\" saying %q", err, want)
			}
		})
	}
}
