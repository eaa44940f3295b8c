package pluginhost_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
)

// A plugin that cannot start because of its own files fails deterministically (exit 3)
// with the cause in the error, the end of its stderr included; one killed by a signal
// before its handshake, or that crashed (out of memory) stays transient (issue 30), the
// crash with its stderr in the error too.
func TestStartFailureOfThePluginsOwnFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notexec"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	cases := []struct {
		name    string
		spec    pluginhost.Spec
		want    []string
		permant bool
	}{
		{"wrong script", pluginhost.Spec{Command: []string{python, "plugni.py"}, Dir: dir},
			[]string{"exited with status 2", "plugni.py"}, true},
		{"exits at once", pluginhost.Spec{Command: []string{"sh", "-c", "echo 'ModuleNotFoundError: No module named duplexmpe_sdk' >&2; exit 1"}, Dir: dir},
			[]string{"exited with status 1", "No module named duplexmpe_sdk"}, true},
		{"missing executable", pluginhost.Spec{Command: []string{"./run-plugin.sh"}, Dir: dir},
			[]string{"run-plugin.sh"}, true},
		{"command not on PATH", pluginhost.Spec{Command: []string{"no-such-interpreter-xyz"}, Dir: dir},
			[]string{"no-such-interpreter-xyz"}, true},
		{"not executable", pluginhost.Spec{Source: filepath.Join(dir, "notexec")},
			[]string{"cannot be run", "notexec"}, true},
		{"killed", pluginhost.Spec{Command: []string{"sh", "-c", "kill -9 $$"}, Dir: dir},
			nil, false},
		{"crashed", pluginhost.Spec{Command: []string{"sh", "-c", "echo 'CUDA error: out of memory' >&2; exit 1"}, Dir: dir},
			[]string{"exited with status 1", "CUDA error: out of memory"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.spec.Name = "p"
			cl, err := pluginhost.Start(context.Background(), c.spec, nil)
			if err == nil {
				cl.Kill()
				t.Fatal("started")
			}
			var se *pluginhost.StartError
			if got := fault.IsDeterministic(err); got != c.permant || errors.As(err, &se) != (c.want != nil) {
				t.Fatalf("deterministic = %v; want %v: %v", got, c.permant, err)
			}
			t.Log(err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q: %v", w, err)
				}
			}
		})
	}
}
