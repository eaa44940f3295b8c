package pluginhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/duplexmpe/duplexmpe/internal/protocol"
	"github.com/duplexmpe/duplexmpe/internal/protoconv"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/wire"
)

// DefaultStartTimeout bounds the handshake when Spec.StartTimeout is zero; loading
// model weights takes minutes.
const DefaultStartTimeout = 5 * time.Minute

// Client is one running plugin (or one connection to a reattached plugin). Its methods
// are safe for concurrent use. The sdk values it hands out (Model, TTS, ...) stay valid
// across Restart.
type Client struct {
	spec   Spec
	logger hclog.Logger

	mu         sync.Mutex
	pc         *plugin.Client
	current    atomic.Pointer[plugin.Client] // pc, readable without mu (for Exited)
	runner     atomic.Pointer[groupRunner]   // the started process, nil when reattached
	starting   atomic.Bool                   // a start holds mu, perhaps for minutes
	conn       *grpc.ClientConn
	pid        int // 0 when reattached: the process is not ours
	kinds      []string
	logFile    *logWriter
	schema     []sdk.ConfigField // the config fields the plugin described at start
	config     map[string]any    // the last config Configure accepted, for Restart
	configured bool
	// stopped says why the host killed the current process (a missed deadline), for the
	// errors of the other calls it was serving; nil otherwise.
	stopped atomic.Pointer[string]
}

