package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/duplexmpe/duplexmpe/core/progress"
)

// openTerminal opens a pseudo-terminal of 120 columns: the side a program writes to,
// and all that was written to it, once it is closed.
func openTerminal(t *testing.T) (*os.File, func() string) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	ioctl := func(f *os.File, req uintptr, arg unsafe.Pointer) {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); e != 0 {
			t.Fatalf("ioctl %#x: %v", req, e)
		}
	}
	var unlock, n int32
	ioctl(ptmx, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock))
	ioctl(ptmx, syscall.TIOCGPTN, unsafe.Pointer(&n))
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	size := struct{ rows, cols, x, y uint16 }{40, 120, 0, 0}
	ioctl(tty, syscall.TIOCSWINSZ, unsafe.Pointer(&size))
	var screen bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		io.Copy(&screen, ptmx) // ends with an error once the terminal side is closed
	}()
	return tty, func() string {
		tty.Close()
		<-read
		ptmx.Close()
		return screen.String()
	}
}

// On a terminal the CLI draws a phase as bars: one per part (a model) and one for the
// whole phase, each with done/total, the rate and the time left; off a terminal the
// same phase is plain lines. Both forms come from the counter the domain reports into.
func TestProgressIsBarsOnATerminalAndLinesElsewhere(t *testing.T) {
	play := func(w io.Writer) {
		c := progress.New(progressPrinter{w: w}, "playing", "default", "conversations")
		c.StartParts(progress.Share{Name: "silent", Total: 2, Reused: 1}, progress.Share{Name: "cascade", Total: 2})
		c.AddTo("silent", 1)
		c.AddTo("cascade", 2)
		c.Finish(true)
	}
	tty, closeTTY := openTerminal(t)
	play(tty)
	screen := closeTTY()
	for _, bar := range []string{
		`silent +2/2 \[=+\] +100%, [^,]+, done`,
		`cascade +2/2 \[=+\] +100%, [^,]+, done`,
		`playing default +4/4 \[=+\] +100%, [^,]+, done`,
	} {
		if !regexp.MustCompile(bar).MatchString(screen) {
			t.Errorf("no bar %q on the terminal:\n%q", bar, screen)
		}
	}
	if strings.Contains(screen, "playing default:") {
		t.Errorf("log lines on a terminal:\n%s", screen)
	}

	var log bytes.Buffer
	play(&log)
	want := "playing default: 1/4 conversations, 25%, -, time left unknown; silent 1/2, cascade 0/2\n"
	if lines := strings.Split(strings.TrimSpace(log.String()), "\n"); log.String()[:len(want)] != want ||
		!strings.HasPrefix(lines[len(lines)-1], "playing default: 4/4 conversations, 100%, ") ||
		!strings.HasSuffix(lines[len(lines)-1], ", done; silent 2/2, cascade 2/2") || strings.Contains(log.String(), "[") {
		t.Errorf("off a terminal:\n%s", log.String())
	}
}

// Ctrl-C while playing on a terminal: the loop returns, and the scoring of what it had
// queued starts its bar under the cancelled context. That bar is drawn and ended (it
// used to panic: "mpb.Progress instance can't be reused after Wait").
func TestProgressBarAfterInterrupt(t *testing.T) {
	tty, closeTTY := openTerminal(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ui := newUI(&State{Ctx: ctx, Stderr: tty})
	c := progress.New(ui.Progress, "scoring", "default", "conversations")
	c.Start(3)
	c.Add(1)
	c.Finish(false)
	if screen := closeTTY(); !regexp.MustCompile(`scoring default +1/3 conversations \[=+`).MatchString(screen) {
		t.Errorf("no bar of the scoring left:\n%q", screen)
	}
}
