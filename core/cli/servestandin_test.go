package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// serve-standin starts the OpenAI stand-in as a person would, and the real openai plugin
// judges through it, configured only with the base_url the command printed.
func TestServeStandinServesTheOpenAIPlugin(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	st := &State{Ctx: ctx, Args: []string{"serve-standin", "openai", "--addr", "127.0.0.1:0"}, Env: map[string]string{},
		Stdin: strings.NewReader(""), Stdout: pw, Stderr: &bytes.Buffer{}, Getwd: func() (string, error) { return t.TempDir(), nil }}
	done := make(chan int, 1)
	go func() { done <- Run(st); pw.Close() }()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatalf("serve-standin printed nothing (exit %d)", <-done)
	}
	m := regexp.MustCompile(`^openai stand-in listening on (http://127\.0\.0\.1:\d+/v1)$`).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("first line %q does not give the address", lines.Text())
	}
	var rest bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		for lines.Scan() {
			rest.WriteString(lines.Text() + "\n")
		}
	}()

	sctx, scancel := context.WithTimeout(ctx, time.Minute)
	defer scancel()
	c, err := pluginhost.Start(sctx, pluginhost.Spec{Name: "openai", Source: buildPlugin(t, "plugins/openai")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	if err := c.Configure(sctx, map[string]any{"base_url": m[1], "cache_dir": t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	j, err := c.Judge()
	if err != nil {
		t.Fatal(err)
	}
	turns := []sdk.DialogueTurn{{Speaker: "B", Text: "Aria, when is the bus?"}}
	v, err := j.JudgeAnswer(sctx, sdk.AnswerQuery{Context: turns, Request: turns[0].Text, GoldAnswer: "six", Response: "the bus is at six"})
	if err != nil || v.Label != sdk.LabelCorrect || !v.Parsed {
		t.Fatalf("JudgeAnswer through the stand-in = %+v, %v", v, err)
	}
	if info, err := c.Describe(sctx); err != nil || info.Identity["served_model"] != "gpt-4o-mini-2024-07-18" {
		t.Errorf("identity after a verdict: %v, %v", info.Identity, err)
	}
	cancel() // Ctrl-C
	if code := <-done; code != ExitOK {
		t.Errorf("serve-standin exited %d after the interrupt", code)
	}
	<-read
	if !strings.Contains(rest.String(), `base_url = "`+m[1]+`"`) {
		t.Errorf("the command does not say how to point a plugin block at it:\n%s", rest.String())
	}
}

func TestServeStandinRefusesAnUnknownAPI(t *testing.T) {
	code, _, stderr := runCLI(t, t.TempDir(), "serve-standin", "gemini")
	if code != ExitUsage || !strings.Contains(stderr, `no stand-in "gemini"`) || !strings.Contains(stderr, "openai or anthropic") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
