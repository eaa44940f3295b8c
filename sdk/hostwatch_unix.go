//go:build unix

package sdk

import (
	"os"
	"syscall"
)

// The watch starts when the plugin's program starts, before main: a plugin that loads
// for minutes before it calls Serve is covered too.
func init() { watchHost(os.Getenv(HostPipeEnv)) }

// watchHost waits, on its own goroutine, for the end of the host's pipe and then
// SIGKILLs this process's group: the plugin, its wrapper script and whatever they
// started. Nothing happens when the variable is unset (a plugin started by hand, or in
// debug mode) or does not name a pipe.
func watchHost(v string) {
	fd, ino, ok := parseHostPipe(v)
	if !ok {
		return
	}
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO || uint64(st.Ino) != ino {
		return
	}
	syscall.CloseOnExec(fd) // the plugin's own children need not hold it
	f := os.NewFile(uintptr(fd), "duplexmpe-host-pipe")
	go func() {
		buf := make([]byte, 16)
		for {
			if _, err := f.Read(buf); err != nil {
				break // end of file: the host is gone
			}
		}
		os.Stderr.WriteString("duplexmpe plugin: the host is gone; stopping this plugin and its process group\n")
		_ = syscall.Kill(0, syscall.SIGKILL)
		os.Exit(1)
	}()
}
