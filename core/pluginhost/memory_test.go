package pluginhost_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Issue 31 point 9: a plugin's memory grew to 1.56 GB in one conversation without a word.
// The host's tracker now sums the resident memory of a plugin's live processes as it
// scans them and warns, once per start, naming the plugin, when it passes
// MemoryWarning: here a real plugin process against a level of one byte.
func TestMemoryWarningOncePerStart(t *testing.T) {
	old := pluginhost.MemoryWarning
	pluginhost.MemoryWarning = 1
	t.Cleanup(func() { pluginhost.MemoryWarning = old })
	var out syncBuffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Warn})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "beeper", Source: beeperBin(t)}, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	const warning = "past the host's warning level"
	for ctx.Err() == nil && !strings.Contains(out.String(), warning) {
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(out.String(), warning) || !strings.Contains(out.String(), "beeper") {
		t.Fatalf("no memory warning naming the plugin:\n%s", out.String())
	}
	time.Sleep(2500 * time.Millisecond) // more scans of the same start: no second warning
	if n := strings.Count(out.String(), warning); n != 1 {
		t.Errorf("%d memory warnings for one start:\n%s", n, out.String())
	}
}
