// Command moshi-ws is a duplexmpe model plugin that drives a running Moshi or FLM-Audio
// server over its websocket protocol (/api/chat): a kind byte, then Ogg/Opus audio at
// 24 kHz both ways, or UTF-8 text pieces. See README.md.
package main

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/duplexmpe/duplexmpe/sdk"
)

const (
	version   = "0.1.0"
	rate      = 24000
	frameSize = 1920 // 80 ms at 24 kHz: one Mimi frame
	frameTime = 80 * time.Millisecond
)

// config is one parsed config block.
type config struct {
	url            string
	connectTimeout time.Duration // dial plus the server's handshake byte
	writeTimeout   time.Duration // one audio message
	stepWait       time.Duration // how long a Step waits for audio when none has come since the last
	pace           bool          // hold Steps to real time (one frame per 80 ms)
}

var defaults = config{
	url:            "ws://127.0.0.1:8998/api/chat",
	connectTimeout: 30 * time.Second,
	writeTimeout:   10 * time.Second,
	stepWait:       20 * time.Millisecond,
	pace:           true,
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
	identity := map[string]string{
		"url":      p.cfg.url,
		"protocol": "moshi /api/chat: kind byte, Ogg/Opus 24 kHz mono both ways, text pieces",
	}
	for k, v := range p.handshake {
		identity[k] = v
	}
	return sdk.Info{
		Name:        "moshi-ws",
		Version:     version,
		Description: "Talks to a running Moshi or FLM-Audio server over its websocket (/api/chat), in real time.",
		Config: []sdk.ConfigField{
			{Name: "url", Type: sdk.TypeString, Default: defaults.url, Description: "the server's websocket endpoint, ws:// or wss:// (FLM-Audio listens on port 8990)"},
			{Name: "connect_timeout", Type: sdk.TypeNumber, Default: defaults.connectTimeout.Seconds(), Description: "seconds to connect and receive the server's handshake"},
			{Name: "write_timeout", Type: sdk.TypeNumber, Default: defaults.writeTimeout.Seconds(), Description: "seconds to send one frame of audio before the conversation fails"},
			{Name: "step_wait_ms", Type: sdk.TypeNumber, Default: float64(defaults.stepWait.Milliseconds()), Description: "milliseconds a step waits for the server's audio when none has arrived since the previous step"},
			{Name: "pace", Type: sdk.TypeBool, Default: defaults.pace, Description: "send at most one 80 ms frame per 80 ms of wall time (the server runs in real time)"},
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
	if err := seconds("step_wait_ms", 1e-3, 10000, &cfg.stepWait); err != nil {
		return cfg, err
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
