package reference

import "testing"

// BenchmarkParseReply: one strict parse of a typical reply; the LLM call it follows
// takes a second or more, so anything under a millisecond is free.
func BenchmarkParseReply(b *testing.B) {
	reply := `{"decision": "RESPOND", "answer": "The chicken comes out at five past seven."}`
	for b.Loop() {
		if _, err := ParseReply(reply); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSummarize: scoring the decisions of a paper-sized run (4,000 conversations of
// about 12 turns) from decisions that repeat the hand-worked set.
func BenchmarkSummarize(b *testing.B) {
	base := decisions()
	var ds []Decision
	for i := 0; len(ds) < 48000; i++ {
		for _, d := range base {
			d.ScenarioID += string(rune('a' + i%26))
			d.PairID += string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26))
			ds = append(ds, d)
		}
	}
	for b.Loop() {
		Summarize(ds)
	}
}
