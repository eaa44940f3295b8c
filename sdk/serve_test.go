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
	addr := lis.Addr().String() // may hold '#' (fuzz seed names): dial it directly, not as a URL
	conn, err := grpc.NewClient("passthrough:///plugin", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}))
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
		case <-time.After(30 * time.Second):
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

// FuzzConverse sends arbitrary message sequences into the model stream: the plugin
// answers each valid frame once, in order, refuses the rest with InvalidArgument or
// FailedPrecondition, never panics, and always closes a conversation it started.
func FuzzConverse(f *testing.F) {
	f.Add([]byte{0, 1, 1, 1, 2}) // start, frame, frame, frame, end
	f.Add([]byte{1})             // frame before start
	f.Add([]byte{0, 0})          // start twice
	f.Add([]byte{0, 1, 0x21})    // wrong index
	f.Add([]byte{0, 0x41, 3})    // wrong size, then an empty message
	f.Fuzz(func(t *testing.T, ops []byte) {
		m := &closeModel{closed: make(chan string, 1)}
		conn := serveInProcess(t, m)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stream, err := protocol.NewModelClient(conn).Converse(ctx)
		if err != nil {
			t.Fatal(err)
		}
		started := false
		var next uint64
		for _, op := range ops {
			var msg *protocol.ModelInput
			switch op & 3 {
			case 0:
				msg = &protocol.ModelInput{Msg: &protocol.ModelInput_Start{Start: &protocol.ConversationStart{ConversationId: "f"}}}
			case 1:
				idx := next + uint64(op>>5&1) // bit 5: a wrong index
				n := 2 + int(op>>6)           // bits 6-7: a wrong size
				msg = &protocol.ModelInput{Msg: &protocol.ModelInput_Frame{Frame: &protocol.InputFrame{Index: idx, Pcm: wire.AppendPCM(nil, make([]float32, n))}}}
			case 2:
				msg = &protocol.ModelInput{Msg: &protocol.ModelInput_End{End: &protocol.ConversationEnd{}}}
			case 3:
				msg = &protocol.ModelInput{}
			}
			if err := stream.Send(msg); err != nil {
				break // the plugin ended the stream; Recv below says why
			}
			out, err := stream.Recv()
			if err != nil {
				if c := status.Code(err); c != codes.InvalidArgument && c != codes.FailedPrecondition && err.Error() != "EOF" {
					t.Fatalf("after op %#x: %v; want InvalidArgument, FailedPrecondition or a clean end", op, err)
				}
				break
			}
			switch {
			case out.GetReady() != nil && !started && op&3 == 0:
				started = true
			case out.GetFrame() != nil && started && op&3 == 1 && out.GetFrame().GetIndex() == next:
				next++
			default:
				t.Fatalf("op %#x (started %v, next %d) answered with %v", op, started, next, out)
			}
		}
		stream.CloseSend()
		for {
			if _, err := stream.Recv(); err != nil {
				break
			}
		}
		if started {
			select {
			case <-m.closed:
			case <-time.After(30 * time.Second):
				t.Fatal("a started conversation was never closed")
			}
		}
	})
}
