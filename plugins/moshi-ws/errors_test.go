package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// inProcess configures the plugin in this process (the error paths need no gRPC).
func inProcess(t *testing.T, config map[string]any) *plugin {
	t.Helper()
	p := &plugin{cfg: defaults}
	if err := p.Configure(context.Background(), config); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigErrors(t *testing.T) {
	for _, bad := range []map[string]any{
		{"url": "http://localhost:8998/api/chat"},
		{"url": "localhost:8998"},
		{"url": 8998.0},
		{"connect_timeout": -1.0},
		{"connect_timeout": 0.0},
		{"write_timeout": "10"},
		{"step_wait_ms": 1e9},
		{"pace": "yes"},
		{"lag_frames": 1.5},
		{"lag_frames": 51.0},
		{"max_behind_frames": -1.0},
		{"on_behind": "warn"},
		{"on_behind": true},
		{"drain_ms": "2000"},
		{"codec_delay_ms": -2.0},
		{"codec_delay_ms": 2000.0},
	} {
		p := &plugin{cfg: defaults}
		if err := p.Configure(context.Background(), bad); err == nil {
			t.Errorf("config %v accepted", bad)
		} else if p.cfg != defaults {
			t.Errorf("config %v: a rejected config changed the plugin", bad)
		}
	}
	p := inProcess(t, map[string]any{"url": "wss://example.org:8990/api/chat", "pace": false, "step_wait_ms": 0.0, "connect_timeout": 2.5,
		"lag_frames": 2.0, "max_behind_frames": 0.0, "on_behind": "mark", "drain_ms": 500.0, "codec_delay_ms": -1.0})
	want := config{url: "wss://example.org:8990/api/chat", connectTimeout: 2500 * time.Millisecond, writeTimeout: defaults.writeTimeout,
		lag: 2, onBehind: "mark", drain: 500 * time.Millisecond, codecDelayMs: -1}
	if p.cfg != want {
		t.Errorf("parsed %+v, want %+v", p.cfg, want)
	}
}

// The Rust server's handshake carries protocol and model versions: they join the identity.
func TestRustHandshakeVersions(t *testing.T) {
	srv := newStubServer(t, &stubServer{rust: true})
	p := inProcess(t, map[string]any{"url": srv.url(), "pace": false})
	conv, err := p.Start(context.Background(), sdk.ConversationStart{ID: "rust"})
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	info, _ := p.Describe(context.Background())
	if info.Identity["server_protocol_version"] != "7" || info.Identity["server_model_version"] != "3" || info.Identity["url"] != "" {
		t.Errorf("identity %v", info.Identity)
	}
	if _, err := conv.Step(context.Background(), make([]float32, frameSize)); err != nil {
		t.Fatal(err)
	}
}

// handler serves a websocket that runs script on the connection.
func handler(t *testing.T, script func(ctx context.Context, c *websocket.Conn)) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		script(r.Context(), c)
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/api/chat"
}

func TestNotAMoshiServer(t *testing.T) {
	url := handler(t, func(ctx context.Context, c *websocket.Conn) {
		c.Write(ctx, websocket.MessageText, []byte("hello"))
		c.Read(ctx)
	})
	_, err := inProcess(t, map[string]any{"url": url}).Start(context.Background(), sdk.ConversationStart{})
	if err == nil || !strings.Contains(err.Error(), "handshake byte") || !strings.Contains(err.Error(), url) {
		t.Errorf("err %v", err)
	}
}

func TestSilentServerTimesOut(t *testing.T) {
	url := handler(t, func(ctx context.Context, c *websocket.Conn) { c.Read(ctx) })
	began := time.Now()
	_, err := inProcess(t, map[string]any{"url": url, "connect_timeout": 0.3}).Start(context.Background(), sdk.ConversationStart{})
	if err == nil || !strings.Contains(err.Error(), "no handshake") || time.Since(began) > 10*time.Second {
		t.Errorf("err %v after %v", err, time.Since(began))
	}
}

// Audio that is not Ogg/Opus ends the conversation with an error that says so.
func TestBrokenAudioFromServer(t *testing.T) {
	url := handler(t, func(ctx context.Context, c *websocket.Conn) {
		c.Write(ctx, websocket.MessageBinary, []byte{kindHandshake})
		c.Write(ctx, websocket.MessageBinary, append([]byte{kindAudio}, "this is not ogg"...))
		for {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
		}
	})
	conv, err := inProcess(t, map[string]any{"url": url, "pace": false}).Start(context.Background(), sdk.ConversationStart{})
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	// Polled until the broken stream is seen, for at most 20 s (bounds a hang).
	for deadline := time.Now().Add(20 * time.Second); ; {
		if _, err = conv.Step(context.Background(), make([]float32, frameSize)); err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
		if time.Now().After(deadline) {
			t.Fatal("Step keeps succeeding after broken audio")
		}
	}
	if !strings.Contains(err.Error(), "audio stream is broken") || !strings.Contains(err.Error(), url) {
		t.Errorf("err %v", err)
	}
}

// A server error message (kind 5) ends the conversation with its text.
func TestServerErrorMessage(t *testing.T) {
	url := handler(t, func(ctx context.Context, c *websocket.Conn) {
		c.Write(ctx, websocket.MessageBinary, []byte{kindHandshake})
		c.Read(ctx)
		c.Write(ctx, websocket.MessageBinary, append([]byte{kindError}, "out of memory"...))
		c.Read(ctx)
	})
	conv, err := inProcess(t, map[string]any{"url": url, "pace": false}).Start(context.Background(), sdk.ConversationStart{})
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); { // bounds a hang
		if _, err = conv.Step(context.Background(), make([]float32, frameSize)); err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Errorf("err %v", err)
	}
}
