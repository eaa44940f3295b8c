package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/plugins/internal/hosted/standintest"
	judgeprompt "github.com/duplexmpe/duplexmpe/prompts/judge"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

const testKey = "sk-standin-0123456789abcdefSECRET"

// buildPlugin builds this directory's plugin binary once for the package's tests.
func buildPlugin(t testing.TB) string {
	t.Helper()
	return plugintest.BuildGo(t, ".")
}

func TestMain(m *testing.M) {
	if os.Getenv(standinEnv) != "" {
		serveStandin() // a stand-in server process of TestKillingTheJudgeServerLeavesItemsUnscored
	}
	code := m.Run()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

// hostedPlugin is this plugin as its tests run it against the stand-in.
func hostedPlugin(t testing.TB) standintest.Plugin {
	return standintest.Plugin{Name: "openai", Binary: buildPlugin(t), Env: map[string]string{"OPENAI_API_KEY": testKey}, Fields: fields}
}

// testConfig points the plugin at the stand-in, with a private cache and quick retries.
func testConfig(t *testing.T, s *standintest.OpenAI, extra map[string]any) map[string]any {
	return hostedPlugin(t).Config(t, s.URL+"/v1", extra)
}

func spec(t *testing.T, logFile string) pluginhost.Spec { return hostedPlugin(t).Spec(logFile) }

// The conformance suite through a real process and real gRPC, against the stand-in:
// all four kinds (llm, judge, asr, tts).
func TestConformance(t *testing.T) {
	s := standintest.NewOpenAI(t, testKey)
	plugintest.Run(t, spec(t, ""), plugintest.Options{Config: testConfig(t, s, nil), ASRLanguage: "en"})
	for _, p := range []string{"/v1/chat/completions", "/v1/audio/transcriptions", "/v1/audio/speech"} {
		if s.Count(p) == 0 {
			t.Errorf("%s was never called", p)
		}
	}
}

func start(t *testing.T, s *standintest.OpenAI, logFile string, extra map[string]any) *pluginhost.Client {
	t.Helper()
	return hostedPlugin(t).Start(t, s.URL+"/v1", logFile, extra)
}

// Judge verdicts over gRPC: the stand-in grades, the plugin parses strictly; a reply that
// is not the asked JSON is a verdict with Parsed false (incorrect, intrusion); 429s and
// 500s are retried; a malformed body is an error; the identity names the prompt.
func TestJudgeOverGRPC(t *testing.T) {
	s := standintest.NewOpenAI(t, testKey)
	logFile := filepath.Join(t.TempDir(), "openai.log")
	c := start(t, s, logFile, map[string]any{"model": "gpt-4o-mini", "input_price_per_mtok": 0.15, "output_price_per_mtok": 0.6})
	ctx := context.Background()
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Identity["judge_prompt_version"] != judgeprompt.Version || info.Identity["judge_prompt_sha256"] != judgeprompt.Hash() ||
		info.Identity["model"] != "gpt-4o-mini" || info.Identity["temperature"] != "0" || info.Identity["base_url"] != "" {
		t.Fatalf("identity %v", info.Identity)
	}
	if sm, ok := info.Identity["served_model"]; ok {
		t.Fatalf("served_model %q before any reply", sm)
	}
	j, err := c.Judge()
	if err != nil {
		t.Fatal(err)
	}
	turns := []sdk.DialogueTurn{{Speaker: "A", Text: "The bus is at six."}, {Speaker: "B", Text: "Aria, when is the bus?"}}
	answer := func(resp string) sdk.Verdict {
		t.Helper()
		v, err := j.JudgeAnswer(ctx, sdk.AnswerQuery{Context: turns, Request: turns[1].Text, GoldAnswer: "six", Response: resp})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := answer("um, at six I think"); v.Label != sdk.LabelCorrect || !v.Parsed || v.Rationale == "" {
		t.Errorf("correct reply: %+v", v)
	}
	if v := answer("at seven"); v.Label != sdk.LabelIncorrect || !v.Parsed {
		t.Errorf("wrong reply: %+v", v)
	}
	// The identity now names the model that answered, as the server named it, beside
	// the one asked for.
	if info, err := c.Describe(ctx); err != nil || info.Identity["served_model"] != "gpt-4o-mini-2024-07-18" || info.Identity["model"] != "gpt-4o-mini" {
		t.Errorf("identity after replies: %v, %v", info.Identity, err)
	}
	s.Fault("prose")
	if v := answer("at seven, no, eight"); v.Label != sdk.LabelIncorrect || v.Parsed || !strings.Contains(v.Raw, "probably right") {
		t.Errorf("prose reply: %+v; want unparseable incorrect", v)
	}
	s.Fault("prose")
	v, err := j.ClassifySpeech(ctx, sdk.SpeechQuery{Context: turns, Transcript: "mm-hm"})
	if err != nil || v.Label != sdk.LabelIntrusion || v.Parsed {
		t.Errorf("prose speech reply: %+v, %v; want unparseable intrusion", v, err)
	}
	if v, err := j.ClassifySpeech(ctx, sdk.SpeechQuery{Context: turns, Transcript: "okay"}); err != nil || v.Label != sdk.LabelAcknowledgement || !v.Parsed {
		t.Errorf("backchannel: %+v, %v", v, err)
	}
	// Retried: a 429 and a 500, then the answer.
	before := s.Count("/v1/chat/completions")
	s.Fault("429", "500")
	if v := answer("six o'clock"); v.Label != sdk.LabelCorrect {
		t.Errorf("after retries: %+v", v)
	}
	if n := s.Count("/v1/chat/completions") - before; n != 3 {
		t.Errorf("%d calls for one verdict with a 429 and a 500; want 3", n)
	}
	// Cached: the same question again is not sent.
	before = s.Count("/v1/chat/completions")
	if v := answer("six o'clock"); v.Label != sdk.LabelCorrect || s.Count("/v1/chat/completions") != before {
		t.Errorf("repeat: %+v, %d new calls; want 0", v, s.Count("/v1/chat/completions")-before)
	}
	// A malformed body is an error naming the call, not a verdict.
	s.Fault("malformed")
	if _, err := j.JudgeAnswer(ctx, sdk.AnswerQuery{Context: turns, Request: "x", GoldAnswer: "six", Response: "new"}); err == nil || !strings.Contains(err.Error(), "malformed reply") {
		t.Errorf("malformed: %v", err)
	}
	c.Kill()
	logText, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logText), "total_cost_usd") || !strings.Contains(string(logText), "retrying") {
		t.Errorf("the log lacks usage or retry lines:\n%s", logText)
	}
	if strings.Contains(string(logText), testKey) {
		t.Errorf("the plugin log holds the API key")
	}
}

