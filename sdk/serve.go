package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DebugEnv, set to "1", makes Serve run in debug mode (as does a --debug argument).
const DebugEnv = "DUPLEXMPE_PLUGIN_DEBUG"

// ReattachPrefix starts the line Serve prints in debug mode; the JSON after it is what
// a plugin block's reattach setting (pluginhost.Spec.Reattach) takes.
const ReattachPrefix = "DUPLEXMPE_REATTACH="

// Reattach is the JSON a plugin prints in debug mode: where a host finds it.
type Reattach struct {
	Protocol        string // always "grpc"
	ProtocolVersion int
	Pid             int
	Test            bool // always true: the host must not kill a reattached plugin
	Addr            ReattachAddr
}

// ReattachAddr is a listener address.
type ReattachAddr struct {
	Network string // "unix" or "tcp"
	String  string
}

// Serve runs p as a plugin process and returns when the host stops it. It serves the
// Plugin service plus one service per kind interface p implements (Model, TTS, ASR,
// Judge, LLM). Call it from main:
//
//	func main() { sdk.Serve(&myPlugin{}) }
//
// Started by anything other than a duplexmpe host (no handshake cookie in the
// environment), Serve says what the program is and exits 1. In debug mode
// (DUPLEXMPE_PLUGIN_DEBUG=1 or a --debug argument) it serves without a host and prints a line "DUPLEXMPE_REATTACH=<json>" to stdout; give that JSON to a plugin
// block's reattach setting, and hosts connect to this long-lived process (a model kept
// warm on a GPU) instead of starting one. Stop it with Ctrl-C.
func Serve(p Plugin) {
	logger := hclog.New(&hclog.LoggerOptions{
		Level:      hclog.Trace,
		Output:     os.Stderr,
		JSONFormat: true,
	})
	cfg := &plugin.ServeConfig{
		HandshakeConfig: plugin.HandshakeConfig{
			ProtocolVersion:  ProtocolVersion,
			MagicCookieKey:   MagicCookieKey,
			MagicCookieValue: MagicCookieValue,
		},
		VersionedPlugins: map[int]plugin.PluginSet{
			ProtocolVersion: {pluginSetKey: &grpcPlugin{impl: p, logger: logger}},
		},
		GRPCServer: newGRPCServer(logger),
		Logger:     logger,
	}
	if !debugRequested() {
		if os.Getenv(MagicCookieKey) != MagicCookieValue {
			name := "This program"
			if info, err := p.Describe(context.Background()); err == nil && info.Name != "" {
				name = fmt.Sprintf("%s %s", info.Name, info.Version)
			}
			fmt.Fprintf(os.Stderr, "%s is a duplexmpe plugin: a duplexmpe host starts it (name it in a run file's plugin block).\n"+
				"To keep it running for hosts to reattach to, start it with --debug.\n"+
				"To check it, run the conformance suite (sdk/plugintest).\n", name)
			os.Exit(1)
		}
		exitWithParent(logger)
		plugin.Serve(cfg)
		return
	}
	serveDebug(cfg, p)
}

// exitWithParent ends the plugin when the process that started it goes away. The host
// kills its plugin's whole process group, and the kernel kills the direct child of a host
// that dies (Pdeathsig), but a plugin started behind a wrapper script is a grandchild:
// without this it would outlive a host killed with SIGKILL.
func exitWithParent(logger hclog.Logger) {
	ppid := os.Getppid()
	if ppid <= 1 {
		return // no parent to watch
	}
	go func() {
		for range time.Tick(250 * time.Millisecond) {
			if os.Getppid() != ppid {
				logger.Error("the process that started this plugin is gone; exiting", "parent", ppid)
				os.Exit(1)
			}
		}
	}()
}

func debugRequested() bool {
	if os.Getenv(DebugEnv) == "1" {
		return true
	}
	for _, a := range os.Args[1:] {
		if a == "--debug" || a == "-debug" {
			return true
		}
	}
	return false
}

// serveDebug serves in go-plugin's test mode: no handshake cookie, no TLS, and a host
// disconnecting does not end the process. Interrupt or terminate ends it.
func serveDebug(cfg *plugin.ServeConfig, p Plugin) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	reattachCh := make(chan *plugin.ReattachConfig, 1)
	closeCh := make(chan struct{})
	cfg.Test = &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattachCh, CloseCh: closeCh}
	go plugin.Serve(cfg)

	name := "plugin"
	if info, err := p.Describe(ctx); err == nil && info.Name != "" {
		name = fmt.Sprintf("plugin %q %s", info.Name, info.Version)
	}
	select {
	case rc := <-reattachCh:
		b, err := json.Marshal(Reattach{
			Protocol:        string(rc.Protocol),
			ProtocolVersion: rc.ProtocolVersion,
			Pid:             rc.Pid,
			Test:            true,
			Addr:            ReattachAddr{Network: rc.Addr.Network(), String: rc.Addr.String()},
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "debug mode: cannot encode the reattach config: %v\n", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "%s is serving in debug mode (pid %d). Hosts reattach with the JSON on stdout\n"+
			"(a plugin block's reattach setting). Ctrl-C stops it.\n", name, rc.Pid)
		fmt.Printf("%s%s\n", ReattachPrefix, b)
		_ = os.Stdout.Sync()
	case <-closeCh:
		fmt.Fprintln(os.Stderr, "debug mode: the plugin server stopped before it listened; see the log above")
		os.Exit(1)
	}
	<-closeCh
}

// newGRPCServer raises the message limits and turns a panic in plugin code into an
// Internal error for that one call, so bad input cannot crash the process.
func newGRPCServer(logger hclog.Logger) func([]grpc.ServerOption) *grpc.Server {
	return func(opts []grpc.ServerOption) *grpc.Server {
		opts = append(opts,
			grpc.MaxRecvMsgSize(maxMessageBytes),
			grpc.MaxSendMsgSize(maxMessageBytes),
			grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
				defer recoverCall(logger, info.FullMethod, &err)
				return h(ctx, req)
			}),
			grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
				defer recoverCall(logger, info.FullMethod, &err)
				return h(srv, ss)
			}),
		)
		return grpc.NewServer(opts...)
	}
}

func recoverCall(logger hclog.Logger, method string, err *error) {
	if r := recover(); r != nil {
		logger.Error("plugin panicked", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		*err = status.Errorf(codes.Internal, "plugin panicked in %s: %v", method, r)
	}
}

// toStatus keeps an error that already carries a gRPC status and gives any other the
// code c.
func toStatus(c codes.Code, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return status.Error(codes.Canceled, err.Error())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	return status.Error(c, err.Error())
}
