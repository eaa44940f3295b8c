package sdk

import (
	"strconv"
	"strings"
)

// HostPipeEnv names the pipe that ends a plugin with its host: "FD:INODE", the inherited
// file descriptor of the read end of a pipe whose only write end the host holds. When
// the host is gone (however it died, SIGKILL included) the read end sees end-of-file and
// the plugin kills its own process group. The kernel's parent-death signal reaches only
// the host's direct child; this reaches a plugin behind a wrapper script that does not
// exec, and one still loading before it serves.
const HostPipeEnv = "DUPLEXMPE_HOST_PIPE"

// parseHostPipe reads HostPipeEnv's value.
func parseHostPipe(v string) (fd int, ino uint64, ok bool) {
	a, b, found := strings.Cut(v, ":")
	if !found {
		return 0, 0, false
	}
	fd, err1 := strconv.Atoi(a)
	ino, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil || fd < 3 {
		return 0, 0, false
	}
	return fd, ino, true
}