// Start checks spec (a pinned checksum is verified before anything runs), starts the
// plugin process (or reattaches to a running one), completes the handshake and checks
// the described protocol version and, when pinned, the plugin version. The plugin is
// killed by Kill, by KillAll, or when this process dies (Pdeathsig). logger may be nil.
func Start(ctx context.Context, spec Spec, logger hclog.Logger) (*Client, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	c := &Client{spec: spec, logger: logger.Named(spec.Name)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.startLocked(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Name is the plugin block's label.
func (c *Client) Name() string { return c.spec.Name }

// Spec is what the plugin was started from.
func (c *Client) Spec() Spec { return c.spec }

// Pid is the plugin process id, which is also its process group id; 0 for a reattached
// plugin or after Kill.
func (c *Client) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pid
}

// Conn is the gRPC connection to the plugin, for conformance tests and callers that need
// the raw protocol (internal/protocol). It changes on Restart.
func (c *Client) Conn() (*grpc.ClientConn, error) { return c.connection() }

// Exited reports whether the plugin process has exited (or was killed).
func (c *Client) Exited() bool {
	pc := c.current.Load()
	if pc == nil || pc.Exited() {
		return true
	}
	// go-plugin notices an exit only once the plugin's stdout and stderr close, which a
	// stray grandchild can delay: look at the process itself.
	if gr := c.runner.Load(); gr != nil && gr.Pid() != 0 {
		return !processAlive(gr.Pid())
	}
	return false
}

// Kill stops the plugin: a graceful shutdown over gRPC, then SIGKILL to the whole process
// group after 2 s, so nothing started behind a wrapper script survives. For a reattached
// plugin it only disconnects. Kill is idempotent.
func (c *Client) Kill() {
	if c.starting.Load() {
		// The start holds mu until its handshake ends; killing the process ends it now.
		c.runner.Load().killAll()
	}
	c.mu.Lock()
	c.killLocked()
	c.mu.Unlock()
	registry.remove(c)
}

// Restart kills what is left of the plugin and starts it again from the same Spec, then
// sends the last accepted config again. Use it after the plugin crashed (Exited).
func (c *Client) Restart(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.killLocked()
	if err := c.startLocked(ctx); err != nil {
		return err
	}
	if c.configured {
		if err := c.configureLocked(ctx, c.config); err != nil {
			c.killLocked()
			registry.remove(c)
			return fmt.Errorf("plugin %q restarted but refused its last config: %w", c.spec.Name, err)
		}
	}
	return nil
}

// Describe asks the plugin who it is. After Configure the answer includes the identity
// of what the plugin wraps.
func (c *Client) Describe(ctx context.Context) (sdk.Info, error) {
	conn, err := c.connection()
	if err != nil {
		return sdk.Info{}, err
	}
	return c.describe(ctx, conn)
}

// Configure sends the plugin its config block (JSON-compatible values). Restart sends the
// last accepted config again.
func (c *Client) Configure(ctx context.Context, config map[string]any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.configureLocked(ctx, config)
}

func (c *Client) configureLocked(ctx context.Context, config map[string]any) error {
	if c.conn == nil {
		return c.notRunning()
	}
	if config == nil {
		config = map[string]any{}
	}
	config = c.resolvePaths(config)
	b, err := json.Marshal(config)
	if err != nil {
		return fmt.Errorf("plugin %q: config cannot be encoded as JSON: %v", c.spec.Name, err)
	}
	if _, err := protocol.NewPluginClient(c.conn).Configure(ctx, &protocol.ConfigureRequest{ConfigJson: string(b)}); err != nil {
		return c.callError("Configure", err)
	}
	// Keep a private copy: the caller may change its map later.
	var copied map[string]any
	_ = json.Unmarshal(b, &copied)
	c.config, c.configured = copied, true
	return nil
}

// resolvePaths makes the relative values of the plugin's path-typed config fields
// (sdk.TypePath) absolute against Spec.ConfigDir, in a copy of config: the plugin runs in
// its own directory and could not know the run file's.
func (c *Client) resolvePaths(config map[string]any) map[string]any {
	if c.spec.ConfigDir == "" {
		return config
	}
	out := make(map[string]any, len(config))
	for k, v := range config {
		out[k] = v
	}
	for _, f := range c.schema {
		if s, ok := out[f.Name].(string); ok && f.Type == sdk.TypePath && s != "" && !filepath.IsAbs(s) {
			out[f.Name] = filepath.Join(c.spec.ConfigDir, s)
		}
	}
	return out
}

func (c *Client) describe(ctx context.Context, conn *grpc.ClientConn) (sdk.Info, error) {
	resp, err := protocol.NewPluginClient(conn).Describe(ctx, &protocol.DescribeRequest{})
	if err != nil {
		return sdk.Info{}, c.callError("Describe", err)
	}
	info, err := protoconv.InfoFromProto(resp)
	if err != nil {
		return info, fmt.Errorf("plugin %q: Describe: %w", c.spec.Name, err)
	}
	return info, nil
}

func (c *Client) connection() (*grpc.ClientConn, error) {
	conn, _, err := c.process()
	return conn, err
}

// process is the connection and the go-plugin client of the current process.
func (c *Client) process() (*grpc.ClientConn, *plugin.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return nil, nil, c.notRunning()
	}
	return c.conn, c.pc, nil
}

// missedDeadline returns nil unless a call on process pc ran out of time: its own
// timeout (setting, a plugin block attribute) fired, or ctx's deadline passed. Then the
// plugin is wedged as far as the host can tell: the process group is killed, so that
// Exited reports it and the next conversation gets a fresh process from Restart.
func (c *Client) missedDeadline(ctx context.Context, pc *plugin.Client, op, setting string, timeout time.Duration, fired bool) error {
	callerDeadline := !fired && errors.Is(ctx.Err(), context.DeadlineExceeded)
	if !fired && !callerDeadline {
		return nil
	}
	e := &DeadlineError{Plugin: c.spec.Name, Op: op, Setting: setting, Timeout: timeout, Caller: callerDeadline}
	if c.spec.Reattach == "" {
		e.Killed = c.stopWedged(pc, fmt.Sprintf("%s got no answer within %s", op, e.limit()))
	}
	return e
}

// stopWedged kills the process group of pc if pc is still the plugin's process (a
// restart may have replaced it meanwhile) and waits until the process is gone.
func (c *Client) stopWedged(pc *plugin.Client, reason string) bool {
	gr := c.runner.Load()
	if pc == nil || c.current.Load() != pc || gr == nil || gr.Pid() == 0 {
		return false
	}
	c.stopped.Store(&reason)
	c.logger.Error("the plugin missed a deadline; killing its process group", "reason", reason, "pgid", gr.Pid())
	gr.killAll()
	for deadline := time.Now().Add(5 * time.Second); processAlive(gr.Pid()) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// DeadlineError is a call that got no answer in time. errors.Is(err,
// context.DeadlineExceeded) holds for it.
type DeadlineError struct {
	Plugin  string
	Op      string        // e.g. `Model.Step (conversation "s1", frame 12)`
	Setting string        // the plugin block attribute that bounds the call
	Timeout time.Duration // its value
	Caller  bool          // the caller's own deadline passed first, not Timeout
	Killed  bool          // the host killed the plugin's process group
}

func (e *DeadlineError) limit() string {
	if e.Caller {
		return "the caller's deadline"
	}
	return fmt.Sprintf("%s = %s", e.Setting, e.Timeout)
}

func (e *DeadlineError) Error() string {
	msg := fmt.Sprintf("plugin %q: %s: no answer within %s", e.Plugin, e.Op, e.limit())
	if e.Killed {
		next := "the next conversation"
		if e.Setting == "call_timeout" {
			next = "its next call"
		}
		msg += "; the host took the plugin as wedged and killed its process group (it is restarted for " + next + ")"
	}
	if !e.Caller {
		msg += fmt.Sprintf("; if the plugin needs longer, raise %s in the plugin %q block", e.Setting, e.Plugin)
	}
	return msg
}

func (e *DeadlineError) Is(target error) bool { return target == context.DeadlineExceeded }

func (c *Client) notRunning() error {
	return fmt.Errorf("plugin %q is not running (killed, or its start failed); Restart it or start it again", c.spec.Name)
}

// startLocked starts or reattaches and fills c.pc, c.conn, c.pid, c.kinds.
func (c *Client) startLocked(ctx context.Context) (err error) {
	c.starting.Store(true)
	defer c.starting.Store(false)
	name := c.spec.Name
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("plugin %q: not started: %w", name, err) // e.g. Ctrl-C came first
	}
	tail := &tailLines{} // the end of its stderr, for a start that fails
	cfg := &plugin.ClientConfig{
		HandshakeConfig: plugin.HandshakeConfig{
			ProtocolVersion:  sdk.ProtocolVersion,
			MagicCookieKey:   sdk.MagicCookieKey,
			MagicCookieValue: sdk.MagicCookieValue,
		},
		VersionedPlugins: map[int]plugin.PluginSet{
			sdk.ProtocolVersion: {wire.PluginSetKey: hostPlugin{}},
		},
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           c.logger,
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(wire.MaxMessageBytes), grpc.MaxCallSendMsgSize(wire.MaxMessageBytes))},
	}
	if c.spec.Reattach != "" {
		rc, err := parseReattach(c.spec.Reattach)
		if err != nil {
			return fmt.Errorf("plugin %q: reattach: %w", name, err)
		}
		cfg.Reattach = rc
		// go-plugin dispenses from Plugins, not VersionedPlugins, when reattaching.
		cfg.Plugins = cfg.VersionedPlugins[sdk.ProtocolVersion]
	} else {
		if err := c.spec.verifyChecksum(); err != nil {
			return err
		}
		cmd, err := c.spec.command()
		if err != nil {
			return err
		}
		if err := withHostPipe(cmd); err != nil {
			return fmt.Errorf("plugin %q: %v", name, err)
		}
		cfg.RunnerFunc = runnerFunc(cmd, &c.runner)
		cfg.SkipHostEnv = true
		cfg.AutoMTLS = true
		cfg.StartTimeout = c.spec.startTimeout()
		cfg.Stderr = tail
		stdout := io.Writer(newLineLogger(c.logger, "stdout"))
		stderr := io.Writer(newLineLogger(c.logger, "stderr"))
		if c.spec.LogFile != "" {
			lw, err := openLog(c.spec.LogFile, c.spec.logLimit())
			if err != nil {
				return fmt.Errorf("plugin %q: log file: %v", name, err)
			}
			c.logFile = lw
			cfg.Stderr = io.MultiWriter(lw, tail) // the raw stderr lines, hclog JSON included
			stdout = io.MultiWriter(lw, stdout)
			stderr = io.MultiWriter(lw, stderr)
		}
		cfg.SyncStdout, cfg.SyncStderr = stdout, stderr
	}

	pc := plugin.NewClient(cfg)
	c.pc = pc
	c.current.Store(pc)
	registry.add(c)
	defer func() {
		if err != nil {
			c.killLocked()
			registry.remove(c)
		}
	}()

	type result struct {
		rpc plugin.ClientProtocol
		err error
	}
	done := make(chan result, 1)
	go func() {
		rpc, err := pc.Client()
		done <- result{rpc, err}
	}()
	var rpc plugin.ClientProtocol
	select {
	case r := <-done:
		if gr := c.runner.Load(); gr != nil {
			c.pid = gr.Pid()
		}
		if r.err != nil {
			if strings.Contains(r.err.Error(), "timeout while waiting for plugin to start") {
				return fmt.Errorf("plugin %q did not start within start_timeout = %s%s; if it needs longer (loading model weights), raise start_timeout in the plugin %q block",
					name, cfg.StartTimeout, c.logHint(), name)
			}
			if se := startFailure(name, r.err, pc, c.runner.Load(), tail, c.logHint()); se != nil {
				return se
			}
			return fmt.Errorf("plugin %q did not start: %v%s", name, r.err, c.logHint())
		}
		rpc = r.rpc
	case <-ctx.Done():
		// Killing the group ends the pending handshake; the deferred kill then finds
		// nothing left.
		for {
			if gr := c.runner.Load(); gr != nil && gr.Pid() != 0 {
				c.pid = gr.Pid()
				gr.killAll()
			}
			select {
			case <-done:
			case <-time.After(10 * time.Millisecond):
				continue
			}
			break
		}
		return fmt.Errorf("plugin %q: start cancelled: %w", name, ctx.Err())
	}
	raw, err := rpc.Dispense(wire.PluginSetKey)
	if err != nil {
		return fmt.Errorf("plugin %q: %v", name, err)
	}
	c.conn = raw.(*grpc.ClientConn)

	info, err := c.describe(ctx, c.conn)
	if err != nil {
		return err
	}
	if info.ProtocolVersion != sdk.ProtocolVersion {
		return fmt.Errorf("plugin %q speaks protocol version %d; this host speaks %d: use a plugin built for protocol %d",
			name, info.ProtocolVersion, sdk.ProtocolVersion, sdk.ProtocolVersion)
	}
	if c.spec.Version != "" && info.Version != c.spec.Version {
		return fmt.Errorf("plugin %q describes itself as version %q, but the run file pins version %q: "+
			"use the pinned plugin, or change the pin (and re-pin with `duplexmpe lock`)", name, info.Version, c.spec.Version)
	}
	c.kinds, c.schema = info.Kinds, info.Config
	c.stopped.Store(nil)
	return nil
}

