package score

import (
	"fmt"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// BenchmarkSummarizePaperScale: two models on 2,000 pairs in both conditions (8,000
// conversations), 10,000 bootstrap resamples per comparison.
func BenchmarkSummarizePaperScale(b *testing.B) {
	var items []Scored
	for i := range 2000 {
		for _, cond := range []string{protocol.Explicit, protocol.Implicit} {
			for mi, model := range []string{"a", "b"} {
				var eps []timeline.Episode
				if (i+mi)%3 != 0 {
					eps = append(eps, answerFresh)
				}
				if (i+mi)%4 == 0 {
					eps = append(eps, n2Speech150)
				}
				if i%2 == 0 {
					eps = append(eps, n4Pass)
				}
				items = append(items, judge(item(model, cond, fmt.Sprint(i), protocol.TPositions[i%3], eps...), i%5 != 0, i%7 != 0))
			}
		}
	}
	p := protocol.Defaults()
	b.ResetTimer()
	for b.Loop() {
		Summarize(items, p)
	}
}
