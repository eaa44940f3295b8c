package lexical

import (
	"context"
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk"
)

func BenchmarkJudgeAnswer(b *testing.B) {
	q := sdk.AnswerQuery{GoldAnswer: "$9.50", Response: "the ticket costs nine dollars and fifty cents, I checked this morning"}
	for b.Loop() {
		Judge{}.JudgeAnswer(context.Background(), q)
	}
}

func BenchmarkClassifySpeech(b *testing.B) {
	q := sdk.SpeechQuery{Transcript: "okay okay mm hm got it yeah understood"}
	for b.Loop() {
		Judge{}.ClassifySpeech(context.Background(), q)
	}
}
