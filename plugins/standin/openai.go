// Package standin holds local stand-ins for the hosted services the plugins call: an
// OpenAI-compatible server and the Anthropic Messages API. The plugins' tests run against
// them (no hosted API is reachable from the test machines), and `serve-standin` (cmd/serve-standin)
// starts one for a person trying a hosted plugin without an account or a network.
package standin

// OpenAI is a local stand-in for an OpenAI-compatible server, faithful to the wire formats the
// plugin uses: POST /v1/chat/completions (JSON in, chat.completion out, usage included),
// POST /v1/audio/transcriptions (multipart form with a WAV file; {"text": ...} out),
// POST /v1/audio/speech (JSON in, a WAV file out), Bearer authentication, and the
// {"error": {"message", "type", "code"}} error shape. Tests inject faults: 429s with
// Retry-After, 500s, malformed bodies, and judge replies that are not the asked JSON.
// Like the real service it answers with the dated model it served ("gpt-4o-mini" is
// served as "gpt-4o-mini-2024-07-18").

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/audio"
)

type OpenAI struct {
	h   http.Handler
	key string

	mu sync.Mutex
	// Faults for the next requests, consumed in order: "429", "500", "malformed",
	// "prose" (a chat reply that is not JSON).
	faults []string
	calls  map[string]int // by path, including failed ones
	// proseSpeech: every acknowledgement/intrusion question gets a reply that is not JSON.
	proseSpeech bool
	bodies      []string // every request body, for key checks
}

