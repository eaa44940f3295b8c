package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/duplexmpe/duplexmpe/plugins/moshi-ws/oggopus"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Message kinds: the first byte of every binary websocket message (moshi rust/protocol.md).
const (
	kindHandshake = 0
	kindAudio     = 1
	kindText      = 2
	kindError     = 5
)

// conversation is one websocket session. Step sends each frame as Ogg/Opus, waits (up to
// step_wait_ms) until the server has answered it, and returns what a background reader
// has received since the previous Step.
//
// The server answers every frame with one decoded frame of audio, lag_frames later: it
// has answered frame j once its stream holds (j+1)*1920 samples, counted on the server's
// clock (before the codec delay is dropped). Counting answers, instead of returning
// whatever came, keeps the audio where the server put it however slow the server or the
// harness is, and tells a server that fell behind from one that said nothing.
type conversation struct {
	cfg       config
	conn      *websocket.Conn
	enc       *oggopus.Encoder
	handshake map[string]string
	stop      context.CancelFunc // stops the reader
	done      chan struct{}      // closed when the reader has stopped
	arrived   chan struct{}      // signalled (capacity 1) when audio arrives

	start time.Time // wall time of the first Step, for pacing
	steps int       // frames sent

	behind      bool // past max_behind_frames (mark mode): steps stop waiting until it catches up
	worstBehind int
	worstAt     int

	mu       sync.Mutex
	audio    []float32
	text     strings.Builder
	answered int   // whole frames the server's stream holds
	declared int   // the pre-skip the server's stream declares (48 kHz), -1 until known
	err      error // why the reader stopped
}

func dial(ctx context.Context, cfg config) (*conversation, error) {
	dctx, cancel := context.WithTimeout(ctx, cfg.connectTimeout)
	defer cancel()
	conn, _, err := websocket.Dial(dctx, cfg.url, nil)
	if err != nil {
		return nil, fmt.Errorf("moshi-ws: cannot connect to %s: %v (is the Moshi or FLM-Audio server running there? see the plugin's README)", cfg.url, err)
	}
	conn.SetReadLimit(16 << 20)
	typ, msg, err := conn.Read(dctx)
	if err != nil {
		conn.CloseNow()
		return nil, fmt.Errorf("moshi-ws: %s accepted the websocket but sent no handshake within %v: %v", cfg.url, cfg.connectTimeout, err)
	}
	if typ != websocket.MessageBinary || len(msg) == 0 || msg[0] != kindHandshake {
		conn.CloseNow()
		return nil, fmt.Errorf("moshi-ws: %s did not start with the handshake byte 0x00 (got %s message % x): is it a Moshi /api/chat endpoint?", cfg.url, typ, msg[:min(len(msg), 8)])
	}
	handshake := map[string]string{}
	if len(msg) >= 9 { // the Rust server: u32 protocol version, u32 model version
		handshake["server_protocol_version"] = strconv.FormatUint(uint64(binary.LittleEndian.Uint32(msg[1:])), 10)
		handshake["server_model_version"] = strconv.FormatUint(uint64(binary.LittleEndian.Uint32(msg[5:])), 10)
	}
	enc, err := oggopus.NewEncoder(rate, rand.Uint32())
	if err != nil {
		conn.CloseNow()
		return nil, err
	}
	preSkip := -1 // the declared one
	if cfg.codecDelayMs >= 0 {
		preSkip = int(math.Round(cfg.codecDelayMs * 48))
	}
	dec, err := oggopus.NewDecoderSkipping(rate, preSkip)
	if err != nil {
		conn.CloseNow()
		return nil, err
	}
	rctx, stop := context.WithCancel(context.Background())
	c := &conversation{
		cfg: cfg, conn: conn, enc: enc, handshake: handshake, stop: stop,
		done: make(chan struct{}), arrived: make(chan struct{}, 1), declared: -1,
	}
	go c.read(rctx, dec)
	return c, nil
}

// read receives until the connection ends, decoding audio as it comes.
func (c *conversation) read(ctx context.Context, dec *oggopus.Decoder) {
	defer close(c.done)
	fail := func(err error) {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
	}
	for {
		typ, msg, err := c.conn.Read(ctx)
		if err != nil {
			if status := websocket.CloseStatus(err); status != -1 {
				fail(fmt.Errorf("the server closed the websocket (status %d %q)", status, closeReason(err)))
			} else {
				fail(err)
			}
			return
		}
		if typ != websocket.MessageBinary || len(msg) == 0 {
			continue
		}
		switch msg[0] {
		case kindAudio:
			pcm, err := dec.Decode(msg[1:])
			c.mu.Lock()
			c.audio = append(c.audio, pcm...)
			c.answered = int(dec.Decoded() / frameSize)
			c.declared = dec.Declared()
			c.mu.Unlock()
			if err != nil {
				fail(fmt.Errorf("the server's audio stream is broken: %w", err))
				c.conn.Close(websocket.StatusUnsupportedData, "bad Ogg/Opus")
				return
			}
			select {
			case c.arrived <- struct{}{}:
			default:
			}
		case kindText:
			c.mu.Lock()
			c.text.Write(msg[1:])
			c.mu.Unlock()
		case kindError:
			fail(fmt.Errorf("the server reported an error: %q", msg[1:]))
			c.conn.Close(websocket.StatusNormalClosure, "")
			return
		}
		// Handshake repeats, control, metadata and ping messages carry nothing a
		// streaming conversation uses.
	}
}

func closeReason(err error) string {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return ""
}

