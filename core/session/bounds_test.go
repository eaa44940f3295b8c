package session

import (
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Before, a model could declare 1-sample frames at 192 kHz: about 3.3 hours of round
// trips for one 75 s conversation. Now a frame shorter than protocol.MinFrameSeconds
// fails the conversation at its start, as a refused format, before any frame is sent.
func TestFramesShorterThanTheMinimumAreRefused(t *testing.T) {
	for _, f := range []sdk.Format{
		{InputRate: 192000, OutputRate: 192000, FrameSize: 1},
		{InputRate: 16000, OutputRate: 16000, FrameSize: 159}, // 9.94 ms
	} {
		m := &scripted{format: f}
		rec := run(t, m, conversation(16000, 0.35, sixTurns), testOptions())
		if rec.FailureKind != record.FailFormat || !strings.Contains(rec.Failure, "between 10 ms and 10 s") || m.frames != 0 {
			t.Errorf("frames of %d samples at %d Hz: failure %q (%s) after %d frames; want the format refused before any frame",
				f.FrameSize, f.InputRate, rec.Failure, rec.FailureKind, m.frames)
		}
	}
	m := &scripted{format: sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 160}} // 10 ms: allowed
	if rec := run(t, m, conversation(16000, 0.35, sixTurns), testOptions()); rec.Failed() {
		t.Errorf("10 ms frames: %s", rec.Failure)
	}
}

// Before, no per-conversation time limit existed. Now a conversation that runs past
// Options.WallTime fails, named, with the kind record.FailWallTime. The model here sleeps
// 20 ms a frame over 40-odd frames, so it takes at least 0.8 s whatever the load: past a
// 0.2 s bound.
func TestConversationWallTimeBound(t *testing.T) {
	m := &scripted{format: sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1600}}
	m.reply = func(int) (sdk.Output, error) {
		time.Sleep(20 * time.Millisecond)
		return sdk.Output{}, nil
	}
	opts := testOptions()
	opts.WallTime = 200 * time.Millisecond
	rec := run(t, m, conversation(16000, 0.35, sixTurns), opts)
	if rec.FailureKind != record.FailWallTime || !strings.Contains(rec.Failure, "wall-time bound of 200ms") || !strings.Contains(rec.Failure, "conversation_timeout") {
		t.Fatalf("failure %q (%s), want the wall-time bound named", rec.Failure, rec.FailureKind)
	}
	if !m.closed {
		t.Error("the conversation was not closed")
	}
	// Without the bound (the default is an hour) the same model finishes.
	m2 := &scripted{format: m.format, reply: m.reply}
	if rec := run(t, m2, conversation(16000, 0.35, sixTurns), testOptions()); rec.Failed() || m2.frames < 40 {
		t.Errorf("unbounded: %q after %d frames", rec.Failure, m2.frames)
	}
}