func (c *Client) killLocked() {
	if c.pc != nil {
		if c.spec.Reattach != "" {
			// Not our process: disconnect only (go-plugin's Kill would ask it to shut down).
			if c.conn != nil {
				_ = c.conn.Close()
			}
		} else {
			stopProcess(c.pc, c.runner.Load(), c.logger)
		}
	}
	if c.logFile != nil {
		_ = c.logFile.Close()
		c.logFile = nil
	}
	c.pc, c.conn, c.pid = nil, nil, 0
	c.current.Store(nil)
	c.runner.Store(nil)
}

func (c *Client) logHint() string {
	if c.spec.LogFile != "" {
		return fmt.Sprintf(" (its output is in %s)", c.spec.LogFile)
	}
	return " (run with debug logging to see its output)"
}

// callError names the plugin and the call, and says when the process is gone.
func (c *Client) callError(op string, err error) error {
	e := &CallError{Plugin: c.spec.Name, Op: op, Err: err, Exited: c.Exited(), hint: c.logHint()}
	if r := c.stopped.Load(); r != nil && e.Exited {
		e.Stopped = *r
	}
	return e
}

// CallError is an error from a call to a plugin. errors.Unwrap gives the gRPC status
// error, so status.Code(err) works on it.
type CallError struct {
	Plugin string
	Op     string // e.g. "Describe", "TTS.Synthesize", "Model.Step"
	Err    error
	Exited bool // the plugin process was gone when the call failed
	// Stopped says why the host killed the process (another call missed its deadline);
	// empty when the process died by itself.
	Stopped string
	hint    string
}

