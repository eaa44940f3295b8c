// Command moshi-ws is a duplexmpe model plugin that drives a running Moshi or FLM-Audio
// server over its websocket protocol (/api/chat): a kind byte, then Ogg/Opus audio at
// 24 kHz both ways, or UTF-8 text pieces. See README.md.
package main

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// description says what the plugin is and what it was verified against.
const description = "Talks to a running Moshi or FLM-Audio server over its websocket (/api/chat): Ogg/Opus both ways, " +
	"each step waits for the server's answer to its frame. Verified against the real moshi.server of moshi 0.2.13 " +
	"(PyPI) on a tiny random checkpoint, on CPU (make test-adapters); FLM-Audio's server and the Rust backend were " +
	"not run, nor a GPU. The model hears and says Opus-coded audio, as through the web client."

var logger = hclog.New(&hclog.LoggerOptions{Name: "moshi-ws", Level: hclog.Info, Output: os.Stderr, JSONFormat: true})

const (
	version   = "0.2.0"
	rate      = 24000
	frameSize = 1920 // 80 ms at 24 kHz: one Mimi frame
	frameTime = 80 * time.Millisecond
)

// config is one parsed config block.
type config struct {
	url            string
	connectTimeout time.Duration // dial plus the server's handshake byte
	writeTimeout   time.Duration // one audio message
	stepWait       time.Duration // how long a Step waits for the server's answer to its frame
	pace           bool          // hold Steps to real time (one frame per 80 ms)
	lag            int           // frames the server's answers trail its input
	maxBehind      int           // unanswered frames tolerated after a step's wait
	onBehind       string        // "fail" or "mark"
	drain          time.Duration // how long Close waits for the answers still due
	codecDelayMs   float64       // the server's real Opus delay; < 0: trust the declared pre-skip
}

// The server's answer to frame k is its decoded frame k-1: moshi.server and FLM-Audio's
// server decode a frame as soon as its 1920 samples are in (they ignore the pre-skip our
// stream declares, so our frame k completes theirs), and LMGen yields nothing on its first
// step. Their streams declare 80 ms of pre-skip; libopus's real delay in their VoIP mode
// is 6.5 ms (measured against moshi.server 0.2.13, see README.md).
var defaults = config{
	url:            "ws://127.0.0.1:8998/api/chat",
	connectTimeout: 30 * time.Second,
	writeTimeout:   10 * time.Second,
	stepWait:       10 * time.Second,
	pace:           true,
	lag:            1,
	maxBehind:      3,
	onBehind:       "fail",
	drain:          2 * time.Second,
	codecDelayMs:   6.5,
}

type plugin struct {
	mu  sync.Mutex
	cfg config
	// handshake is what the last server handshake said, for Identity (the Rust server
	// sends protocol and model versions; the Python one sends none).
	handshake map[string]string
}

func (p *plugin) Describe(context.Context) (sdk.Info, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// The server's URL is transport (shards reach it on per-node ports): what it serves
	// is in its handshake.
	identity := map[string]string{
		"protocol": "moshi /api/chat: kind byte, Ogg/Opus 24 kHz mono both ways, text pieces",
	}
	for k, v := range p.handshake {
		identity[k] = v
	}
	return sdk.Info{
		Name:        "moshi-ws",
		Version:     version,
		Description: description,
		Config: []sdk.ConfigField{
			{Name: "url", Type: sdk.TypeString, Default: defaults.url, Description: "the server's websocket endpoint, ws:// or wss:// (FLM-Audio listens on port 8990)", Transport: true},
			{Name: "connect_timeout", Type: sdk.TypeNumber, Default: defaults.connectTimeout.Seconds(), Description: "seconds to connect and receive the server's handshake", Transport: true},
			{Name: "write_timeout", Type: sdk.TypeNumber, Default: defaults.writeTimeout.Seconds(), Description: "seconds to send one frame of audio before the conversation fails", Transport: true},
			{Name: "step_wait_ms", Type: sdk.TypeNumber, Default: float64(defaults.stepWait.Milliseconds()), Description: "the most a step waits for the server's answer to its frame (lag_frames back); 0: never wait, take what has arrived"},
			{Name: "pace", Type: sdk.TypeBool, Default: defaults.pace, Description: "send at most one 80 ms frame per 80 ms of wall time (the server runs in real time)"},
			{Name: "lag_frames", Type: sdk.TypeNumber, Default: float64(defaults.lag), Description: "frames the server's answers trail its input (1 for moshi.server and FLM-Audio's server)"},
			{Name: "max_behind_frames", Type: sdk.TypeNumber, Default: float64(defaults.maxBehind), Description: "frames the server may leave unanswered after a step's wait before on_behind applies"},
			{Name: "on_behind", Type: sdk.TypeString, Default: defaults.onBehind, Allowed: []string{"fail", "mark"}, Description: "a server further behind than max_behind_frames fails the conversation (fail) or is marked on the text channel and in the log, and the conversation goes on in real time (mark)"},
			{Name: "drain_ms", Type: sdk.TypeNumber, Default: float64(defaults.drain.Milliseconds()), Description: "the most the end of a conversation waits for the answers still due before closing the websocket"},
			{Name: "codec_delay_ms", Type: sdk.TypeNumber, Default: defaults.codecDelayMs, Description: "the server's real Opus delay, dropped from the start of its audio (6.5 for the Moshi and FLM-Audio servers, which declare 80); -1 trusts the stream's declared pre-skip"},
		},
		Identity: identity,
	}, nil
}

