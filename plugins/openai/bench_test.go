package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/plugins/internal/hosted/standintest"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// One judge verdict as the host sees it: gRPC to the plugin process, HTTP to the local
// stand-in and back ("sent"), or answered from the response cache ("cached"). The
// difference to a hosted API is the service's own latency, which this cannot measure.
func BenchmarkJudgeAnswer(b *testing.B) {
	s := standintest.NewOpenAI(b, testKey)
	bin := buildPlugin(b)
	for _, cached := range []bool{false, true} {
		name := map[bool]string{false: "sent", true: "cached"}[cached]
		b.Run(name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "openai", Source: bin, Env: map[string]string{"OPENAI_API_KEY": testKey}}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Kill()
			cfg := map[string]any{}
			for _, f := range fields {
				cfg[f.Name] = f.Default
			}
			cfg["base_url"], cfg["cache"], cfg["cache_dir"] = s.URL+"/v1", cached, b.TempDir()
			if err := c.Configure(ctx, cfg); err != nil {
				b.Fatal(err)
			}
			j, _ := c.Judge()
			q := sdk.AnswerQuery{Context: []sdk.DialogueTurn{{Speaker: "A", Text: "The bus is at six."}}, Request: "Aria, when is the bus?", GoldAnswer: "six", Response: "at six"}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if !cached {
					q.Response = fmt.Sprintf("at six %d", i)
				}
				if v, err := j.JudgeAnswer(ctx, q); err != nil || !v.Parsed {
					b.Fatal(v, err)
				}
			}
		})
	}
}
