package pluginhost

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestLineLogger(t *testing.T) {
	var out bytes.Buffer
	w := newLineLogger(hclog.New(&hclog.LoggerOptions{Output: &out, JSONFormat: true}), "stdout")
	w.Write([]byte("first li"))
	w.Write([]byte("ne\r\nsecond\n\nthird"))
	if got := strings.Count(out.String(), `"stream":"stdout"`); got != 2 {
		t.Fatalf("%d lines logged; want 2 (the third has no newline yet):\n%s", got, out.String())
	}
	if !strings.Contains(out.String(), `"@message":"first line"`) {
		t.Fatalf("a line split over two writes was not joined:\n%s", out.String())
	}
	out.Reset()
	w.Write([]byte(strings.Repeat("x", 3*maxLogLine)))
	if got := strings.Count(out.String(), `"stream":"stdout"`); got != 3 {
		t.Fatalf("an endless line gave %d log entries; want 3 bounded ones", got)
	}
	w.Write([]byte("\n"))
	if !strings.Contains(out.String(), `"@message":"thirdxxx`) || !strings.Contains(out.String(), `"@message":"xxxxx"`) {
		t.Fatalf("pieces of the endless line are missing: %.100s", out.String())
	}
	if got := strings.Count(out.String(), "x"); got != 3*maxLogLine {
		t.Fatalf("%d x logged; want %d (no byte lost at the cuts)", got, 3*maxLogLine)
	}
}