// NewOpenAI is an OpenAI stand-in that wants key (none: no check). It is an
// http.Handler serving the API under /v1.
func NewOpenAI(key string) *OpenAI {
	s := &OpenAI{key: key, calls: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/audio/transcriptions", s.transcribe)
	mux.HandleFunc("POST /v1/audio/speech", s.speech)
	s.h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls[r.URL.Path]++
		fault := ""
		if len(s.faults) > 0 {
			fault, s.faults = s.faults[0], s.faults[1:]
		}
		s.mu.Unlock()
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
			openaiError(w, http.StatusUnauthorized, "invalid_request_error", "Incorrect API key provided.")
			return
		}
		switch fault {
		case "429":
			w.Header().Set("Retry-After", "0.01")
			openaiError(w, http.StatusTooManyRequests, "rate_limit_exceeded", "Rate limit reached for requests")
			return
		case "500":
			openaiError(w, http.StatusInternalServerError, "server_error", "The server had an error while processing your request.")
			return
		case "malformed":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"chatcmpl-1","choices":[{"message":`))
			return
		case "prose":
			r = r.WithContext(withProse(r.Context()))
		}
		mux.ServeHTTP(w, r)
	})
	return s
}

// ServeHTTP answers one request.
func (s *OpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.h.ServeHTTP(w, r) }

// Fault queues faults for the next requests: "429", "500", "malformed", "prose".
func (s *OpenAI) Fault(f ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f...)
}

// Count is the number of requests to path so far.
func (s *OpenAI) Count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[path]
}

// SetProseSpeech makes every acknowledgement/intrusion reply prose (unparseable).
func (s *OpenAI) SetProseSpeech(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.proseSpeech = on
}

// Bodies are the bodies of all chat requests so far.
func (s *OpenAI) Bodies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

func (s *OpenAI) proseSpeeches() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proseSpeech
}

func (s *OpenAI) record(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bodies = append(s.bodies, string(b))
}

func openaiError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

var (
	goldRe       = regexp.MustCompile(`(?m)^Gold answer: (.*)$`)
	replyRe      = regexp.MustCompile(`(?m)^Aria's reply \(transcript\): (.*)$`)
	speechRe     = regexp.MustCompile(`(?m)^Aria's speech \(transcript\): (.*)$`)
	backchannels = map[string]bool{"mm-hm": true, "okay": true, "right": true, "i see": true, "uh-huh": true}
)

func (s *OpenAI) chat(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	s.record(raw)
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Temperature    *float64        `json:"temperature"`
		MaxTokens      int             `json:"max_tokens"`
		Seed           *int64          `json:"seed"`
		ResponseFormat json.RawMessage `json:"response_format"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		openaiError(w, 400, "invalid_request_error", "We could not parse the JSON body of your request: "+err.Error())
		return
	}
	if req.Model == "" || len(req.Messages) == 0 {
		openaiError(w, 400, "invalid_request_error", "you must provide a model parameter and messages")
		return
	}
	var all strings.Builder
	for _, m := range req.Messages {
		if m.Role != "system" && m.Role != "user" && m.Role != "assistant" {
			openaiError(w, 400, "invalid_request_error", "Invalid value for 'messages.role': "+m.Role)
			return
		}
		all.WriteString(m.Content + "\n")
	}
	last := req.Messages[len(req.Messages)-1].Content
	content := "ready"
	switch {
	case isProse(r.Context()):
		content = "I think the answer is probably right."
	case goldRe.MatchString(last):
		gold := strings.ToLower(goldRe.FindStringSubmatch(last)[1])
		reply := strings.ToLower(replyRe.FindStringSubmatch(last)[1])
		v := "incorrect"
		if strings.Contains(reply, gold) {
			v = "correct"
		}
		content = fmt.Sprintf(`{"verdict":%q,"reason":"stand-in: gold %s in reply: %v"}`, v, gold, v == "correct")
	case speechRe.MatchString(last) && s.proseSpeeches():
		content = "That sounds like an intrusion to me."
	case speechRe.MatchString(last):
		v := "intrusion"
		if backchannels[strings.ToLower(strings.TrimSpace(speechRe.FindStringSubmatch(last)[1]))] {
			v = "acknowledgement"
		}
		content = fmt.Sprintf(`{"verdict":%q,"reason":"stand-in lexicon"}`, v)
	}
	prompt := len(strings.Fields(all.String()))
	completion := len(strings.Fields(content))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-standin", "object": "chat.completion", "created": 1700000000, "model": servedOpenAI(req.Model),
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content, "refusal": nil}, "logprobs": nil, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
	})
}

func (s *OpenAI) transcribe(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		openaiError(w, 400, "invalid_request_error", "Could not parse multipart form: "+err.Error())
		return
	}
	if r.FormValue("model") == "" {
		openaiError(w, 400, "invalid_request_error", "you must provide a model parameter")
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		openaiError(w, 400, "invalid_request_error", "you must provide a file")
		return
	}
	defer f.Close()
	pcm, err := audio.DecodeWAV(f)
	if err != nil || !strings.HasSuffix(hdr.Filename, ".wav") {
		openaiError(w, 400, "invalid_request_error", "Invalid file format.")
		return
	}
	text := fmt.Sprintf("audio of %.2f seconds at %d hertz", pcm.Duration(), pcm.Rate)
	if lang := r.FormValue("language"); lang != "" {
		text += " in " + lang
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"text": text, "usage": map[string]any{"type": "duration", "seconds": math.Ceil(pcm.Duration())}})
}

func (s *OpenAI) speech(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model          string `json:"model"`
		Input          string `json:"input"`
		Voice          string `json:"voice"`
		ResponseFormat string `json:"response_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" || req.Input == "" || req.Voice == "" {
		openaiError(w, 400, "invalid_request_error", "model, input and voice are required")
		return
	}
	if req.ResponseFormat != "wav" {
		openaiError(w, 400, "invalid_request_error", "stand-in serves response_format wav only")
		return
	}
	// 24 kHz 16-bit mono, 60 ms per character of a 220 Hz tone.
	pcm := audio.PCM{Rate: 24000, Samples: make([]float32, 24000*60*len(req.Input)/1000)}
	for i := range pcm.Samples {
		pcm.Samples[i] = float32(0.5 * math.Sin(2*math.Pi*220*float64(i)/24000))
	}
	w.Header().Set("Content-Type", "audio/wav")
	audio.EncodeWAV(w, pcm)
}

// servedOpenAI is the dated model the stand-in serves for a requested one, as the real
// service names its snapshots.
func servedOpenAI(model string) string {
	if regexp.MustCompile(`-\d{4}-\d{2}-\d{2}$`).MatchString(model) {
		return model
	}
	return model + "-2024-07-18"
}

// A "prose" fault travels to the chat handler in the request's context.
type proseKey struct{}

func withProse(ctx context.Context) context.Context {
	return context.WithValue(ctx, proseKey{}, true)
}

func isProse(ctx context.Context) bool {
	v, _ := ctx.Value(proseKey{}).(bool)
	return v
}
