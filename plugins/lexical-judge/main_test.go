package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/plugins/lexical-judge/lexical"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// buildPlugin builds this directory's plugin binary into a temporary directory.
func buildPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lexical-judge")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// The plugin as the host sees it: a real process over real gRPC.
func TestPluginOverGRPC(t *testing.T) {
	bin := buildPlugin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "lexical-judge", Source: bin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(info.Kinds, sdk.KindJudge) || info.Identity["rules_sha256"] != lexical.Identity() {
		t.Fatalf("describe = %+v", info)
	}
	if err := c.Configure(ctx, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	j, err := c.Judge()
	if err != nil {
		t.Fatal(err)
	}
	ctxTurns := []sdk.DialogueTurn{{Speaker: "A", Text: "Aria, how much is the ticket?"}}
	cases := []struct {
		answer bool
		text   string
		want   string
	}{
		{true, "it is nine dollars", sdk.LabelCorrect},
		{true, "ten dollars", sdk.LabelIncorrect},
		{false, "mm-hm", sdk.LabelAcknowledgement},
		{false, "nine dollars", sdk.LabelIntrusion},
	}
	for _, tc := range cases {
		var v sdk.Verdict
		if tc.answer {
			v, err = j.JudgeAnswer(ctx, sdk.AnswerQuery{Context: ctxTurns, Request: ctxTurns[0].Text, GoldAnswer: "$9", Response: tc.text})
		} else {
			v, err = j.ClassifySpeech(ctx, sdk.SpeechQuery{Context: ctxTurns, Transcript: tc.text})
		}
		if err != nil {
			t.Fatal(err)
		}
		if v.Label != tc.want || !v.Parsed || v.Raw == "" || v.Rationale == "" {
			t.Errorf("%q: verdict %+v, want %s", tc.text, v, tc.want)
		}
	}
}
