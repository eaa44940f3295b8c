// Package pluginhost starts, checks, talks to and stops plugin processes (go-plugin over
// gRPC with AutoMTLS), and hands out sdk interfaces backed by them.
//
//	c, err := pluginhost.Start(ctx, spec, logger) // checksum, start, handshake, version
//	defer c.Kill()
//	err = c.Configure(ctx, config)
//	m, err := c.Model()                           // sdk.Model over gRPC; also TTS, ASR, Judge, LLM
//
// Processes. A plugin runs in its own process group, with a minimal environment (PATH,
// HOME, LANG, TMPDIR, USER, CUDA_*, HF_* and Spec.Env), stdin on /dev/null, Pdeathsig so
// the kernel kills it if the host dies, and the read end of the host's death pipe
// (sdk.HostPipeEnv), on which the SDKs kill the plugin's whole group when the host is
// gone, wrapper scripts and all. Kill asks it to shut down over
// gRPC and SIGKILLs the whole group as soon as its main process is gone (at the latest
// after 2-3 s), so wrapper scripts and their children never survive. KillAll does that
// for every plugin of the process; main calls it on exit and on SIGINT/SIGTERM. After a
// crash, Exited reports true and Restart starts the plugin again with its last config;
// values from Model(), TTS(), ... stay valid across Restart.
//
// Pinning. HashFile ("sha256:<hex>") pins a binary, HashDir ("h1:<base64>", recipe in
// its doc) a directory; SpecHash picks the right one for a Spec. Spec.Checksum is
// checked before anything runs (ChecksumError). The lock file (Lock, ReadLock) records
// the pins of a run.
//
// Deadlines. Model.Start, Step and Close are bounded by the Spec's timeouts; a call that
// misses one means the plugin is wedged: the host kills its process group and returns a
// *DeadlineError naming the setting to raise, so the caller restarts a fresh process.
//
// Bounds. The log file is capped (Spec.LogLimit) and rotated with a note of what was
// dropped; model audio must be finite and within ±MaxOutputAmplitude.
//
// Errors. Every failed call is a *CallError naming the plugin and the call; it wraps the
// gRPC status (status.Code works) and says when the process has exited (and why, when
// the host killed it). A plugin that breaks the model protocol gets an error saying
// "protocol violation" and what was expected; it never crashes the host.
package pluginhost

import "time"

// Spec says how to run one plugin; it is what a run file's plugin block resolves to.
type Spec struct {
	// Name is the plugin block's label; it names the plugin in errors, logs and locks.
	Name string
	// Source is an executable path (a Go plugin binary or any executable). Exactly one
	// of Source and Command is set.
	Source string
	// Command is an argv, e.g. ["python3", "-m", "my_plugin"] or ["./run.sh"].
	Command []string
	// Dir is the working directory; for a Command plugin it is also the directory whose
	// hash pins the plugin (the Python case). Relative paths resolve against it.
	Dir string
	// HashSkip lists paths under Dir, relative to it with "/" separators, that are not
	// the plugin's and so not in its h1 hash (HashDir): a run file kept in the plugin's
	// dir, its lock file, the run's output folders. core/config fills it in.
	HashSkip []string
	// Env is added to a minimal inherited environment (PATH, HOME, LANG, TMPDIR, ...).
	Env map[string]string
	// Version, when set, must equal the version the plugin describes.
	Version string
	// Checksum, when set, pins the plugin: "sha256:<hex>" of the Source binary, or
	// "h1:<base64>" of Dir's files. A mismatch refuses the plugin before it starts.
	Checksum string
	// Reattach connects to an already running plugin instead of starting one (a model
	// kept warm on a GPU): the JSON a plugin prints when served in debug mode (the
	// whole "DUPLEXMPE_REATTACH=..." line is accepted too). Kill then only disconnects;
	// Checksum cannot be combined with it, and Source/Command are not used.
	Reattach string
	// StartTimeout bounds the handshake; model plugins loading weights need minutes.
	// Zero means DefaultStartTimeout (5 min).
	StartTimeout time.Duration
	// ConversationStartTimeout bounds Model.Start of one conversation and FrameTimeout
	// one Model.Step. A model that does not answer in time is taken as wedged: the host
	// kills its process group at once (Exited then reports true, and Restart starts it
	// again), so one stuck call costs one conversation, not the rest of the run. Zero
	// means DefaultConversationStartTimeout and DefaultFrameTimeout.
	ConversationStartTimeout time.Duration
	FrameTimeout             time.Duration
	// CallTimeout bounds every other call of a service the plugin serves (TTS.Synthesize
	// and Voices, ASR.Transcribe, Judge.JudgeAnswer and ClassifySpeech, LLM.Complete) in
	// the same way: past it the process group is killed, the call fails with a
	// *DeadlineError naming call_timeout, and Restart starts the plugin again. Zero means
	// DefaultCallTimeout.
	CallTimeout time.Duration
	// ConversationTimeout bounds the wall time of one whole conversation of a model
	// (the scheduler enforces it: core/session); zero means
	// protocol.DefaultConversationWallTime.
	ConversationTimeout time.Duration
	// ConfigDir is where relative values of the plugin's path-typed config fields
	// (sdk.TypePath) resolve: the run file's directory. Empty: they are sent as written.
	ConfigDir string
	// LogFile, when set, receives the plugin's stderr and log lines (appended; the
	// directory is created). Not used when reattaching: the output stays with the
	// process that runs the plugin.
	LogFile string
	// LogLimit bounds LogFile in bytes: when it would grow past it, it is renamed to
	// LogFile.1 (replacing the previous one, whose size is noted as dropped) and a new
	// LogFile begins with a line saying so. Zero means DefaultLogLimit; at most about
	// twice the limit is on disk per plugin.
	LogLimit int64
}

// Defaults of the Spec's bounds.
const (
	DefaultConversationStartTimeout = 5 * time.Minute
	DefaultFrameTimeout             = 2 * time.Minute
	DefaultCallTimeout              = 5 * time.Minute
	DefaultLogLimit                 = 64 << 20
)

func (s Spec) conversationStartTimeout() time.Duration {
	if s.ConversationStartTimeout > 0 {
		return s.ConversationStartTimeout
	}
	return DefaultConversationStartTimeout
}

func (s Spec) frameTimeout() time.Duration {
	if s.FrameTimeout > 0 {
		return s.FrameTimeout
	}
	return DefaultFrameTimeout
}

func (s Spec) callTimeout() time.Duration {
	if s.CallTimeout > 0 {
		return s.CallTimeout
	}
	return DefaultCallTimeout
}

func (s Spec) startTimeout() time.Duration {
	if s.StartTimeout > 0 {
		return s.StartTimeout
	}
	return DefaultStartTimeout
}

func (s Spec) logLimit() int64 {
	if s.LogLimit > 0 {
		return s.LogLimit
	}
	return DefaultLogLimit
}
