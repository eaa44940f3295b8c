package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/plugins/internal/hosted/standintest"
	judgeprompt "github.com/duplexmpe/duplexmpe/prompts/judge"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

const testKey = "sk-ant-standin-0123456789SECRET"

func buildPlugin(t testing.TB) string {
	t.Helper()
	return plugintest.BuildGo(t, ".")
}

func TestMain(m *testing.M) {
	code := m.Run()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

// hostedPlugin is this plugin as its tests run it against the stand-in.
func hostedPlugin(t testing.TB) standintest.Plugin {
	return standintest.Plugin{Name: "anthropic", Binary: buildPlugin(t), Env: map[string]string{"ANTHROPIC_API_KEY": testKey}, Fields: fields}
}

// testConfig points the plugin at the stand-in, with a private cache and quick retries.
func testConfig(t *testing.T, s *standintest.Anthropic, extra map[string]any) map[string]any {
	return hostedPlugin(t).Config(t, s.URL+"/v1", extra)
}

func spec(t *testing.T, logFile string) pluginhost.Spec { return hostedPlugin(t).Spec(logFile) }

// The conformance suite through a real process and real gRPC, against the stand-in.
func TestConformance(t *testing.T) {
	s := standintest.NewAnthropic(t, testKey)
	plugintest.Run(t, spec(t, ""), plugintest.Options{Config: testConfig(t, s, nil)})
	if s.Count() == 0 {
		t.Fatal("the stand-in was never called")
	}
}

func start(t *testing.T, s *standintest.Anthropic, logFile string, extra map[string]any) *pluginhost.Client {
	t.Helper()
	return hostedPlugin(t).Start(t, s.URL+"/v1", logFile, extra)
}

// Verdicts over gRPC; unparseable replies are verdicts with Parsed false; 429 and 529
// are retried; thinking blocks are skipped; a malformed body is an error; no key in the log.
func TestJudgeOverGRPC(t *testing.T) {
	s := standintest.NewAnthropic(t, testKey)
	logFile := filepath.Join(t.TempDir(), "anthropic.log")
	c := start(t, s, logFile, map[string]any{"input_price_per_mtok": 0.8, "output_price_per_mtok": 4.0})
	ctx := context.Background()
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Identity["judge_prompt_version"] != judgeprompt.Version || info.Identity["judge_prompt_sha256"] != judgeprompt.Hash() ||
		info.Identity["api"] != "anthropic-messages" || info.Identity["anthropic_version"] != "2023-06-01" {
		t.Fatalf("identity %v", info.Identity)
	}
	j, err := c.Judge()
	if err != nil {
		t.Fatal(err)
	}
	turns := []sdk.DialogueTurn{{Speaker: "A", Text: "Tickets are nine dollars."}, {Speaker: "B", Text: "Aria, how much is a ticket?"}}
	answer := func(resp string) sdk.Verdict {
		t.Helper()
		v, err := j.JudgeAnswer(ctx, sdk.AnswerQuery{Context: turns, Request: turns[1].Text, GoldAnswer: "nine dollars", Response: resp})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := answer("it's nine dollars"); v.Label != sdk.LabelCorrect || !v.Parsed {
		t.Errorf("correct: %+v", v)
	}
	if v := answer("ten dollars"); v.Label != sdk.LabelIncorrect || !v.Parsed {
		t.Errorf("incorrect: %+v", v)
	}
	// The identity names the dated model the API served for the alias asked for.
	if info, err := c.Describe(ctx); err != nil || info.Identity["served_model"] != "claude-3-5-haiku-20241022" || info.Identity["model"] != "claude-3-5-haiku-latest" {
		t.Errorf("identity after replies: %v, %v", info.Identity, err)
	}
	s.Fault("prose")
	if v := answer("maybe nine"); v.Label != sdk.LabelIncorrect || v.Parsed || v.Raw != "Looks correct to me." {
		t.Errorf("prose: %+v; want unparseable incorrect", v)
	}
	s.Fault("429", "529", "thinking")
	before := s.Count()
	if v, err := j.ClassifySpeech(ctx, sdk.SpeechQuery{Context: turns, Transcript: "right"}); err != nil || v.Label != sdk.LabelAcknowledgement || !v.Parsed {
		t.Errorf("after 429, 529, with thinking: %+v, %v", v, err)
	}
	if s.Count()-before != 3 {
		t.Errorf("%d calls; want 3", s.Count()-before)
	}
	s.Fault("malformed")
	if _, err := j.ClassifySpeech(ctx, sdk.SpeechQuery{Transcript: "nine dollars"}); err == nil || !strings.Contains(err.Error(), "malformed reply") {
		t.Errorf("malformed: %v", err)
	}
	c.Kill()
	logText, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logText), "total_cost_usd") || strings.Contains(string(logText), testKey) {
		t.Errorf("log without usage, or with the key:\n%s", logText)
	}
}

// A wrong key is a 401 error naming the status; a system-only request is refused before
// it is sent; the cost limit holds.
func TestErrors(t *testing.T) {
	s := standintest.NewAnthropic(t, "sk-ant-other")
	c := start(t, s, "", map[string]any{"input_price_per_mtok": 1000.0, "output_price_per_mtok": 1000.0, "cost_limit": 0.1})
	llm, err := c.LLM()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = llm.Complete(ctx, sdk.CompletionRequest{Messages: []sdk.ChatMessage{{Role: "user", Content: "hi"}}, MaxTokens: 10})
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "authentication_error") || strings.Contains(err.Error(), testKey) {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := llm.Complete(ctx, sdk.CompletionRequest{Messages: []sdk.ChatMessage{{Role: "system", Content: "x"}}}); err == nil || !strings.Contains(err.Error(), "no user message") {
		t.Fatalf("system only: %v", err)
	}
	_, err = llm.Complete(ctx, sdk.CompletionRequest{Messages: []sdk.ChatMessage{{Role: "user", Content: "hi"}}, MaxTokens: 1000})
	if err == nil || !strings.Contains(err.Error(), "cost_limit") {
		t.Fatalf("over the limit: %v", err)
	}
	if s.Count() != 1 {
		t.Fatalf("%d calls reached the server; want 1", s.Count())
	}
}
