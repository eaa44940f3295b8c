// Package pluginhost starts, checks, talks to and stops plugin processes (go-plugin over
// gRPC with AutoMTLS), and hands out sdk interfaces backed by them.
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
	// LogFile, when set, receives the plugin's stderr and log lines (appended; the
	// directory is created). Not used when reattaching: the output stays with the
	// process that runs the plugin.
	LogFile string
}