func (e *CallError) Error() string {
	msg := e.Err.Error()
	if s, ok := status.FromError(e.Err); ok {
		msg = fmt.Sprintf("%s: %s", s.Code(), s.Message())
	}
	switch {
	case e.Exited && e.Stopped != "":
		msg += "; the host killed the plugin process because " + e.Stopped
	case e.Exited:
		msg += "; the plugin process has exited" + e.hint + ": Restart it"
	}
	return fmt.Sprintf("plugin %q: %s: %s", e.Plugin, e.Op, msg)
}

func (e *CallError) Unwrap() error { return e.Err }

// hostPlugin is the host side of go-plugin's GRPCPlugin: it hands out the connection;
// the kind adapters wrap it.
type hostPlugin struct{ plugin.NetRPCUnsupportedPlugin }

func (hostPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("core/pluginhost is the host side; plugins serve with sdk.Serve")
}

func (hostPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return conn, nil
}

func (s Spec) check() error {
	if s.Name == "" {
		return errors.New("plugin spec has no name")
	}
	n := 0
	for _, set := range []bool{s.Source != "", len(s.Command) > 0, s.Reattach != ""} {
		if set {
			n++
		}
	}
	if s.Reattach != "" {
		if s.Checksum != "" {
			return fmt.Errorf("plugin %q: a reattached plugin cannot be pinned by checksum (the host does not start it); remove checksum or reattach", s.Name)
		}
		return nil
	}
	if n != 1 {
		return fmt.Errorf("plugin %q: set exactly one of source (an executable) and command (an argv)", s.Name)
	}
	return nil
}

