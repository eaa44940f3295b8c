package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/timeline"
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

// transcriptASR hears every clip as the same words: the ASR is not under test here.
type transcriptASR string

func (a transcriptASR) Transcribe(context.Context, sdk.Audio, string) (string, error) {
	return string(a), nil
}

// Accepted answer variants end to end: a scenario's gold_accepted in score.Item, through
// score.Judge and the host's judge client, over gRPC (JudgeAnswerRequest.gold_accepted) to
// this plugin process, which accepts an answer matching a variant; and numbers as ASR
// writes them ("$330" for "three thirty") against a clock-time gold.
func TestAcceptedVariantsEndToEnd(t *testing.T) {
	bin := buildPlugin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "lexical-judge", Source: bin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	if err := c.Configure(ctx, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	j, err := c.Judge()
	if err != nil {
		t.Fatal(err)
	}
	const rate = 16000
	item := score.Item{Model: "m", Condition: protocol.Explicit, PairID: "p", ScenarioID: "s",
		GoldAnswer: "the blue folder", GoldAccepted: []string{"the navy one"},
		Timeline: timeline.Timeline{Turns: []timeline.Turn{
			{Label: protocol.LabelT, Speaker: "B", Text: "Aria, which folder has the contract?", Start: 2, End: 5},
			{Label: protocol.LabelN1, Speaker: "C", Text: "Aria knows these things.", Start: 12, End: 14},
		}},
		Episodes: []timeline.Episode{{Start: 6, End: 8}},
	}
	wave := audio.PCM{Samples: make([]float32, 16*rate), Rate: rate}
	answer := func(item score.Item, heard string) *score.Judgement {
		t.Helper()
		s, err := score.Judge(ctx, item, wave, transcriptASR(heard), j, protocol.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range s.Events {
			if ev.T != nil && ev.T.Answer != nil {
				return ev.T.Answer
			}
		}
		t.Fatalf("no judged answer in %+v", s.Events)
		return nil
	}
	if a := answer(item, "It's the navy one."); !a.OK || !strings.Contains(a.Raw, `"accepted":"the navy one"`) {
		t.Errorf("an answer matching the accepted variant: %+v", a)
	}
	if a := answer(item, "the red one"); a.OK {
		t.Errorf("an answer matching neither: %+v", a)
	}
	noVariants := item
	noVariants.GoldAccepted = nil
	if a := answer(noVariants, "It's the navy one."); a.OK {
		t.Errorf("the variant answered without being sent: %+v", a)
	}
	clock := item
	clock.GoldAnswer, clock.GoldAccepted = "3:30", nil
	for heard, ok := range map[string]bool{"The meeting starts at $330.": true, "at 3 30": true, "half past three": true, "3:13": false} {
		if a := answer(clock, heard); a.OK != ok {
			t.Errorf("gold 3:30, heard %q: %+v, want ok=%v", heard, a, ok)
		}
	}
}
