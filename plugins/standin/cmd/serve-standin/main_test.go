package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

// serve-standin starts the OpenAI stand-in as a person would, and the real openai plugin
// judges through it, configured only with the base_url the command printed.
func TestServeStandinServesTheOpenAIPlugin(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"openai", "--addr", "127.0.0.1:0"}, pw, &bytes.Buffer{}); pw.Close() }()
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
	c, err := pluginhost.Start(sctx, pluginhost.Spec{Name: "openai", Source: plugintest.BuildGo(t, "../../../openai")}, nil)
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
	if code := <-done; code != 0 {
		t.Errorf("serve-standin exited %d after the interrupt", code)
	}
	<-read
	if !strings.Contains(rest.String(), `base_url = "`+m[1]+`"`) {
		t.Errorf("the command does not say how to point a plugin block at it:\n%s", rest.String())
	}
}

func TestServeStandinRefusesAnUnknownAPI(t *testing.T) {
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"gemini"}, io.Discard, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), `no stand-in "gemini"`) || !strings.Contains(stderr.String(), "openai or anthropic") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}

// The production binary links no test double: the stand-ins are reached only through
// this separate command.
func TestDuplexmpeDoesNotLinkTheStandin(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../../../core/cmd/duplexmpe").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasSuffix(dep, "/plugins/standin") || strings.Contains(dep, "/standintest") {
			t.Errorf("bin/duplexmpe links the test double %s", dep)
		}
	}
}
