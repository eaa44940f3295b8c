package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/plugins/internal/hosted"
	"github.com/duplexmpe/duplexmpe/sdk"
)

const version = "0.1.0"

// fields is the config schema: the common hosted fields, then the audio ones.
var fields = append(hosted.CommonFields("https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY"),
	sdk.ConfigField{Name: "json_mode", Type: sdk.TypeBool, Default: true, Description: `Send response_format {"type":"json_object"} with judge calls (and llm calls that ask for JSON). Turn off for servers that reject it.`},
	sdk.ConfigField{Name: "asr_model", Type: sdk.TypeString, Default: "whisper-1", Description: "Model id for /audio/transcriptions."},
	sdk.ConfigField{Name: "tts_model", Type: sdk.TypeString, Default: "tts-1", Description: "Model id for /audio/speech."},
	sdk.ConfigField{Name: "voices", Type: sdk.TypeListString, Default: []any{"alloy", "ash", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer"}, Description: "Voices the TTS offers."},
	sdk.ConfigField{Name: "tts_rate", Type: sdk.TypeNumber, Default: 24000.0, Description: "Sample rate (Hz) the TTS declares for its voices; replies at another rate are resampled to it."},
	sdk.ConfigField{Name: "tts_server", Type: sdk.TypeString, Default: "", Description: "How the identity names the server that speaks (tts_server), which keys the dataset clip cache. Empty: base_url without user, password, query or fragment. Set one name when shards reach the same server through per-node addresses."},
)

// serverName is base_url as the identity records it: scheme, host, port and path, never
// the userinfo (user:password@), the query (?api_key=...) or the fragment, which may
// hold secrets; a trailing slash is dropped, the scheme and host lower-cased.
func serverName(base string) string {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || u.Host == "" {
		// Not a URL the client could call either; keep no part that could be a secret.
		return "unparsed:" + hashHex(base)[:16]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + strings.TrimRight(u.EscapedPath(), "/")
}

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

type plugin struct {
	logger hclog.Logger

	mu       sync.Mutex // guards the fields below, set by Configure
	set      hosted.Settings
	client   *hosted.Client
	key      string
	jsonMode bool
	asrModel string
	ttsModel string
	voices   []string
	ttsRate  int
	// ttsServer names the speaking server in the identity (serverName or tts_server).
	ttsServer string
	served    *hosted.Served // the models the server answered chat calls with
}

func newPlugin() *plugin {
	return &plugin{logger: hclog.New(&hclog.LoggerOptions{Name: "openai", Output: os.Stderr, JSONFormat: true, Level: hclog.Info})}
}

func (p *plugin) Describe(ctx context.Context) (sdk.Info, error) {
	info := sdk.Info{
		Name:        "openai",
		Version:     version,
		Description: "Chat completions (llm), an LLM judge (prompts/judge), transcription (asr) and speech (tts) against any OpenAI-compatible server.",
		Config:      fields,
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client != nil {
		info.Identity = p.set.Identity("openai-chat-completions")
		info.Identity["json_mode"] = strconv.FormatBool(p.jsonMode)
		info.Identity["asr_model"] = p.asrModel
		// What speaks: the server (never its secrets), the model asked for, the voices
		// offered and the rate they are resampled to, so clips made by another server
		// or model never share a clip-cache entry. /audio/speech replies are bare audio
		// that name no served model; the chat replies' served_model follows.
		info.Identity["tts_model"] = p.ttsModel
		info.Identity["tts_server"] = p.ttsServer
		info.Identity["tts_voices"] = strings.Join(p.voices, ",")
		info.Identity["tts_rate"] = strconv.Itoa(p.ttsRate)
		p.served.Into(info.Identity)
	}
	return info, nil
}

func (p *plugin) Configure(ctx context.Context, cfg map[string]any) error {
	set, err := hosted.ReadSettings(cfg, fields)
	if err != nil {
		return err
	}
	var errs []error
	jsonMode, err := hosted.Bool(cfg, fields, "json_mode")
	errs = append(errs, err)
	asrModel, err := hosted.Str(cfg, fields, "asr_model")
	errs = append(errs, err)
	ttsModel, err := hosted.Str(cfg, fields, "tts_model")
	errs = append(errs, err)
	voices, err := hosted.Strings(cfg, fields, "voices")
	errs = append(errs, err)
	rate, err := hosted.Num(cfg, fields, "tts_rate", 8000, 192000)
	errs = append(errs, err)
	ttsServer, err := hosted.Str(cfg, fields, "tts_server")
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(voices) == 0 {
		return errors.New("voices is empty; name at least one voice")
	}
	key := set.APIKey()
	if key == "" {
		p.logger.Info("no API key: the variable is unset or empty in the plugin's environment; calls go out without Authorization", "api_key_env", set.APIKeyEnv)
	}
	client, err := set.NewClient(p.logger, key)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.set, p.client, p.key, p.jsonMode = set, client, key, jsonMode
	p.asrModel, p.ttsModel, p.voices, p.ttsRate = asrModel, ttsModel, voices, int(rate)
	p.ttsServer = strings.TrimSpace(ttsServer)
	if p.ttsServer == "" {
		p.ttsServer = serverName(set.BaseURL)
	}
	p.served = &hosted.Served{} // another server or model: what it serves is not known yet
	return nil
}

// state returns the configured values, or an error before Configure.
func (p *plugin) state() (*plugin, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client == nil {
		return nil, errors.New("openai: not configured")
	}
	c := &plugin{set: p.set, client: p.client, key: p.key, jsonMode: p.jsonMode, asrModel: p.asrModel, ttsModel: p.ttsModel, voices: p.voices, ttsRate: p.ttsRate, served: p.served}
	return c, nil
}

func (p *plugin) header() http.Header {
	h := http.Header{}
	if p.key != "" {
		h.Set("Authorization", "Bearer "+p.key)
	}
	return h
}

// chat request and reply, as the OpenAI chat completions API defines them.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model          string        `json:"model"`
	Messages       []chatMessage `json:"messages"`
	Temperature    float64       `json:"temperature"`
	MaxTokens      int           `json:"max_tokens"`
	Seed           *int64        `json:"seed,omitempty"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format,omitempty"`
}

type chatReply struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func parseChat(body []byte) (chatReply, hosted.Usage, error) {
	var r chatReply
	if err := json.Unmarshal(body, &r); err != nil {
		return r, hosted.Usage{}, err
	}
	if len(r.Choices) == 0 || r.Choices[0].Message.Content == nil {
		return r, hosted.Usage{}, errors.New("no choices[0].message.content")
	}
	var u hosted.Usage
	if r.Usage != nil {
		u = hosted.Usage{PromptTokens: r.Usage.PromptTokens, CompletionTokens: r.Usage.CompletionTokens}
	}
	return r, u, nil
}

func (p *plugin) chat(ctx context.Context, cr chatRequest) (chatReply, error) {
	body, err := json.Marshal(cr)
	if err != nil {
		return chatReply{}, err
	}
	prompt := 0
	for _, m := range cr.Messages {
		prompt += hosted.EstimateTokens(m.Content)
	}
	raw, err := p.client.Do(ctx, hosted.Request{
		Kind: "chat", Path: "/chat/completions", Model: cr.Model, Header: p.header(),
		ContentType: "application/json", Body: body,
		Cacheable: !hosted.Sampled(cr.Temperature) || p.set.Replicate != "",
		Replicate: p.set.Replicate,
		Estimate:  hosted.Usage{PromptTokens: prompt, CompletionTokens: cr.MaxTokens},
		Parse: func(b []byte) (hosted.Usage, error) {
			_, u, err := parseChat(b)
			return u, err
		},
	})
	if err != nil {
		return chatReply{}, fmt.Errorf("openai chat completion (model %s): %w", cr.Model, err)
	}
	r, _, err := parseChat(raw)
	if err == nil {
		p.served.Add(r.Model)
	}
	return r, err
}

// Complete implements sdk.LLM.
func (p *plugin) Complete(ctx context.Context, req sdk.CompletionRequest) (sdk.Completion, error) {
	s, err := p.state()
	if err != nil {
		return sdk.Completion{}, err
	}
	cr := chatRequest{Model: s.set.Model, Temperature: s.set.Temperature, MaxTokens: s.set.MaxTokens, Seed: req.Seed}
	if req.Temperature != nil {
		cr.Temperature = *req.Temperature
	}
	if req.MaxTokens > 0 {
		cr.MaxTokens = req.MaxTokens
	}
	for _, m := range req.Messages {
		cr.Messages = append(cr.Messages, chatMessage{Role: m.Role, Content: m.Content})
	}
	if req.JSON && s.jsonMode {
		cr.ResponseFormat = &struct {
			Type string `json:"type"`
		}{"json_object"}
	}
	r, err := s.chat(ctx, cr)
	if err != nil {
		return sdk.Completion{}, err
	}
	c := sdk.Completion{Content: *r.Choices[0].Message.Content, Model: r.Model, FinishReason: r.Choices[0].FinishReason}
	if r.Usage != nil {
		c.PromptTokens, c.CompletionTokens = r.Usage.PromptTokens, r.Usage.CompletionTokens
	}
	return c, nil
}

// judge is the prompts/judge judge over this plugin's chat completions, at the
// configured temperature and max tokens.
func (p *plugin) judge() (hosted.Judge, error) {
	s, err := p.state()
	if err != nil {
		return hosted.Judge{}, err
	}
	return hosted.Judge{Chat: func(ctx context.Context, system, user string) (string, error) {
		r, err := s.Complete(ctx, sdk.CompletionRequest{
			Messages: []sdk.ChatMessage{{Role: "system", Content: system}, {Role: "user", Content: user}},
			JSON:     true,
		})
		return r.Content, err
	}}, nil
}

// JudgeAnswer implements sdk.Judge.
func (p *plugin) JudgeAnswer(ctx context.Context, q sdk.AnswerQuery) (sdk.Verdict, error) {
	j, err := p.judge()
	if err != nil {
		return sdk.Verdict{}, err
	}
	return j.JudgeAnswer(ctx, q)
}

// ClassifySpeech implements sdk.Judge.
func (p *plugin) ClassifySpeech(ctx context.Context, q sdk.SpeechQuery) (sdk.Verdict, error) {
	j, err := p.judge()
	if err != nil {
		return sdk.Verdict{}, err
	}
	return j.ClassifySpeech(ctx, q)
}

// Transcribe implements sdk.ASR: the clip as a 16-bit WAV file, multipart, to
// /audio/transcriptions; the reply's "text".
func (p *plugin) Transcribe(ctx context.Context, clip sdk.Audio, language string) (string, error) {
	s, err := p.state()
	if err != nil {
		return "", err
	}
	if clip.Rate <= 0 {
		return "", fmt.Errorf("openai transcribe: sample rate %d Hz", clip.Rate)
	}
	var wav bytes.Buffer
	if err := audio.EncodeWAV(&wav, audio.PCM{Samples: clip.Samples, Rate: clip.Rate}); err != nil {
		return "", err
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	// A boundary from the content, not random, so the same clip is the same request
	// (and the same cache key).
	sum := sha256.Sum256(wav.Bytes())
	if err := mw.SetBoundary("duplexmpe-" + hex.EncodeToString(sum[:20])); err != nil {
		return "", err
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="audio.wav"`)
	h.Set("Content-Type", "audio/wav")
	fw, err := mw.CreatePart(h)
	if err != nil {
		return "", err
	}
	fw.Write(wav.Bytes())
	mw.WriteField("model", s.asrModel)
	mw.WriteField("response_format", "json")
	mw.WriteField("temperature", "0")
	if language != "" {
		mw.WriteField("language", language)
	}
	if err := mw.Close(); err != nil {
		return "", err
	}
	var text string
	parse := func(b []byte) (hosted.Usage, error) {
		var r struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return hosted.Usage{}, err
		}
		if r.Text == nil {
			return hosted.Usage{}, errors.New(`no "text"`)
		}
		text = *r.Text
		return hosted.Usage{}, nil
	}
	_, err = s.client.Do(ctx, hosted.Request{
		Kind: "transcription", Path: "/audio/transcriptions", Model: s.asrModel, Header: s.header(),
		ContentType: mw.FormDataContentType(), Body: body.Bytes(), Cacheable: true, Replicate: s.set.Replicate,
		Parse: parse,
	})
	if err != nil {
		return "", fmt.Errorf("openai transcribe (model %s): %w", s.asrModel, err)
	}
	return text, nil
}

// Voices implements sdk.TTS.
func (p *plugin) Voices(ctx context.Context) ([]sdk.Voice, error) {
	s, err := p.state()
	if err != nil {
		return nil, err
	}
	out := make([]sdk.Voice, len(s.voices))
	for i, v := range s.voices {
		out[i] = sdk.Voice{ID: v, Description: s.ttsModel + " voice " + v, Rate: s.ttsRate}
	}
	return out, nil
}

// Synthesize implements sdk.TTS: /audio/speech with response_format wav.
func (p *plugin) Synthesize(ctx context.Context, text, voice string) (sdk.Audio, error) {
	s, err := p.state()
	if err != nil {
		return sdk.Audio{}, err
	}
	known := false
	for _, v := range s.voices {
		known = known || v == voice
	}
	if !known {
		return sdk.Audio{}, fmt.Errorf("openai tts: unknown voice %q; the voices setting offers %q", voice, s.voices)
	}
	body, err := json.Marshal(map[string]any{"model": s.ttsModel, "input": text, "voice": voice, "response_format": "wav"})
	if err != nil {
		return sdk.Audio{}, err
	}
	var pcm audio.PCM
	_, err = s.client.Do(ctx, hosted.Request{
		Kind: "speech", Path: "/audio/speech", Model: s.ttsModel, Header: s.header(),
		ContentType: "application/json", Body: body, Cacheable: true, Replicate: s.set.Replicate,
		Parse: func(b []byte) (hosted.Usage, error) {
			var err error
			pcm, err = audio.DecodeWAV(bytes.NewReader(b))
			if err == nil && len(pcm.Samples) == 0 {
				err = errors.New("WAV reply without samples")
			}
			return hosted.Usage{}, err
		},
	})
	if err != nil {
		return sdk.Audio{}, fmt.Errorf("openai tts (model %s, voice %s): %w", s.ttsModel, voice, err)
	}
	if pcm.Rate != s.ttsRate {
		pcm = audio.Resample(pcm, s.ttsRate)
		for i, x := range pcm.Samples { // the resampler may overshoot a full-scale peak
			pcm.Samples[i] = max(-1, min(1, x))
		}
	}
	return sdk.Audio{Samples: pcm.Samples, Rate: pcm.Rate}, nil
}
