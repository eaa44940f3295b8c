package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// chatClient talks to an OpenAI-compatible endpoint: POST {endpoint}/chat/completions.
type chatClient struct {
	endpoint string // e.g. http://localhost:8000/v1
	model    string
	key      string // may be empty (a local server)
	http     *http.Client
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string            `json:"model"`
	Messages    []chatMessage     `json:"messages"`
	Temperature float64           `json:"temperature"`
	MaxTokens   int               `json:"max_tokens,omitempty"`
	Format      map[string]string `json:"response_format,omitempty"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func newChatClient(endpoint, model, key string, timeout time.Duration) *chatClient {
	return &chatClient{endpoint: strings.TrimSuffix(endpoint, "/"), model: model, key: key, http: &http.Client{Timeout: timeout}}
}

// complete asks for one reply; json asks for a JSON object as the whole reply.
func (c *chatClient) complete(ctx context.Context, msgs []chatMessage, wantJSON bool) (string, error) {
	req := chatRequest{Model: c.model, Messages: msgs, MaxTokens: 200}
	if wantJSON {
		req.Format = map[string]string{"type": "json_object"}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	url := c.endpoint + "/chat/completions"
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("llm endpoint %q: %w", c.endpoint, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return "", fmt.Errorf("llm endpoint: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("llm endpoint %s: reading the reply: %w", url, err)
	}
	var out chatResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("llm endpoint %s: HTTP %d, not a chat completion: %.200q", url, resp.StatusCode, raw)
	}
	if resp.StatusCode != http.StatusOK {
		msg := string(raw)
		if out.Error != nil {
			msg = out.Error.Message
		}
		return "", fmt.Errorf("llm endpoint %s: HTTP %d: %.300s", url, resp.StatusCode, msg)
	}
	if len(out.Choices) == 0 {
		return "", fmt.Errorf("llm endpoint %s: the reply has no choices", url)
	}
	return out.Choices[0].Message.Content, nil
}

// llmDecision is what the llm policy asks for: respond or not, and the answer.
type llmDecision struct {
	Respond bool   `json:"respond"`
	Answer  string `json:"answer"`
}

const policyPrompt = `You are the voice assistant named %s in a room where several people talk among themselves. ` +
	`Your duty: answer only when someone asks you something, by your name or by making it clear that the question is meant for you; ` +
	`stay silent when people talk to each other, speak to another device, think out loud, or only mention you. ` +
	`You get a speech-recognition transcript of the conversation so far (no speaker names, no punctuation) and its latest utterance. ` +
	`Reply with a JSON object only: {"respond": true or false, "answer": "your short spoken answer, empty when not responding"}.`

const answerPrompt = `You are the voice assistant named %s in a room with several people. Someone asked you something. ` +
	`You get a speech-recognition transcript of the conversation so far (no speaker names, no punctuation) and the request. ` +
	`Reply with the short spoken answer only, one sentence.`

func transcriptMessage(history []string, latest string) string {
	var b strings.Builder
	b.WriteString("Transcript so far:\n")
	for _, l := range history {
		b.WriteString("- " + l + "\n")
	}
	b.WriteString("Latest utterance: " + latest)
	return b.String()
}

// decide is the llm policy: one request that returns the decision and the answer.
func (c *chatClient) decide(ctx context.Context, name string, history []string, latest string) (llmDecision, error) {
	reply, err := c.complete(ctx, []chatMessage{
		{Role: "system", Content: fmt.Sprintf(policyPrompt, name)},
		{Role: "user", Content: transcriptMessage(history, latest)},
	}, true)
	if err != nil {
		return llmDecision{}, err
	}
	var d llmDecision
	if err := json.Unmarshal([]byte(extractJSON(reply)), &d); err != nil {
		return llmDecision{}, fmt.Errorf("llm policy: the reply is not the JSON object asked for (%v): %.200q", err, reply)
	}
	return d, nil
}

// answer asks the endpoint for the answer to a request the name policy accepted.
func (c *chatClient) answer(ctx context.Context, name string, history []string, request string) (string, error) {
	reply, err := c.complete(ctx, []chatMessage{
		{Role: "system", Content: fmt.Sprintf(answerPrompt, name)},
		{Role: "user", Content: transcriptMessage(history, request)},
	}, false)
	return strings.TrimSpace(reply), err
}

// extractJSON cuts the outermost {...} out of a reply, so a model that wraps its object
// in a code fence or a sentence is still understood.
func extractJSON(s string) string {
	i, j := strings.Index(s, "{"), strings.LastIndex(s, "}")
	if i < 0 || j < i {
		return s
	}
	return s[i : j+1]
}
