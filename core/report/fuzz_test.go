package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/reference"
	"github.com/duplexmpe/duplexmpe/core/score"
)

// FuzzRenderStoredSummary: summary.json is read back from disk, so any document that
// decodes must render in every format without a panic, and the CSV must parse.
func FuzzRenderStoredSummary(f *testing.F) {
	good, _ := json.Marshal(summary(3, 2))
	f.Add(good)
	f.Add([]byte(`{"entries":[{"model":"m","condition":"explicit","yield":{"k":5,"n":2,"available":true,"rate":2.5,"lo":3,"hi":-1}}]}`))
	f.Add([]byte(`{"entries":[{"model":"","condition":"","by_t_position":{"":{}},"silence_sweep":[{"threshold_ms":-5}]}],"comparisons":[{}],"paired":[{}]}`))
	f.Add([]byte(`{"entries":[{"model":"a|b<c>","condition":"x\ny","t_outcomes":{"fresh-onset":-3}}],"spearman_presence_fresh_onset":{"rho":1e308,"available":true}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s score.Summary
		if decode(data, &s) != nil {
			return
		}
		var m Meta
		_ = decode(data, &m)
		md := markdown(s, m, nil)
		if len(md) == 0 {
			t.Fatal("empty report.md")
		}
		c, err := csvBytes(s, m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := csv.NewReader(bytes.NewReader(c)).ReadAll(); err != nil {
			t.Fatalf("results.csv does not parse: %v", err)
		}
		if _, err := htmlPage(s, m, nil, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := MainTable(&bytes.Buffer{}, s); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzRenderStoredReference: reference.json is read back from disk too, so any result
// that decodes must render beside a summary in every format without a panic.
func FuzzRenderStoredReference(f *testing.F) {
	good, _ := json.Marshal(referenceResult("sha256:00ff"))
	f.Add(good)
	f.Add([]byte(`{"format_version":"1","runs":[{"summary":{"entries":[{"condition":"x|y<z>","response":{"k":-1,"n":0,"rate":1e308}}],"paired":{"pairs":-3,"response":{"p":-1}}}}],"agreement":{"turns":0,"rate":0}}`))
	f.Add([]byte(`{"runs":[{},{}],"llm":{"name":"\n"}}`))
	s := summary(2, 2)
	f.Fuzz(func(t *testing.T, data []byte) {
		var r reference.Result
		if decode(data, &r) != nil {
			return
		}
		m := testMeta()
		if md := markdown(s, m, &r); !bytes.Contains(md, []byte("## Text reference (transcript-conditioned LLM)")) {
			t.Fatal("report.md without the reference section")
		}
		if _, err := htmlPage(s, m, &r, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
	})
}
