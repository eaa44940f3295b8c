package sdk

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/duplexmpe/duplexmpe/internal/protocol"
	"github.com/duplexmpe/duplexmpe/sdk/wire"
)

// closeModel records when its conversations are closed.
type closeModel struct{ closed chan string }

func (m *closeModel) Describe(context.Context) (Info, error) {
	return Info{Name: "m", Version: "1", Kinds: []string{"bogus"}, ProtocolVersion: 99}, nil
}
func (m *closeModel) Configure(context.Context, map[string]any) error { return nil }
func (m *closeModel) Start(_ context.Context, s ConversationStart) (Conversation, error) {
	if s.ID == "fail" {
		return nil, status.Error(codes.ResourceExhausted, "no GPU memory left")
	}
	return &closeConv{id: s.ID, closed: m.closed}, nil
}

type closeConv struct {
	id     string
	closed chan string
}

func (c *closeConv) Format() Format { return Format{InputRate: 16000, OutputRate: 16000, FrameSize: 2} }
func (c *closeConv) Step(context.Context, []float32) (Output, error) {
	return Output{Samples: []float32{0.25}}, nil
}
func (c *closeConv) Close() error { c.closed <- c.id; return nil }

// serveInProcess serves p's services on a unix socket, as Serve does, and dials it.
func serveInProcess(t *testing.T, p Plugin) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	s := newGRPCServer(hclog.NewNullLogger())(nil)
	if err := (&grpcPlugin{impl: p, logger: hclog.NewNullLogger()}).GRPCServer(nil, s); err != nil {
		t.Fatal(err)
	}
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("unix://"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func TestDescribeReportsWhatIsServed(t *testing.T) {
	conn := serveInProcess(t, &closeModel{})
	resp, err := protocol.NewPluginClient(conn).Describe(context.Background(), &protocol.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kinds) != 1 || resp.Kinds[0] != KindModel || resp.ProtocolVersion != ProtocolVersion {
		t.Fatalf("kinds %v, protocol %d; want [model], %d whatever Describe claims", resp.Kinds, resp.ProtocolVersion, ProtocolVersion)
	}
	if _, err := protocol.NewTTSClient(conn).ListVoices(context.Background(), &protocol.ListVoicesRequest{}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("TTS on a model-only plugin: %v; want Unimplemented", err)
	}
}

func TestConversationClosedOnEndAndWhenTheHostLeaves(t *testing.T) {
	m := &closeModel{closed: make(chan string, 4)}
	conn := serveInProcess(t, m)
	converse := func(ctx context.Context, id string) protocol.Model_ConverseClient {
		stream, err := protocol.NewModelClient(conn).Converse(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&protocol.ModelInput{Msg: &protocol.ModelInput_Start{Start: &protocol.ConversationStart{ConversationId: id}}}); err != nil {
			t.Fatal(err)
		}
		if out, err := stream.Recv(); err != nil || out.GetReady().GetFrameSize() != 2 {
			t.Fatalf("ready: %v, %v", out, err)
		}
		if err := stream.Send(&protocol.ModelInput{Msg: &protocol.ModelInput_Frame{Frame: &protocol.InputFrame{Index: 0, Pcm: wire.AppendPCM(nil, []float32{0, 0})}}}); err != nil {
			t.Fatal(err)
		}
		out, err := stream.Recv()
		if err != nil || out.GetFrame().GetIndex() != 0 || len(out.GetFrame().GetPcm()) != 4 {
			t.Fatalf("frame reply: %v, %v", out, err)
		}
		return stream
	}
	waitClosed := func(want string) {
		select {
		case id := <-m.closed:
			if id != want {
				t.Fatalf("closed %q; want %q", id, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("conversation %q was not closed", want)
		}
	}

	stream := converse(context.Background(), "ended")
	stream.Send(&protocol.ModelInput{Msg: &protocol.ModelInput_End{End: &protocol.ConversationEnd{}}})
	waitClosed("ended")

	ctx, cancel := context.WithCancel(context.Background())
	converse(ctx, "abandoned")
	cancel() // the host goes away mid-conversation
	waitClosed("abandoned")

	// A status from Start keeps its code.
	stream, _ = protocol.NewModelClient(conn).Converse(context.Background())
	stream.Send(&protocol.ModelInput{Msg: &protocol.ModelInput_Start{Start: &protocol.ConversationStart{ConversationId: "fail"}}})
	if _, err := stream.Recv(); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("failed start: %v; want the plugin's ResourceExhausted", err)
	}
}

func TestToStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want codes.Code
	}{
		{errors.New("plain"), codes.Internal},
		{status.Error(codes.NotFound, "kept"), codes.NotFound},
		{context.Canceled, codes.Canceled},
		{context.DeadlineExceeded, codes.DeadlineExceeded},
	} {
		if got := status.Code(toStatus(codes.Internal, tc.err)); got != tc.want {
			t.Errorf("toStatus(%v) = %v; want %v", tc.err, got, tc.want)
		}
	}
}
