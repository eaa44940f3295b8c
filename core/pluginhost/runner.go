package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"
)

// groupRunner runs the plugin process for go-plugin, in its own process group. Unlike
// go-plugin's default runner, its Kill SIGKILLs the whole group, and it publishes the
// pid as soon as the process exists, so a start that times out or is cancelled can be
// cleaned up too.
type groupRunner struct {
	cmd            *exec.Cmd
	stdout, stderr io.ReadCloser
	pid            atomic.Int64
	token          string // TokenEnv's value in the plugin's environment
	// found are the processes of the plugin seen so far (pid -> start time; the
	// tracker's, guarded by track.mu), ended with it even once they left its group,
	// its session and its environment.
	found map[int]string
	// logger is the plugin's (go-plugin's, named for it); warnedMemory is set once the
	// memory warning was given for this start.
	logger       hclog.Logger
	warnedMemory atomic.Bool
}

// TokenEnv names the environment variable that marks every process of one plugin
// start (the plugin, its children and theirs, a child in a session of its own too):
// the host finds them by it when it ends the plugin.
const TokenEnv = "DUPLEXMPE_PLUGIN_TOKEN"

var tokenSeq atomic.Uint64

func newToken() string {
	return strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(tokenSeq.Add(1), 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// killAll ends every process of the plugin (killPlugin) and every one the tracker saw
// it have; nothing before Start.
func (r *groupRunner) killAll() {
	if r == nil {
		return
	}
	r.note() // the descendants, while the plugin still holds them
	killPlugin(r.Pid(), r.token)
	r.killFound()
	track.remove(r)
}

// closePipes closes the host's ends of the plugin's stdout and stderr, which ends
// go-plugin's readers of them when a process the host could not end holds them open.
func (r *groupRunner) closePipes() {
	if r == nil {
		return
	}
	if r.stdout != nil {
		_ = r.stdout.Close()
	}
	if r.stderr != nil {
		_ = r.stderr.Close()
	}
}

// runnerFunc adapts spec's command to go-plugin's RunnerFunc: go-plugin prepares a
// command holding only the environment it needs (cookie, versions, client certificate,
// socket dir); those variables are added to ours. The runner is published through *out.
func runnerFunc(base *exec.Cmd, out *atomic.Pointer[groupRunner]) func(hclog.Logger, *exec.Cmd, string) (runner.Runner, error) {
	return func(logger hclog.Logger, prepared *exec.Cmd, socketDir string) (runner.Runner, error) {
		markSocketDir(socketDir)
		cmd := exec.Command(base.Path, base.Args[1:]...)
		cmd.Dir = base.Dir
		token := newToken()
		cmd.Env = append(append(append([]string(nil), base.Env...), prepared.Env...), TokenEnv+"="+token)
		cmd.SysProcAttr = base.SysProcAttr
		cmd.ExtraFiles = base.ExtraFiles
		r := &groupRunner{cmd: cmd, token: token, logger: logger}
		var err error
		if r.stdout, err = cmd.StdoutPipe(); err != nil {
			return nil, err
		}
		if r.stderr, err = cmd.StderrPipe(); err != nil {
			return nil, err
		}
		out.Store(r)
		return r, nil
	}
}

func (r *groupRunner) Start(context.Context) error {
	if err := r.cmd.Start(); err != nil {
		return err
	}
	r.pid.Store(int64(r.cmd.Process.Pid))
	track.add(r)
	return nil
}

// Pid is the process (and process group) id; 0 before Start.
func (r *groupRunner) Pid() int { return int(r.pid.Load()) }

func (r *groupRunner) Wait(context.Context) error { return r.cmd.Wait() }

func (r *groupRunner) Kill(context.Context) error {
	r.killAll()
	return nil
}

func (r *groupRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *groupRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *groupRunner) Name() string          { return r.cmd.Path }
func (r *groupRunner) ID() string            { return strconv.Itoa(r.Pid()) }

func (r *groupRunner) Diagnose(context.Context) string {
	if _, err := os.Stat(r.cmd.Path); errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf("%s does not exist", r.cmd.Path)
	}
	return "the plugin exited or did not print the go-plugin handshake line; is it a duplexmpe plugin (sdk.Serve, or the Python SDK), built for this machine?"
}

func (r *groupRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *groupRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
