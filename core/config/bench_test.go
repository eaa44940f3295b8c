package config

import "testing"

// BenchmarkLoadBench measures reading and checking bench.hcl, the embedded default run.
func BenchmarkLoadBench(b *testing.B) {
	for b.Loop() {
		if _, diags := Load("../../bench.hcl", Options{}); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}
