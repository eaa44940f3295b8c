package pluginhost

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// procInfo is what pluginProcesses reads of a process in /proc/<pid>/stat.
type procInfo struct{ ppid, pgrp int }

// pluginProcesses lists the live processes of a plugin started as process group pgid
// with token in its environment: the group's members, every descendant of pgid (one
// that called setsid or setpgid too, while its parent lives), and every process that
// carries the token (an orphaned setsid child, reparented to init, still does). The
// calling process is never listed.
func pluginProcesses(pgid int, token string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	procs := map[int]procInfo{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		procs[pid] = procInfo{ppid: ppid, pgrp: pgrp}
	}
	in := map[int]bool{}
	for pid, p := range procs {
		if pid == pgid || p.pgrp == pgid {
			in[pid] = true
		}
	}
	for changed := true; changed; { // descendants, to a fixed point
		changed = false
		for pid, p := range procs {
			if !in[pid] && in[p.ppid] {
				in[pid], changed = true, true
			}
		}
	}
	if token != "" {
		mark := []byte(TokenEnv + "=" + token + "\x00")
		for pid := range procs {
			if in[pid] {
				continue
			}
			if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err == nil && bytes.Contains(append(b, 0), mark) {
				in[pid] = true
			}
		}
	}
	out := make([]int, 0, len(in))
	for pid := range in {
		out = append(out, pid)
	}
	return out
}

// killPlugin SIGKILLs every process of the plugin (pluginProcesses) until none is
// left, for at most about a second: a process forking as fast as it is killed cannot
// hold the host.
func killPlugin(pgid int, token string) {
	if pgid <= 0 {
		return
	}
	for range 200 {
		killGroup(pgid)
		pids := pluginProcesses(pgid, token)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// processStart is when process pid started (clock ticks after boot, /proc/<pid>/stat
// field 22), as text; "0" when unknown. With the pid it names one process for good.
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "0"
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "0"
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "0"
	}
	return f[19]
}

// residentBytes is process pid's resident memory (/proc/<pid>/statm, its second field,
// in pages); 0 when unknown.
func residentBytes(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
