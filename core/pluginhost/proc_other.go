//go:build !linux

package pluginhost

import (
	"errors"
	"syscall"
)

// sysProcAttr puts the plugin in its own process group. Pdeathsig exists only on Linux:
// elsewhere a host killed with SIGKILL can leave its plugins running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// GroupMembers reports whether process group pgid has a process left; without /proc the
// pids are unknown, so a non-empty group is reported as [pgid].
func GroupMembers(pgid int) ([]int, error) {
	if err := syscall.Kill(-pgid, 0); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil, nil
		}
		return nil, err
	}
	return []int{pgid}, nil
}

func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// killPlugin kills the plugin's process group; without /proc its other processes (a
// child that called setsid) cannot be found.
func killPlugin(pgid int, _ string) { killGroup(pgid) }

// processStart is unknown without /proc.
func processStart(int) string { return "0" }

// pluginProcesses cannot look beyond the process group without /proc.
func pluginProcesses(int, string) []int { return nil }

// residentBytes is unknown without /proc.
func residentBytes(int) int64 { return 0 }
