package pluginhost_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Every field of every kind survives the trip to a real plugin and back.
func TestEveryKindRoundTrip(t *testing.T) {
	ctx := context.Background()
	logFile := filepath.Join(t.TempDir(), "all.log")
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "all", Source: allKindsBin(t), LogFile: logFile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	if err := c.Configure(ctx, map[string]any{"gain": 0.5}); err != nil {
		t.Fatal(err)
	}
	if got := c.Kinds(); !reflect.DeepEqual(got, []string{"model", "tts", "asr", "judge", "llm"}) {
		t.Fatalf("Kinds = %v", got)
	}
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantSchema := []sdk.ConfigField{
		{Name: "gain", Type: "number", Default: 0.5},
		{Name: "mode", Type: "string", Default: "plain", Allowed: []string{"plain", "fancy"}},
		{Name: "tags", Type: "list(string)", Default: []any{"a", "b"}},
		{Name: "endpoint", Type: "string", Default: "", Transport: true},
	}
	if !reflect.DeepEqual(info.Config, wantSchema) {
		t.Fatalf("schema = %#v\nwant %#v", info.Config, wantSchema)
	}

	tts, _ := c.TTS()
	voices, err := tts.Voices(ctx)
	if err != nil || !reflect.DeepEqual(voices, []sdk.Voice{{ID: "beep", Description: "one tone per character", Rate: 16000}}) {
		t.Fatalf("Voices = %+v, %v", voices, err)
	}
	a, err := tts.Synthesize(ctx, "hi", "beep")
	if err != nil || a.Rate != 16000 || len(a.Samples) != 1600 {
		t.Fatalf("Synthesize = %d samples at %d Hz, %v; want 1600 at 16000", len(a.Samples), a.Rate, err)
	}
	want := float32(0.2 * math.Sin(2*math.Pi*(200+float64('h'%32)*20)/16000))
	if a.Samples[1] != want {
		t.Fatalf("sample 1 = %v; want %v (bit-exact float32 on the wire)", a.Samples[1], want)
	}
	_, err = tts.Synthesize(ctx, "hi", "nope")
	var ce *pluginhost.CallError
	if !errors.As(err, &ce) || ce.Op != "TTS.Synthesize" || status.Code(err) != codes.Internal || !strings.Contains(err.Error(), `unknown voice "nope"`) {
		t.Fatalf("unknown voice: err = %v", err)
	}

	asr, _ := c.ASR()
	text, err := asr.Transcribe(ctx, sdk.Audio{Samples: make([]float32, 4410), Rate: 44100}, "en")
	if err != nil || text != "4410 samples at 44100 Hz" {
		t.Fatalf("Transcribe = %q, %v", text, err)
	}
	if _, err := asr.Transcribe(ctx, sdk.Audio{Samples: make([]float32, 10)}, ""); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("clip without a rate: err = %v; want InvalidArgument", err)
	}

	j, _ := c.Judge()
	v, err := j.JudgeAnswer(ctx, sdk.AnswerQuery{Context: []sdk.DialogueTurn{{Speaker: "A", Text: "q"}}, Request: "q", GoldAnswer: "Paris", Response: "It is paris."})
	if err != nil || v != (sdk.Verdict{Label: sdk.LabelCorrect, Parsed: true, Raw: sdk.LabelCorrect}) {
		t.Fatalf("JudgeAnswer = %+v, %v", v, err)
	}
	v, err = j.ClassifySpeech(ctx, sdk.SpeechQuery{Transcript: "well I would say that the answer is four"})
	if err != nil || v.Label != sdk.LabelIntrusion {
		t.Fatalf("ClassifySpeech = %+v, %v", v, err)
	}

	l, _ := c.LLM()
	temp, seed := 0.25, int64(9)
	comp, err := l.Complete(ctx, sdk.CompletionRequest{Messages: []sdk.ChatMessage{{Role: "system", Content: "x"}, {Role: "user", Content: "two words"}},
		Temperature: &temp, Seed: &seed, MaxTokens: 5, JSON: true})
	if err != nil || comp != (sdk.Completion{Content: "echo: two words", Model: "echo", PromptTokens: 2, CompletionTokens: 1, FinishReason: "stop"}) {
		t.Fatalf("Complete = %+v, %v", comp, err)
	}

	// What the plugin printed to stdout came over go-plugin's stdio stream.
	c.Kill()
	if log, _ := os.ReadFile(logFile); !strings.Contains(string(log), "configured gain 0.5") {
		t.Fatalf("the plugin's stdout is not in its log file:\n%s", log)
	}
}

// A Step whose context has ended returns the context's error without sending the
// frame, so the conversation stays usable.
func TestStepWithEndedContext(t *testing.T) {
	c := startBeeper(t, pluginhost.Spec{})
	m, _ := c.Model()
	conv, err := m.Start(context.Background(), sdk.ConversationStart{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := conv.Step(ctx, tone(1920, 0)); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 3 {
		if _, err := conv.Step(ctx, tone(1920, 0)); err != nil {
			t.Fatalf("frame %d after the cancelled Step: %v", i, err)
		}
	}
	if err := conv.Close(); err != nil {
		t.Fatal(err)
	}
}
