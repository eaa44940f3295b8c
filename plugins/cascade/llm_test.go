package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// standIn is a local OpenAI-compatible /v1/chat/completions server, a faithful stand-in
// of the wire protocol (no hosted API is reachable here). It checks the request shape,
// the bearer key and the JSON mode, records the requests, and decides like a reader of
// the transcript would on these conversations: respond when the latest utterance asks
// when the chicken comes out.
type standIn struct {
	t    *testing.T
	key  string
	mu   sync.Mutex
	reqs []chatRequest
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.key {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided"}}`))
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	user := req.Messages[1].Content
	latest := user[strings.LastIndex(user, "Latest utterance: "):]
	content := `{"respond": false, "answer": ""}`
	if strings.Contains(latest, "chicken") && strings.Contains(latest, "when") {
		content = "```json\n{\"respond\": true, \"answer\": \"At seven oh five, forty five minutes after it went in.\"}\n```"
	}
	if req.Format["type"] != "json_object" {
		content = "Seven oh five."
	}
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5},
	})
}

// The llm policy through a real plugin process: the endpoint's decision, not the name,
// makes the cascade answer the implicit T, and the answer it speaks is the endpoint's.
func TestLLMPolicyAgainstStandIn(t *testing.T) {
	si := &standIn{t: t, key: "sk-test-123"}
	srv := httptest.NewServer(si)
	defer srv.Close()
	m := startCascade(t, map[string]any{
		"policy": "llm", "endpoint": srv.URL + "/v1", "model": "stand-in", "api_key_env": "CASCADE_TEST_KEY",
	}, map[string]string{"CASCADE_TEST_KEY": si.key})
	rec, events := play(t, m, spokenConversation(t, "implicit-llm", shortPreamble, implicit(explicitLines)))
	logRecord(t, rec, events)
	if tv := eventsByLabel(events, protocol.LabelT)[0].T; !tv.FreshOnset {
		t.Errorf("implicit T under the llm policy: no fresh onset: %+v", tv)
	}
	if !hasText(rec, "seven oh five") {
		t.Errorf("the endpoint's answer is not what was said: %v", rec.Text)
	}
	for _, ev := range events {
		if ev.Silence != nil && len(ev.Silence.Speech) > 0 {
			t.Errorf("%s turn %d: spoke although the endpoint said not to: %+v", ev.Label, ev.Turn, ev.Silence)
		}
		if ev.N4 != nil && ev.N4.WindowResponse {
			t.Errorf("N4: spoke although the endpoint said not to: %+v", ev.N4)
		}
	}
	si.mu.Lock()
	defer si.mu.Unlock()
	// One request per utterance: the preamble and the six turns.
	if len(si.reqs) != 1+len(explicitLines) {
		t.Errorf("%d requests, want %d", len(si.reqs), 1+len(explicitLines))
	}
	if last := si.reqs[len(si.reqs)-1]; last.Model != "stand-in" || !strings.Contains(last.Messages[1].Content, "chicken") {
		t.Errorf("the last request lacks the model or the transcript so far: %+v", last)
	}
}

// A refused key fails the conversation with the endpoint's own message, not a crash.
func TestLLMEndpointErrorFailsTheConversation(t *testing.T) {
	si := &standIn{t: t, key: "right"}
	srv := httptest.NewServer(si)
	defer srv.Close()
	c := newChatClient(srv.URL+"/v1", "m", "wrong", 0)
	_, err := c.decide(context.Background(), "aria", nil, "aria what time is it")
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "Incorrect API key") {
		t.Errorf("err = %v", err)
	}
	c = newChatClient(srv.URL+"/nowhere", "m", "right", 0)
	if _, err := c.decide(context.Background(), "aria", nil, "x"); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("err = %v", err)
	}
	c = newChatClient("http://127.0.0.1:1/v1", "m", "", 0)
	if _, err := c.decide(context.Background(), "aria", nil, "x"); err == nil || !strings.Contains(err.Error(), "llm endpoint") {
		t.Errorf("err = %v", err)
	}
}

// With the name policy and an endpoint, the answer is a plain (not JSON) completion.
func TestEndpointAnswer(t *testing.T) {
	si := &standIn{t: t, key: "k"}
	srv := httptest.NewServer(si)
	defer srv.Close()
	c := newChatClient(srv.URL+"/v1/", "m", "k", 0)
	got, err := c.answer(context.Background(), "aria", []string{"the chicken goes in at six twenty"}, "aria when does the chicken come out")
	if err != nil || got != "Seven oh five." {
		t.Fatalf("answer = %q, %v", got, err)
	}
	si.mu.Lock()
	defer si.mu.Unlock()
	req := si.reqs[0]
	if req.Format != nil || !strings.Contains(req.Messages[0].Content, "aria") || !strings.Contains(req.Messages[1].Content, "- the chicken goes in at six twenty\n") {
		t.Errorf("request %+v", req)
	}
}