// A wrong key: the service's 401 comes back as an error that names the status, and the
// key is never echoed.
func TestWrongKey(t *testing.T) {
	s := standintest.NewOpenAI(t, "sk-other")
	c := start(t, s, "", nil)
	llm, err := c.LLM()
	if err != nil {
		t.Fatal(err)
	}
	_, err = llm.Complete(context.Background(), sdk.CompletionRequest{Messages: []sdk.ChatMessage{{Role: "user", Content: "hi"}}})
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), testKey) {
		t.Fatalf("error %v", err)
	}
}

// The cost limit stops calls before they are sent; sampled calls are not cached unless
// a replicate index is set.
func TestCostLimitAndSampling(t *testing.T) {
	s := standintest.NewOpenAI(t, testKey)
	// $1000/M tokens both ways: a call of ~10 prompt and 16 max tokens may cost ~$0.03.
	c := start(t, s, "", map[string]any{"input_price_per_mtok": 1000.0, "output_price_per_mtok": 1000.0, "cost_limit": 0.05, "temperature": 0.7})
	llm, err := c.LLM()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := sdk.CompletionRequest{Messages: []sdk.ChatMessage{{Role: "user", Content: "Reply with the single word: ready"}}, MaxTokens: 16}
	r, err := llm.Complete(ctx, req)
	if err != nil || r.Content != "ready" || r.PromptTokens == 0 || r.CompletionTokens != 1 {
		t.Fatalf("first call: %+v, %v", r, err)
	}
	// Sampled (temperature 0.7), no replicate: sent again, not cached.
	if _, err := llm.Complete(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := s.Count("/v1/chat/completions"); n != 2 {
		t.Fatalf("%d calls; want 2 (sampled calls are not cached)", n)
	}
	req.MaxTokens = 100 // could cost $0.1: over the limit
	_, err = llm.Complete(ctx, req)
	if err == nil || !strings.Contains(err.Error(), "cost limit") || !strings.Contains(err.Error(), "cost_limit") {
		t.Fatalf("over the limit: %v", err)
	}
	if n := s.Count("/v1/chat/completions"); n != 2 {
		t.Fatalf("the refused call was sent")
	}
}

func TestReplicateCachesSampledCalls(t *testing.T) {
	s := standintest.NewOpenAI(t, testKey)
	c := start(t, s, "", map[string]any{"temperature": 0.7, "replicate": "3"})
	llm, _ := c.LLM()
	req := sdk.CompletionRequest{Messages: []sdk.ChatMessage{{Role: "user", Content: "hi"}}}
	for range 2 {
		if _, err := llm.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Count("/v1/chat/completions"); n != 1 {
		t.Fatalf("%d calls; want 1 (replicate 3 is in the cache key)", n)
	}
}

// ASR and TTS over gRPC: the WAV goes out as multipart and comes back as text; speech
// comes back at the declared rate.
func TestAudioOverGRPC(t *testing.T) {
	s := standintest.NewOpenAI(t, testKey)
	c := start(t, s, "", map[string]any{"tts_rate": 16000.0})
	ctx := context.Background()
	asr, _ := c.ASR()
	text, err := asr.Transcribe(ctx, sdk.Audio{Rate: 8000, Samples: make([]float32, 12000)}, "en")
	if err != nil || text != "audio of 1.50 seconds at 8000 hertz in en" {
		t.Fatalf("Transcribe = %q, %v", text, err)
	}
	tts, _ := c.TTS()
	a, err := tts.Synthesize(ctx, "hello", "nova")
	if err != nil || a.Rate != 16000 || len(a.Samples) < 4700 || len(a.Samples) > 4900 {
		t.Fatalf("Synthesize: %d samples at %d Hz, %v; want 0.3 s at 16000 Hz", len(a.Samples), a.Rate, err)
	}
	if _, err := tts.Synthesize(ctx, "hello", "nobody"); err == nil || !strings.Contains(err.Error(), "unknown voice") {
		t.Fatalf("unknown voice: %v", err)
	}
}

// The identity names what speaks, so a dataset's clip cache (construct.ClipKey, keyed by
// the identity) never hands one server's clips to another: the server without its
// secrets, the TTS model, the voices and their rate. The stand-in's 220 Hz tones and a
// real server's speech get different keys.
func TestTTSIdentityNamesWhatSpeaks(t *testing.T) {
	ctx := context.Background()
	identity := func(base string, extra map[string]any) map[string]string {
		t.Helper()
		c := hostedPlugin(t).Start(t, base, "", extra)
		info, err := c.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.Identity
	}
	key := func(id map[string]string) string {
		return construct.ClipKey(dataset.TTSInfo{Plugin: "openai", Name: "openai", Version: version, Identity: id}, "nova", "hello", 24000)
	}
	s1, s2 := standintest.NewOpenAI(t, testKey), standintest.NewOpenAI(t, testKey)
	a, b := identity(s1.URL+"/v1", nil), identity(s2.URL+"/v1", nil)
	if a["tts_server"] != strings.ToLower(s1.URL)+"/v1" || a["tts_model"] != "tts-1" || a["tts_rate"] != "24000" || !strings.Contains(a["tts_voices"], "nova") {
		t.Fatalf("identity %v", a)
	}
	if key(a) == key(b) {
		t.Error("two servers share a clip key")
	}
	if key(a) == key(identity(s1.URL+"/v1", map[string]any{"tts_model": "tts-1-hd"})) {
		t.Error("two TTS models share a clip key")
	}
	// No secret reaches the identity: not the URL's user and password, not a query token.
	host := strings.TrimPrefix(s1.URL, "http://")
	secret := identity("http://alice:hunter2@"+host+"/v1/?api_key=sk-secret#frag", nil)
	for k, v := range secret {
		if strings.Contains(v, "hunter2") || strings.Contains(v, "sk-secret") || strings.Contains(v, "alice") {
			t.Errorf("identity %s = %q holds a secret", k, v)
		}
	}
	if secret["tts_server"] != a["tts_server"] {
		t.Errorf("tts_server %q, want %q", secret["tts_server"], a["tts_server"])
	}
	// Shards reaching one server through per-node addresses name it once.
	n1 := identity(s1.URL+"/v1", map[string]any{"tts_server": "lab-tts"})
	n2 := identity(s2.URL+"/v1", map[string]any{"tts_server": "lab-tts"})
	if n1["tts_server"] != "lab-tts" || key(n1) != key(n2) {
		t.Errorf("tts_server setting: %q, keys equal %v", n1["tts_server"], key(n1) == key(n2))
	}
}

func TestServerName(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.openai.com/v1":                 "https://api.openai.com/v1",
		"HTTPS://API.OpenAI.com/v1/":                "https://api.openai.com/v1",
		"http://user:pw@10.0.0.5:8000/v1?key=abc#x": "http://10.0.0.5:8000/v1",
		"http://127.0.0.1:8000":                     "http://127.0.0.1:8000",
	} {
		if got := serverName(in); got != want {
			t.Errorf("serverName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := serverName("not a url with secret"); strings.Contains(got, "secret") {
		t.Errorf("unparsable URL kept in the identity: %q", got)
	}
}