// command builds the exec.Cmd: its own process group, killed with this process.
func (s Spec) command() (*exec.Cmd, error) {
	env := s.environ()
	var argv []string
	if s.Source != "" {
		path := s.resolve(s.Source)
		if _, err := os.Stat(path); err != nil {
			return nil, &StartError{Plugin: s.Name, Cause: fmt.Sprintf("source: %v; build the plugin (make build) or fix the path", err)}
		}
		argv = []string{path}
	} else {
		argv = slices.Clone(s.Command)
		if strings.ContainsRune(argv[0], os.PathSeparator) {
			argv[0] = s.resolve(argv[0])
		} else {
			path, err := lookPath(argv[0], env)
			if err != nil {
				return nil, &StartError{Plugin: s.Name, Cause: fmt.Sprintf("command %q: %v", s.Command[0], err)}
			}
			argv[0] = path
		}
	}
	if _, set := s.Env["TMPDIR"]; !set {
		if root := RunRoot(); root != "" {
			env = append(env, "TMPDIR="+root) // the last value wins
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.Dir
	cmd.Env = env
	cmd.SysProcAttr = sysProcAttr()
	return cmd, nil
}

// resolve makes a relative path relative to Dir, and absolute: the child changes to
// Dir before it runs the path.
func (s Spec) resolve(p string) string {
	if !filepath.IsAbs(p) && s.Dir != "" {
		p = filepath.Join(s.Dir, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// lookPath finds an executable by name on the plugin's PATH (which Spec.Env may set,
// e.g. to a virtual environment's bin), not the host's.
func lookPath(name string, env []string) (string, error) {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("not found on the plugin's PATH (%s); give a path or set PATH in env", path)
}

// environ is the minimal inherited environment plus Spec.Env (which wins), sorted.
func (s Spec) environ() []string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH", k == "HOME", k == "LANG", k == "TMPDIR", k == "USER",
			strings.HasPrefix(k, "CUDA_"), strings.HasPrefix(k, "HF_"):
			env[k] = v
		}
	}
	for k, v := range s.Env {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// verifyChecksum checks Spec.Checksum against the files, before anything runs.
func (s Spec) verifyChecksum() error {
	if s.Checksum == "" {
		return nil
	}
	var got, what string
	var err error
	switch {
	case strings.HasPrefix(s.Checksum, "sha256:") && s.Source != "":
		what = "the binary " + s.resolve(s.Source)
		got, err = HashFile(s.resolve(s.Source))
	case strings.HasPrefix(s.Checksum, "h1:") && len(s.Command) > 0 && s.Dir != "":
		what = "the directory " + s.Dir
		got, err = HashDir(s.Dir, s.HashSkip...)
	case s.Source != "":
		return fmt.Errorf("plugin %q: checksum %q: a source plugin is pinned by \"sha256:<hex>\" of its binary", s.Name, s.Checksum)
	default:
		return fmt.Errorf("plugin %q: checksum %q: a command plugin is pinned by \"h1:<base64>\" of its dir (set dir)", s.Name, s.Checksum)
	}
	if err != nil {
		return fmt.Errorf("plugin %q: cannot hash %s: %v", s.Name, what, err)
	}
	if got != s.Checksum {
		return &ChecksumError{Plugin: s.Name, What: what, Want: s.Checksum, Got: got}
	}
	return nil
}

// ChecksumError refuses a plugin whose files do not match its pin.
type ChecksumError struct {
	Plugin, What, Want, Got string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("plugin %q refused: %s hashes to %s, but it is pinned to %s; "+
		"if the change is intended, re-pin it with `duplexmpe lock`, otherwise restore the pinned plugin",
		e.Plugin, e.What, e.Got, e.Want)
}

// parseReattach reads the JSON a plugin prints in debug mode (with or without the
// DUPLEXMPE_REATTACH= prefix).
func parseReattach(s string) (*plugin.ReattachConfig, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), sdk.ReattachPrefix)
	s = strings.Trim(s, "'")
	var r sdk.Reattach
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("not the JSON a plugin prints in debug mode (%v); run the plugin with --debug and copy its %s line", err, sdk.ReattachPrefix)
	}
	if r.Protocol != string(plugin.ProtocolGRPC) {
		return nil, fmt.Errorf("protocol %q: want %q", r.Protocol, plugin.ProtocolGRPC)
	}
	if r.Pid <= 0 {
		return nil, errors.New("pid must be positive")
	}
	var addr net.Addr
	var err error
	switch r.Addr.Network {
	case "unix":
		addr, err = net.ResolveUnixAddr("unix", r.Addr.String)
	case "tcp":
		addr, err = net.ResolveTCPAddr("tcp", r.Addr.String)
	default:
		err = fmt.Errorf("address network %q: want unix or tcp", r.Addr.Network)
	}
	if err != nil {
		return nil, err
	}
	return &plugin.ReattachConfig{
		Protocol:        plugin.ProtocolGRPC,
		ProtocolVersion: r.ProtocolVersion,
		Addr:            addr,
		Pid:             r.Pid,
		Test:            true, // never kill a process this host did not start
	}, nil
}

// lineLogger logs each complete line written to it.
type lineLogger struct {
	mu     sync.Mutex
	logger hclog.Logger
	stream string
	buf    []byte
}

func newLineLogger(l hclog.Logger, stream string) *lineLogger {
	return &lineLogger{logger: l, stream: stream}
}

// maxLogLine bounds a line held back while waiting for its newline.
const maxLogLine = 64 << 10

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i, next := bytes.IndexByte(w.buf, '\n'), 0
		switch {
		case i >= 0:
			next = i + 1
		case len(w.buf) >= maxLogLine:
			i, next = maxLogLine, maxLogLine // an endless line: log it in bounded pieces
		default:
			next = -1
		}
		if next < 0 {
			break
		}
		if line := strings.TrimRight(string(w.buf[:i]), "\r"); line != "" {
			w.logger.Info(line, "stream", w.stream)
		}
		w.buf = w.buf[next:]
	}
	if len(w.buf) == 0 {
		w.buf = nil // let a large buffer go
	}
	return len(p), nil
}

