package pluginpython_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// TestReattachToDebugPlugin keeps a plugin running on its own (debug mode, as for a
// model kept warm on a GPU) and connects hosts to it with the line it prints: Kill on a
// reattached plugin only disconnects, and a second host can reattach after the first.
func TestReattachToDebugPlugin(t *testing.T) {
	s := spec(t)
	cmd := exec.Command("./run.sh", "--debug")
	cmd.Dir = s.Dir
	cmd.Stderr = io.Discard
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the reattach line: %v", err)
	}
	if !strings.HasPrefix(line, sdk.ReattachPrefix) {
		t.Fatalf("debug mode printed %q, want a %s line", line, sdk.ReattachPrefix)
	}

	ctx := context.Background()
	for round := 0; round < 2; round++ {
		c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "warm", Reattach: line}, nil)
		if err != nil {
			t.Fatalf("round %d: reattach: %v", round, err)
		}
		model, err := c.Model()
		if err != nil {
			t.Fatal(err)
		}
		conv, err := model.Start(ctx, sdk.ConversationStart{ID: "warm"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conv.Step(ctx, constant(0)); err != nil {
			t.Fatal(err)
		}
		if err := conv.Close(); err != nil {
			t.Fatal(err)
		}
		c.Kill()
		select {
		case err := <-exited:
			t.Fatalf("round %d: Kill of a reattached plugin ended it (%v); it must only disconnect", round, err)
		case <-time.After(300 * time.Millisecond):
		}
	}
	// Ctrl-C stops a debug-mode plugin.
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after Ctrl-C the plugin exited with %v, want 0", err)
		}
	case <-time.After(60 * time.Second): // bounds a hang, generously for a loaded machine
		t.Error("the debug-mode plugin ignored Ctrl-C")
	}
}
