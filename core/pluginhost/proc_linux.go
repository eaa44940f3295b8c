package pluginhost

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr puts the plugin in its own process group (so the whole group can be
// killed, wrapper scripts and all, and a terminal's Ctrl-C reaches only the host) and
// asks the kernel to SIGKILL it if the host dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// GroupMembers lists the live processes of process group pgid (zombies, which are dead
// and only wait to be reaped, are left out). An empty list means nothing of the plugin
// survives.
func GroupMembers(pgid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// Format: pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if pg, err := strconv.Atoi(f[2]); err == nil && pg == pgid {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// processAlive reports whether pid runs (a zombie has exited: it only waits for its
// parent to collect its status).
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	state := s[i+2]
	return state != 'Z' && state != 'X'
}
