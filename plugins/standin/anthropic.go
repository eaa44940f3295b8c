package standin

// Anthropic is a local stand-in for the Anthropic Messages API, faithful to the wire format the
// plugin uses: POST /v1/messages with x-api-key and anthropic-version headers, a
// top-level system string, user/assistant messages, a required max_tokens; replies of
// type "message" with content blocks and usage; errors as
// {"type":"error","error":{"type","message"}}, including 429 rate_limit_error and 529
// overloaded_error. Tests inject faults, and replies that start with a thinking block.
// Like the real API it names the model it served: an alias ending in "-latest" comes
// back as a dated id.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

type Anthropic struct {
	key string

	mu     sync.Mutex
	faults []string // "429", "529", "malformed", "prose", "thinking", consumed in order
	calls  int
	bodies []string
	// proseSpeech: every acknowledgement/intrusion question gets a reply that is not JSON.
	proseSpeech bool
}

// NewAnthropic is an Anthropic stand-in that wants key (none: no check). It is an
// http.Handler serving the API under /v1.
func NewAnthropic(key string) *Anthropic { return &Anthropic{key: key} }

// Fault queues faults for the next requests: "429", "529", "malformed", "prose", "thinking".
func (s *Anthropic) Fault(f ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f...)
}

// Count is the number of requests so far.
func (s *Anthropic) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func anthropicError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

// ServeHTTP answers one request.
func (s *Anthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls++
	fault := ""
	if len(s.faults) > 0 {
		fault, s.faults = s.faults[0], s.faults[1:]
	}
	s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		anthropicError(w, 404, "not_found_error", "Not found")
		return
	}
	if s.key != "" && r.Header.Get("x-api-key") != s.key {
		anthropicError(w, 401, "authentication_error", "invalid x-api-key")
		return
	}
	if r.Header.Get("anthropic-version") == "" {
		anthropicError(w, 400, "invalid_request_error", "anthropic-version: header is required")
		return
	}
	switch fault {
	case "429":
		w.Header().Set("retry-after", "0.01")
		anthropicError(w, 429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")
		return
	case "529":
		anthropicError(w, 529, "overloaded_error", "Overloaded")
		return
	case "malformed":
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"msg_1","type":"message","content":[{"type":"text","te`))
		return
	}
	raw, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(raw))
	prose := s.proseSpeech
	s.mu.Unlock()
	var req struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		System    string `json:"system"`
		Messages  []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Temperature *float64 `json:"temperature"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		anthropicError(w, 400, "invalid_request_error", "malformed request: "+err.Error())
		return
	}
	switch {
	case req.Model == "":
		anthropicError(w, 400, "invalid_request_error", "model: Field required")
		return
	case req.MaxTokens <= 0:
		anthropicError(w, 400, "invalid_request_error", "max_tokens: Field required")
		return
	case len(req.Messages) == 0 || req.Messages[0].Role != "user":
		anthropicError(w, 400, "invalid_request_error", "messages: first message must use the \"user\" role")
		return
	case req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 1):
		anthropicError(w, 400, "invalid_request_error", "temperature: must be between 0 and 1")
		return
	}
	for _, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			anthropicError(w, 400, "invalid_request_error", "messages: Unexpected role \""+m.Role+"\". Allowed roles are \"user\" or \"assistant\"; use the top-level system parameter")
			return
		}
	}
	last := req.Messages[len(req.Messages)-1].Content
	text := "ready"
	switch {
	case fault == "prose", prose && speechRe.MatchString(last):
		text = "Looks correct to me."
	case goldRe.MatchString(last):
		v := "incorrect"
		if strings.Contains(strings.ToLower(replyRe.FindStringSubmatch(last)[1]), strings.ToLower(goldRe.FindStringSubmatch(last)[1])) {
			v = "correct"
		}
		text = fmt.Sprintf(`{"verdict":%q,"reason":"stand-in"}`, v)
	case speechRe.MatchString(last):
		v := "intrusion"
		if backchannels[strings.ToLower(strings.TrimSpace(speechRe.FindStringSubmatch(last)[1]))] {
			v = "acknowledgement"
		}
		text = fmt.Sprintf(`{"verdict":%q,"reason":"stand-in lexicon"}`, v)
	}
	content := []any{map[string]any{"type": "text", "text": text}}
	if fault == "thinking" {
		content = append([]any{map[string]any{"type": "thinking", "thinking": "Let me see.", "signature": "x"}}, content...)
	}
	in := len(strings.Fields(req.System + " " + last))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "msg_standin", "type": "message", "role": "assistant", "model": strings.Replace(req.Model, "-latest", "-20241022", 1),
		"content": content, "stop_reason": "end_turn", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "output_tokens": len(strings.Fields(text))},
	})
}

// SetProseSpeech makes every acknowledgement/intrusion reply prose (unparseable).
func (s *Anthropic) SetProseSpeech(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.proseSpeech = on
}

// Bodies are the bodies of all requests so far.
func (s *Anthropic) Bodies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}
