package construct

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// This file holds a stand-in for an OpenAI-compatible chat endpoint
// (POST /v1/chat/completions) and an sdk.LLM client for it, used only by these tests:
// the generator talks real HTTP and JSON to a local server. The stand-in "model"
// writes a plain but valid scenario from the brief in the prompt; scripted faults make
// it misbehave first, so the retries are exercised.

type chatRequest struct {
	Model          string            `json:"model"`
	Messages       []sdk.ChatMessage `json:"messages"`
	Temperature    *float64          `json:"temperature,omitempty"`
	MaxTokens      int               `json:"max_tokens,omitempty"`
	Seed           *int64            `json:"seed,omitempty"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format,omitempty"`
}

type chatResponse struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int             `json:"index"`
		Message      sdk.ChatMessage `json:"message"`
		FinishReason string          `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// standIn serves /v1/chat/completions. faults[step] is a queue of bad replies to give
// before good ones, for step "scenario" or "rewrite".
type standIn struct {
	mu       sync.Mutex
	faults   map[string][]func(good string) string
	requests []chatRequest
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req chatRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || len(req.Messages) < 2 || req.Messages[0].Role != "system" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	if req.ResponseFormat == nil || req.ResponseFormat.Type != "json_object" {
		http.Error(w, `{"error":{"message":"expected response_format json_object"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	first := req.Messages[1].Content
	step, good := "rewrite", ""
	if _, brief, ok := strings.Cut(first, "BRIEF:\n"); ok {
		step = "scenario"
		good = standInScenario(brief)
	} else {
		good = standInRewrite(first)
	}
	// Faults apply to the first attempts of each conversation.
	attempt := (len(req.Messages) - 2) / 2
	content := good
	if q := s.faults[step]; attempt < len(q) {
		content = q[attempt](good)
	}
	s.mu.Unlock()
	var resp chatResponse
	resp.ID, resp.Object, resp.Model = "chatcmpl-standin", "chat.completion", "stand-in"
	resp.Choices = append(resp.Choices, struct {
		Index        int             `json:"index"`
		Message      sdk.ChatMessage `json:"message"`
		FinishReason string          `json:"finish_reason"`
	}{0, sdk.ChatMessage{Role: "assistant", Content: content}, "stop"})
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func standInScenario(briefJSON string) string {
	var b Brief
	if err := json.Unmarshal([]byte(strings.TrimSpace(briefJSON)), &b); err != nil {
		return "I could not read the brief."
	}
	sp := b.Speakers
	who := func(i int) string { return sp[i%len(sp)] }
	turns := make([]dataset.Turn, b.Turns)
	turns[0] = dataset.Turn{Speaker: who(0), Text: "Jo, the train leaves at six forty.", Label: "N2", Addressee: "human"}
	turns[1] = dataset.Turn{Speaker: who(1), Text: "And the walk to the station takes twenty minutes.", Label: "N3"}
	fill := []dataset.Turn{
		{Text: "Aria set my alarm wrong again this morning.", Label: "N1"},
		{Text: "Alexa, turn the radio down.", Label: "N2", Addressee: "device"},
		{Text: "Where did I put my scarf...", Label: "N3"},
		{Text: "Sam, can you grab the umbrella?", Label: "N2", Addressee: "human"},
	}
	n4 := -1
	for i := 2; i+1 < b.Turns; i++ {
		if i != b.TIndex && i+1 != b.TIndex {
			n4 = i
			break
		}
	}
	k := 0
	for i := 2; i < b.Turns; i++ {
		switch {
		case i == b.TIndex:
			turns[i] = dataset.Turn{Text: "Aria, what time do we have to leave to catch the train?", Label: "T"}
		case i == n4:
			turns[i] = dataset.Turn{Text: "Aria, is it raining?", Label: "N4_Q"}
		case i == n4+1:
			turns[i] = dataset.Turn{Text: "Never mind, I can see it is.", Label: "N4_R"}
		default:
			turns[i] = fill[k%len(fill)]
			k++
		}
		turns[i].Speaker = who(i)
		if turns[i].Label == "N4_R" {
			turns[i].Speaker = turns[i-1].Speaker
		}
	}
	raw, _ := json.Marshal(scenarioReply{Turns: turns, GoldAnswer: "6:20"})
	return string(raw)
}

func standInRewrite(prompt string) string {
	return `{"t_text":"You've heard our plans all morning. What time do we have to leave to catch the train?","previous_text":null}`
}

// httpLLM is an sdk.LLM over the OpenAI chat completions wire format (tests only).
type httpLLM struct{ url string }

func (h httpLLM) Complete(ctx context.Context, r sdk.CompletionRequest) (sdk.Completion, error) {
	req := chatRequest{Model: "stand-in", Messages: r.Messages, Temperature: r.Temperature, MaxTokens: r.MaxTokens, Seed: r.Seed}
	if r.JSON {
		req.ResponseFormat = &struct {
			Type string `json:"type"`
		}{"json_object"}
	}
	body, _ := json.Marshal(req)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return sdk.Completion{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return sdk.Completion{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return sdk.Completion{}, fmt.Errorf("chat completions: HTTP %d", resp.StatusCode)
	}
	var cr chatResponse
	if err := json.NewDecoder(resp.Body).Decode(&cr); err != nil || len(cr.Choices) == 0 {
		return sdk.Completion{}, fmt.Errorf("chat completions: bad response (%v)", err)
	}
	return sdk.Completion{Content: cr.Choices[0].Message.Content, Model: cr.Model, FinishReason: cr.Choices[0].FinishReason}, nil
}

func TestLLMGeneratorWritesValidPairs(t *testing.T) {
	srv := &standIn{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	scs, id, err := GenerateLLM(context.Background(), httpLLM{ts.URL}, LLMSpec{Pairs: 6, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if vs := dataset.Validate(&dataset.Dataset{Scenarios: scs}); len(vs) != 0 {
		t.Fatalf("violations: %v", vs)
	}
	if len(scs) != 12 || len(srv.requests) != 12 {
		t.Fatalf("%d scenarios from %d requests, want 12 from 12 (one scenario and one rewrite request per pair)", len(scs), len(srv.requests))
	}
	if !strings.HasPrefix(id["prompt_scenario-v1"], "sha256:") || !strings.HasPrefix(id["prompt_rewrite-v1"], "sha256:") {
		t.Fatalf("identity %v", id)
	}
	// Same seed, same briefs, same requests.
	srv2 := &standIn{}
	ts2 := httptest.NewServer(srv2)
	defer ts2.Close()
	scs2, _, _ := GenerateLLM(context.Background(), httpLLM{ts2.URL}, LLMSpec{Pairs: 6, Seed: 3})
	a, _ := dataset.MarshalScenarios(scs)
	b, _ := dataset.MarshalScenarios(scs2)
	if !bytes.Equal(a, b) || *srv.requests[0].Seed != *srv2.requests[0].Seed {
		t.Fatal("same seed gave different output")
	}
}

func TestLLMGeneratorRetriesWithTheProblems(t *testing.T) {
	srv := &standIn{faults: map[string][]func(string) string{
		"scenario": {
			func(good string) string { return "Sure! Here is the scenario:\n" + good },
			func(good string) string { return strings.Replace(good, `"label":"T"`, `"label":"N3"`, 1) },
		},
		"rewrite": {
			func(string) string {
				return `{"t_text":"Aria, what time do we leave?","previous_text":null}`
			},
		},
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	scs, _, err := GenerateLLM(context.Background(), httpLLM{ts.URL}, LLMSpec{Pairs: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) != 2 || len(srv.requests) != 5 {
		t.Fatalf("%d scenarios after %d requests, want 2 after 3 scenario + 2 rewrite attempts", len(scs), len(srv.requests))
	}
	second := srv.requests[1].Messages
	if last := second[len(second)-1].Content; !strings.Contains(last, "not a JSON object") {
		t.Errorf("retry 1 does not name the problem: %q", last)
	}
	third := srv.requests[2].Messages
	if last := third[len(third)-1].Content; !strings.Contains(last, "0 T turns") {
		t.Errorf("retry 2 does not name the rule: %q", last)
	}
	rw := srv.requests[4].Messages
	if last := rw[len(rw)-1].Content; !strings.Contains(last, "implicit T names Aria") {
		t.Errorf("rewrite retry does not name the rule: %q", last)
	}
}

func TestLLMGeneratorGivesUpAfterRetries(t *testing.T) {
	always := func(string) string { return `{"turns":[],"gold_answer":""}` }
	srv := &standIn{faults: map[string][]func(string) string{"scenario": {always, always, always, always, always}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	_, _, err := GenerateLLM(context.Background(), httpLLM{ts.URL}, LLMSpec{Pairs: 1, Seed: 1, Retries: 2})
	var le *LLMError
	if !errors.As(err, &le) || le.Attempts != 3 || le.Step != "scenario" || len(srv.requests) != 3 {
		t.Fatalf("err = %v after %d requests", err, len(srv.requests))
	}
	if !strings.Contains(err.Error(), "llm-1-00000") {
		t.Errorf("error does not name the pair: %v", err)
	}
}

func TestStrictJSONRejectsNearMisses(t *testing.T) {
	var r rewriteReply
	for _, bad := range []string{
		"```json\n{\"t_text\":\"x\",\"previous_text\":null}\n```",
		`{"t_text":"x","previous_text":null} and more`,
		`{"t_text":"x","extra":1}`,
		`[1,2]`,
		``,
	} {
		if err := strictJSON(bad, &r); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if err := strictJSON(` {"t_text":"x","previous_text":"y"} `, &r); err != nil || *r.PreviousText != "y" {
		t.Errorf("rejected a good reply: %v", err)
	}
}

func FuzzStrictJSONScenarioReply(f *testing.F) {
	f.Add(`{"turns":[{"speaker":"A","text":"hi","label":"T"}],"gold_answer":"x"}`)
	f.Add(`{"turns":null}`)
	f.Add(`{`)
	f.Fuzz(func(t *testing.T, s string) {
		var r scenarioReply
		_ = strictJSON(s, &r) // must not panic
	})
}

func TestUnspeakableText(t *testing.T) {
	for _, bad := range []string{"[laughs] Okay, fine.", "*sighs* Sure.", "B: what time is it?", "<pause> Hmm.", strings.Repeat("word ", 130)} {
		if unspeakable(bad) == "" {
			t.Errorf("accepted %q", bad)
		}
	}
	for _, good := range []string{"Okay, fine.", "It's 6:40, right?", "A hundred and sixty, Jess."} {
		if p := unspeakable(good); p != "" {
			t.Errorf("rejected %q: %s", good, p)
		}
	}
}