func (c *conversation) Format() sdk.Format {
	return sdk.Format{InputRate: rate, OutputRate: rate, FrameSize: frameSize}
}

func (c *conversation) Step(ctx context.Context, frame []float32) (sdk.Output, error) {
	if c.stopped() {
		return c.last()
	}
	if len(frame) != frameSize {
		return sdk.Output{}, fmt.Errorf("moshi-ws: frame of %d samples, want %d", len(frame), frameSize)
	}
	// Pacing: the server consumes audio in real time, so frame k goes out no earlier
	// than k*80 ms after the first. A late harness sends at once; it never bursts ahead.
	if c.steps == 0 {
		c.start = time.Now()
	} else if c.cfg.pace {
		if wait := time.Until(c.start.Add(time.Duration(c.steps) * frameTime)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return sdk.Output{}, ctx.Err()
			}
		}
	}
	c.steps++
	page, err := c.enc.Encode(frame)
	if err != nil {
		return sdk.Output{}, fmt.Errorf("moshi-ws: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, c.cfg.writeTimeout)
	err = c.conn.Write(wctx, websocket.MessageBinary, append([]byte{kindAudio}, page...))
	cancel()
	if err != nil {
		if c.stopped() {
			return c.last()
		}
		return sdk.Output{}, fmt.Errorf("moshi-ws: sending frame %d to %s: %v", c.steps-1, c.cfg.url, err)
	}
	due := c.steps - c.cfg.lag // answers due once this frame is in
	if !c.behind {
		c.awaitAnswers(ctx, due, c.cfg.stepWait)
	}
	if c.stopped() { // what arrived, then why it ended: not a server that fell behind
		return c.last()
	}
	out := c.take()
	behind := due - c.answeredFrames()
	if behind > c.worstBehind {
		c.worstBehind, c.worstAt = behind, c.steps-1
	}
	if behind <= c.cfg.maxBehind {
		c.behind = false
		return out, nil
	}
	if c.cfg.onBehind == "fail" {
		return sdk.Output{}, fmt.Errorf("moshi-ws: the server at %s fell behind: after frame %d it had answered %d of the %d frames due "+
			"(%d frames, %.2f s behind; each step waits up to step_wait_ms = %d for its answer, max_behind_frames = %d). "+
			"Its late audio would be scored as silence: give the model a faster server, raise step_wait_ms, "+
			"or set on_behind = \"mark\" to record it late and marked",
			c.cfg.url, c.steps-1, due-behind, due, behind, float64(behind)*frameTime.Seconds(),
			c.cfg.stepWait.Milliseconds(), c.cfg.maxBehind)
	}
	if !c.behind {
		c.behind = true
		mark := fmt.Sprintf("[moshi-ws: the server is %d frames (%.2f s) behind at frame %d]", behind, float64(behind)*frameTime.Seconds(), c.steps-1)
		logger.Warn("the server fell behind; its audio from here on is late", "url", c.cfg.url, "frame", c.steps-1,
			"behind_frames", behind, "answered", due-behind, "due", due)
		out.Text = "\n" + mark + "\n" + out.Text
	}
	return out, nil
}

// awaitAnswers waits until the server has answered `due` frames, the reader stops, ctx
// ends or `limit` passes.
func (c *conversation) awaitAnswers(ctx context.Context, due int, limit time.Duration) {
	if limit <= 0 || c.answeredFrames() >= due {
		return
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	for c.answeredFrames() < due {
		select {
		case <-c.arrived:
		case <-c.done:
			return
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (c *conversation) answeredFrames() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.answered
}

// take hands over what the reader has received since the previous Step.
func (c *conversation) take() sdk.Output {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := sdk.Output{Samples: c.audio, Text: c.text.String()}
	c.audio = nil
	c.text.Reset()
	return out
}

// stopped reports whether the reader has stopped or is stopping: it records why before it
// closes the connection, so a send that fails meanwhile is answered with that reason.
func (c *conversation) stopped() bool {
	c.mu.Lock()
	failed := c.err != nil
	c.mu.Unlock()
	return failed || c.ended()
}

func (c *conversation) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// last answers a Step after the connection ended: what arrived before the end, once,
// then an error naming the server, the frame count and the reason.
func (c *conversation) last() (sdk.Output, error) {
	if out := c.take(); len(out.Samples) > 0 || out.Text != "" {
		return out, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return sdk.Output{}, fmt.Errorf("moshi-ws: conversation with %s ended after %d frames: %v", c.cfg.url, c.steps, c.err)
}

// Close first lets the server answer what it still owes (up to drain_ms): closing at once
// would cut off audio it has queued. Whatever arrives then comes after the last step, so
// it is counted in the log, not returned.
func (c *conversation) Close() error {
	due := c.steps - c.cfg.lag
	c.awaitAnswers(context.Background(), due, c.cfg.drain)
	late := len(c.take().Samples)
	c.mu.Lock()
	answered, declared := c.answered, c.declared
	c.mu.Unlock()
	logger.Info("conversation over", "url", c.cfg.url, "frames_sent", c.steps, "frames_answered", answered,
		"frames_due", due, "worst_behind_frames", c.worstBehind, "worst_behind_at_frame", c.worstAt,
		"samples_after_last_step", late, "declared_preskip_48k", declared, "codec_delay_ms", c.cfg.codecDelayMs)
	c.conn.Close(websocket.StatusNormalClosure, "conversation over")
	c.stop()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		c.conn.CloseNow()
	}
	return nil
}
