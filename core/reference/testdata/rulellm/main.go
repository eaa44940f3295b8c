// Command rulellm is a deterministic llm plugin for the reference track's tests: it
// answers RESPOND exactly when the current turn (the last line of the last user
// message) names Aria, so explicit requests get answers and implicit ones do not. Its
// answers come from a JSON file mapping a turn's text to the answer. Configured
// substrings bend the rule: a turn containing one of respond_also gets RESPOND too, one
// containing a garble string gets a reply that is not JSON, one containing fail an error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/duplexmpe/duplexmpe/sdk"
)

type rule struct {
	answers     map[string]string
	respondAlso []string
	garble      []string
	fail        string
}

var aria = regexp.MustCompile(`(?i)\baria\b`)

func (r *rule) Describe(ctx context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "rulellm", Version: "0.1.0", ProtocolVersion: sdk.ProtocolVersion,
		Config: []sdk.ConfigField{
			{Name: "answers", Type: sdk.TypeString, Description: "JSON file: turn text -> answer"},
			{Name: "respond_also", Type: sdk.TypeListString, Description: "turns containing one of these get RESPOND"},
			{Name: "garble", Type: sdk.TypeListString, Description: "turns containing one of these get a non-JSON reply"},
			{Name: "fail", Type: sdk.TypeString, Description: "turns containing this get an error"},
		},
		Identity: map[string]string{"model": "rule:names-aria"}}, nil
}

func (r *rule) Configure(ctx context.Context, cfg map[string]any) error {
	r.respondAlso, r.garble = stringList(cfg["respond_also"]), stringList(cfg["garble"])
	r.fail, _ = cfg["fail"].(string)
	r.answers = map[string]string{}
	if path, _ := cfg["answers"].(string); path != "" {
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &r.answers)
	}
	return nil
}

func (r *rule) Complete(ctx context.Context, req sdk.CompletionRequest) (sdk.Completion, error) {
	if len(req.Messages) == 0 {
		return sdk.Completion{}, errors.New("no messages")
	}
	user := req.Messages[len(req.Messages)-1].Content
	lines := strings.Split(user, "\n")
	_, text, _ := strings.Cut(lines[len(lines)-1], ": ")
	if r.fail != "" && strings.Contains(text, r.fail) {
		return sdk.Completion{}, fmt.Errorf("refusing %q", text)
	}
	if containsAny(text, r.garble) {
		return sdk.Completion{Content: "I think Aria should stay quiet here.", Model: "rule"}, nil
	}
	reply := map[string]string{"decision": "SILENT", "answer": ""}
	if aria.MatchString(text) || containsAny(text, r.respondAlso) {
		reply["decision"] = "RESPOND"
		reply["answer"] = r.answers[text]
		if reply["answer"] == "" {
			reply["answer"] = "I am not sure."
		}
	}
	raw, _ := json.Marshal(reply)
	return sdk.Completion{Content: string(raw), Model: "rule", FinishReason: "stop"}, nil
}

func stringList(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func containsAny(text string, subs []string) bool {
	for _, s := range subs {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

func main() { sdk.Serve(&rule{}) }