// registry holds every Client with a process, for KillAll.
var registry = &clientSet{clients: map[*Client]struct{}{}}

type clientSet struct {
	mu      sync.Mutex
	clients map[*Client]struct{}
}

func (s *clientSet) add(c *Client) {
	s.mu.Lock()
	s.clients[c] = struct{}{}
	s.mu.Unlock()
}

func (s *clientSet) remove(c *Client) {
	s.mu.Lock()
	delete(s.clients, c)
	s.mu.Unlock()
}

// KillAll kills every plugin this process started (and disconnects reattached ones), in
// parallel. main defers it and calls it on SIGINT/SIGTERM.
func KillAll() {
	registry.mu.Lock()
	clients := make([]*Client, 0, len(registry.clients))
	for c := range registry.clients {
		clients = append(clients, c)
	}
	registry.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Kill()
		}()
	}
	wg.Wait()
	endRunRoot() // every process a plugin was seen to have, and the temporary root
}

// stopProcess asks the plugin to shut down (go-plugin's Kill: Shutdown over gRPC, then
// SIGKILL to the direct child after 2 s) and, as soon as the direct child is gone (or
// after 3 s), SIGKILLs every process of the plugin: its group, its descendants and
// whatever carries its token (a child that called setsid). go-plugin's Kill also waits
// for the plugin's stdout and stderr to close, which a process holding them open would
// delay without end: the wait is bounded, the pipes are closed from the host's side,
// and after that the host goes on.
func stopProcess(pc *plugin.Client, gr *groupRunner, logger hclog.Logger) {
	done := make(chan struct{})
	// What the plugin holds now, before its graceful exit orphans its children.
	gr.note()
	go func() {
		pc.Kill()
		close(done)
	}()
	pgid := 0
	if gr != nil {
		pgid = gr.Pid()
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(3 * time.Second)
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			if pgid == 0 || processAlive(pgid) {
				continue
			}
			break wait
		case <-deadline:
			break wait
		}
	}
	gr.killAll()
	select {
	case <-done:
		return
	case <-time.After(2 * time.Second):
	}
	gr.closePipes()
	gr.killAll()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		logger.Warn("the plugin's connection did not close after its processes were killed; going on without it", "pgid", pgid)
	}
}

// killGroup SIGKILLs process group pgid; a group already gone is fine.
func killGroup(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}
