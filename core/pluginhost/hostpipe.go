package pluginhost

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// The host's death pipe: every plugin inherits its read end, and only this process holds
// the write end, so the read end sees end-of-file the moment this process is gone, how
// ever it died (SIGKILL included). The SDKs watch it from the moment they load and kill
// the plugin's process group then. Pdeathsig alone reaches only the direct child: a
// plugin behind a wrapper script that does not exec, or one still loading its weights,
// would outlive the host.
var hostPipe struct {
	once sync.Once
	r, w *os.File // w is never closed: its end is this process's end
	ino  uint64
	err  error
}

// withHostPipe passes the death pipe's read end to cmd and names it in cmd's
// environment (sdk.HostPipeEnv = "FD:INODE", so that a plugin never mistakes another
// file at that descriptor for it).
func withHostPipe(cmd *exec.Cmd) error {
	hostPipe.once.Do(func() {
		hostPipe.r, hostPipe.w, hostPipe.err = os.Pipe()
		if hostPipe.err != nil {
			return
		}
		var st syscall.Stat_t
		if hostPipe.err = syscall.Fstat(int(hostPipe.r.Fd()), &st); hostPipe.err == nil {
			hostPipe.ino = uint64(st.Ino)
		}
	})
	if hostPipe.err != nil {
		return fmt.Errorf("cannot make the pipe that ends plugins with the host: %v", hostPipe.err)
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, hostPipe.r)
	fd := 2 + len(cmd.ExtraFiles)
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d:%d", sdk.HostPipeEnv, fd, hostPipe.ino))
	return nil
}
