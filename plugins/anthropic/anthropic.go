package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/plugins/internal/hosted"
	"github.com/duplexmpe/duplexmpe/sdk"
)

const version = "0.1.0"

var fields = append(hosted.CommonFields("https://api.anthropic.com/v1", "claude-3-5-haiku-latest", "ANTHROPIC_API_KEY"),
	sdk.ConfigField{Name: "anthropic_version", Type: sdk.TypeString, Default: "2023-06-01", Description: "The anthropic-version header."},
)

type plugin struct {
	logger hclog.Logger

	mu         sync.Mutex // guards the fields below, set by Configure
	set        hosted.Settings
	client     *hosted.Client
	key        string
	apiVersion string
	served     *hosted.Served // the models the API answered with
}

func newPlugin() *plugin {
	return &plugin{logger: hclog.New(&hclog.LoggerOptions{Name: "anthropic", Output: os.Stderr, JSONFormat: true, Level: hclog.Info})}
}

func (p *plugin) Describe(ctx context.Context) (sdk.Info, error) {
	info := sdk.Info{
		Name:        "anthropic",
		Version:     version,
		Description: "Messages API completions (llm) and an LLM judge (prompts/judge) against the Anthropic API or a compatible server.",
		Config:      fields,
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client != nil {
		info.Identity = p.set.Identity("anthropic-messages")
		info.Identity["anthropic_version"] = p.apiVersion
		p.served.Into(info.Identity)
	}
	return info, nil
}

func (p *plugin) Configure(ctx context.Context, cfg map[string]any) error {
	set, err := hosted.ReadSettings(cfg, fields)
	if err != nil {
		return err
	}
	apiVersion, err := hosted.Str(cfg, fields, "anthropic_version")
	if err != nil {
		return err
	}
	key := set.APIKey()
	if key == "" {
		p.logger.Info("no API key: the variable is unset or empty in the plugin's environment; calls go out without x-api-key", "api_key_env", set.APIKeyEnv)
	}
	client, err := set.NewClient(p.logger, key)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.set, p.client, p.key, p.apiVersion = set, client, key, apiVersion
	p.served = &hosted.Served{} // another server or model: what it serves is not known yet
	return nil
}

type state struct {
	set        hosted.Settings
	client     *hosted.Client
	key        string
	apiVersion string
	served     *hosted.Served
}

func (p *plugin) state() (state, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client == nil {
		return state{}, errors.New("anthropic: not configured")
	}
	return state{p.set, p.client, p.key, p.apiVersion, p.served}, nil
}

// The Messages API request and reply.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type messagesRequest struct {
	Model       string    `json:"model"`
	MaxTokens   int       `json:"max_tokens"`
	System      string    `json:"system,omitempty"`
	Messages    []message `json:"messages"`
	Temperature float64   `json:"temperature"`
}

type messagesReply struct {
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

// parseMessages reads a reply; its text is the text blocks joined (other block types,
// such as thinking, are skipped).
func parseMessages(body []byte) (messagesReply, string, hosted.Usage, error) {
	var r messagesReply
	if err := json.Unmarshal(body, &r); err != nil {
		return r, "", hosted.Usage{}, err
	}
	if r.Type != "message" {
		return r, "", hosted.Usage{}, fmt.Errorf("type %q, want \"message\"", r.Type)
	}
	var text strings.Builder
	found := false
	for _, b := range r.Content {
		if b.Type == "text" && b.Text != nil {
			text.WriteString(*b.Text)
			found = true
		}
	}
	if !found {
		return r, "", hosted.Usage{}, errors.New("no text content block")
	}
	var u hosted.Usage
	if r.Usage != nil {
		u = hosted.Usage{PromptTokens: r.Usage.InputTokens, CompletionTokens: r.Usage.OutputTokens}
	}
	return r, text.String(), u, nil
}

// Complete implements sdk.LLM. System messages become the request's system prompt; the
// rest keep their order. JSON has no switch in the Messages API: the prompt must ask.
func (p *plugin) Complete(ctx context.Context, req sdk.CompletionRequest) (sdk.Completion, error) {
	s, err := p.state()
	if err != nil {
		return sdk.Completion{}, err
	}
	mr := messagesRequest{Model: s.set.Model, MaxTokens: s.set.MaxTokens, Temperature: s.set.Temperature}
	if req.Temperature != nil {
		mr.Temperature = *req.Temperature
	}
	if req.MaxTokens > 0 {
		mr.MaxTokens = req.MaxTokens
	}
	var system []string
	prompt := 0
	for _, m := range req.Messages {
		prompt += hosted.EstimateTokens(m.Content)
		switch m.Role {
		case "system":
			system = append(system, m.Content)
		case "user", "assistant":
			mr.Messages = append(mr.Messages, message{Role: m.Role, Content: m.Content})
		default:
			return sdk.Completion{}, fmt.Errorf("anthropic: message role %q; want system, user or assistant", m.Role)
		}
	}
	if len(mr.Messages) == 0 {
		return sdk.Completion{}, errors.New("anthropic: no user message")
	}
	mr.System = strings.Join(system, "\n\n")
	body, err := json.Marshal(mr)
	if err != nil {
		return sdk.Completion{}, err
	}
	h := http.Header{}
	h.Set("anthropic-version", s.apiVersion)
	if s.key != "" {
		h.Set("x-api-key", s.key)
	}
	raw, err := s.client.Do(ctx, hosted.Request{
		Kind: "messages", Path: "/messages", Model: mr.Model, Header: h,
		ContentType: "application/json", Body: body,
		// The API version changes the reply's shape: it is part of what is asked.
		Cacheable: !hosted.Sampled(mr.Temperature) || s.set.Replicate != "",
		Replicate: s.set.Replicate + "\x00" + s.apiVersion,
		Estimate:  hosted.Usage{PromptTokens: prompt, CompletionTokens: mr.MaxTokens},
		Parse: func(b []byte) (hosted.Usage, error) {
			_, _, u, err := parseMessages(b)
			return u, err
		},
	})
	if err != nil {
		return sdk.Completion{}, fmt.Errorf("anthropic messages (model %s): %w", mr.Model, err)
	}
	r, text, u, err := parseMessages(raw)
	if err != nil {
		return sdk.Completion{}, err
	}
	s.served.Add(r.Model)
	return sdk.Completion{Content: text, Model: r.Model, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, FinishReason: r.StopReason}, nil
}

func (p *plugin) judge() hosted.Judge {
	return hosted.Judge{Chat: func(ctx context.Context, system, user string) (string, error) {
		r, err := p.Complete(ctx, sdk.CompletionRequest{Messages: []sdk.ChatMessage{{Role: "system", Content: system}, {Role: "user", Content: user}}})
		return r.Content, err
	}}
}

// JudgeAnswer implements sdk.Judge.
func (p *plugin) JudgeAnswer(ctx context.Context, q sdk.AnswerQuery) (sdk.Verdict, error) {
	return p.judge().JudgeAnswer(ctx, q)
}

// ClassifySpeech implements sdk.Judge.
func (p *plugin) ClassifySpeech(ctx context.Context, q sdk.SpeechQuery) (sdk.Verdict, error) {
	return p.judge().ClassifySpeech(ctx, q)
}