func (p *plugin) Configure(_ context.Context, raw map[string]any) error {
	cfg, err := parseConfig(raw)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.cfg, p.handshake = cfg, nil
	p.mu.Unlock()
	return nil
}

func parseConfig(raw map[string]any) (config, error) {
	cfg := defaults
	if v, ok := raw["url"]; ok {
		s, isString := v.(string)
		u, err := url.Parse(s)
		if !isString || err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			return cfg, fmt.Errorf("config url = %v: want a websocket URL like %q", v, defaults.url)
		}
		cfg.url = s
	}
	seconds := func(name string, scale float64, max float64, dst *time.Duration) error {
		v, ok := raw[name]
		if !ok {
			return nil
		}
		f, isNum := v.(float64)
		if !isNum || !(f >= 0 && f <= max) {
			return fmt.Errorf("config %s = %v: want a number in [0, %g]", name, v, max)
		}
		*dst = time.Duration(f * scale * float64(time.Second))
		return nil
	}
	if err := seconds("connect_timeout", 1, 3600, &cfg.connectTimeout); err != nil {
		return cfg, err
	}
	if err := seconds("write_timeout", 1, 3600, &cfg.writeTimeout); err != nil {
		return cfg, err
	}
	if err := seconds("step_wait_ms", 1e-3, 600000, &cfg.stepWait); err != nil {
		return cfg, err
	}
	if err := seconds("drain_ms", 1e-3, 600000, &cfg.drain); err != nil {
		return cfg, err
	}
	count := func(name string, max int, dst *int) error {
		v, ok := raw[name]
		if !ok {
			return nil
		}
		f, isNum := v.(float64)
		if !isNum || f != math.Trunc(f) || f < 0 || f > float64(max) {
			return fmt.Errorf("config %s = %v: want a whole number in [0, %d]", name, v, max)
		}
		*dst = int(f)
		return nil
	}
	if err := count("lag_frames", 50, &cfg.lag); err != nil {
		return cfg, err
	}
	if err := count("max_behind_frames", 1000000, &cfg.maxBehind); err != nil {
		return cfg, err
	}
	if v, ok := raw["on_behind"]; ok {
		if s, isString := v.(string); !isString || (s != "fail" && s != "mark") {
			return cfg, fmt.Errorf("config on_behind = %v: want \"fail\" or \"mark\"", v)
		}
		cfg.onBehind = v.(string)
	}
	if v, ok := raw["codec_delay_ms"]; ok {
		f, isNum := v.(float64)
		if !isNum || !(f == -1 || (f >= 0 && f <= 1000)) {
			return cfg, fmt.Errorf("config codec_delay_ms = %v: want milliseconds in [0, 1000], or -1 for the stream's declared pre-skip", v)
		}
		cfg.codecDelayMs = f
	}
	if cfg.connectTimeout == 0 || cfg.writeTimeout == 0 {
		return cfg, fmt.Errorf("config connect_timeout and write_timeout must be positive")
	}
	if v, ok := raw["pace"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return cfg, fmt.Errorf("config pace = %v: want true or false", v)
		}
		cfg.pace = b
	}
	return cfg, nil
}

func (p *plugin) Start(ctx context.Context, _ sdk.ConversationStart) (sdk.Conversation, error) {
	p.mu.Lock()
	cfg := p.cfg
	p.mu.Unlock()
	c, err := dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.handshake = c.handshake
	p.mu.Unlock()
	return c, nil
}

func main() { sdk.Serve(&plugin{cfg: defaults}) }
