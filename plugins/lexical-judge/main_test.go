package main

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/plugins/lexical-judge/lexical"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// buildPlugin builds this directory's plugin binary once for the package's tests.
func buildPlugin(t *testing.T) string {
	t.Helper()
	return plugintest.BuildGo(t, ".")
}

func TestMain(m *testing.M) {
	code := m.Run()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

// The conformance suite every plugin passes, against the real binary over real gRPC:
// the suite's default queries, and the brief's hard cases (a spelled-out number against
// a currency gold answer; content that is short).
func TestConformance(t *testing.T) {
	spec := pluginhost.Spec{Name: "lexical-judge", Source: buildPlugin(t)}
	t.Run("defaults", func(t *testing.T) { plugintest.Run(t, spec, plugintest.Options{}) })
	t.Run("numbers_and_intrusion", func(t *testing.T) {
		plugintest.Run(t, spec, plugintest.Options{
			AnswerQuery: &sdk.AnswerQuery{Request: "Aria, how much is the ticket?", GoldAnswer: "$9", Response: "nine dollars"},
			SpeechQuery: &sdk.SpeechQuery{Transcript: "nine dollars"},
		})
	})
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
