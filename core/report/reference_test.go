package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/reference"
	"github.com/duplexmpe/duplexmpe/core/stats"
)

// referenceResult is a text reference run scored by reference.Summarize (the real
// path) over five pairs: T answered in the explicit version of pairs 0-3 and in the
// implicit version of pairs 3 and 4, so b = 3 and c = 1; one N1 per scenario, SILENT
// except in p0-explicit.
func referenceResult(datasetHash string) reference.Result {
	var ds []reference.Decision
	for i := range 5 {
		pair := fmt.Sprintf("p%d", i)
		for _, c := range []struct {
			cond string
			resp bool
		}{{"explicit", i < 4}, {"implicit", i >= 3}} {
			id := pair + "-" + c.cond
			n1 := reference.Decision{ScenarioID: id, PairID: pair, Condition: c.cond, Turn: 0, Label: "N1", Decision: reference.Silent, Attempts: 1}
			if i == 0 && c.cond == "explicit" {
				n1.Decision, n1.Answer = reference.Respond, "hello"
			}
			tt := reference.Decision{ScenarioID: id, PairID: pair, Condition: c.cond, Turn: 1, Label: "T", Decision: reference.Silent, Attempts: 1}
			if c.resp {
				tt.Decision, tt.Answer = reference.Respond, "nine"
				tt.Verdict = &reference.Verdict{Label: "correct", Parsed: true}
			}
			ds = append(ds, n1, tt)
		}
	}
	return reference.Result{FormatVersion: reference.FormatVersion, Dataset: "duplex-mpe-mini", DatasetHash: datasetHash,
		LLM:    provenance.Plugin{Name: "gpt|<x>", Plugin: "openai-llm", Version: "0.1"},
		Judge:  provenance.Plugin{Name: "judge", Plugin: "lexical-judge", Version: "0.1"},
		Prompt: "decide-v1", PromptHash: "sha256:abcd",
		Runs: []reference.RunResult{{Decisions: ds, Summary: reference.Summarize(ds)}}}
}

// writeReference writes the result where `duplexmpe reference` would, and returns the dir.
func writeReference(t *testing.T, r reference.Result) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ref")
	if err := reference.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	return dir
}

const referenceTitle = "Text reference (transcript-conditioned LLM)"

func TestReferenceSectionInEveryFormat(t *testing.T) {
	meta := testMeta()
	meta.ReferenceDir = writeReference(t, referenceResult(meta.Dataset.Hash))
	dir := t.TempDir()
	if err := WriteAll(dir, summary(6, 2), meta); err != nil {
		t.Fatal(err)
	}
	md := read(t, dir, MarkdownFile)
	// The section comes right after the speech models' paired section, and is listed.
	paired, ref, next := strings.Index(md, "\n## Explicit vs implicit (paired McNemar)\n"), strings.Index(md, "\n## "+referenceTitle+"\n"), strings.Index(md, "\n## T outcome partition")
	if paired < 0 || ref < paired || next < ref {
		t.Fatalf("section order: paired %d, reference %d, next %d\n%s", paired, ref, next, md)
	}
	if !strings.Contains(md, "- ["+referenceTitle+"](#text-reference-transcript-conditioned-llm)") {
		t.Error("the contents do not list the reference section")
	}
	sec := md[ref:next]
	p := stats.McNemarExact(3, 1)
	wantPaired := fmt.Sprintf("| gpt\\|&lt;x&gt; | response | 5 | 0.800 (4/5) | 0.400 (2/5) | 3 | 1 | +0.400 | %.3f |", p)
	for _, want := range []string{
		"**Text reference**", "**Text reference: explicit vs implicit (paired McNemar)**",
		"| model | measure | pairs | explicit | implicit | b (explicit only) | c (implicit only) | difference | p (exact McNemar) |",
		wantPaired,
		"gpt\\|&lt;x&gt; (openai-llm 0.1)", "hash sha256:00ff.",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("reference section lacks %q:\n%s", want, sec)
		}
	}
	if math.Abs(p-0.625) > 1e-12 {
		t.Errorf("McNemar(3, 1) = %v; min(1, 2 P(X <= 1 | n = 4)) = 2 * 5/16 = 0.625", p)
	}
	// Main table: explicit response 4/5, silence 4/5 (the N1 of p0-explicit), and the
	// rates carry their Wilson interval as every rate of the report does.
	rows := append(mdRows(md, referenceTitle, `gpt\|&lt;x&gt;`, "explicit"), mdRows(md, referenceTitle, `gpt\|&lt;x&gt;`, "implicit")...)
	if len(rows) != 2 || len(rows[0]) != 12 {
		t.Fatalf("main table rows: %v", rows)
	}
	ex := reference.Summarize(referenceResult("").Runs[0].Decisions).Entries[0]
	checkRateCell(t, "reference explicit response", rows[0][3], ex.Response, 0)
	checkRateCell(t, "reference explicit silence", rows[0][5], ex.Silence, 0)
	if ex.Response.K != 4 || ex.Silence.K != 4 || ex.Silence.N != 5 {
		t.Errorf("explicit entry %+v", ex)
	}

	page := read(t, dir, HTMLFile)
	for _, want := range []string{`<section id="reference">`, `href="#reference"`, "<h3>Text reference: explicit vs implicit (paired McNemar)</h3>",
		"<td>gpt|&lt;x&gt;</td><td>response</td><td>5</td>", fmt.Sprintf("<td>3</td><td>1</td><td>+0.400</td><td>%.3f</td>", p)} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Index(page, `<section id="reference">`) < strings.Index(page, `<section id="paired">`) {
		t.Error("report.html: reference section before the paired section")
	}
	for _, bad := range []string{"http://", "https://", "<script", "<link", "@import", "url(", "<iframe", "<img"} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("report.html with a reference contains %q", bad)
		}
	}
	for _, m := range regexp.MustCompile(`(?i)\b(?:src|href)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "#") {
			t.Errorf("reference to %q outside the page", m[1])
		}
	}

	var res struct {
		Meta      Meta              `json:"meta"`
		Reference *reference.Result `json:"reference"`
	}
	if err := json.Unmarshal([]byte(read(t, dir, JSONFile)), &res); err != nil {
		t.Fatal(err)
	}
	if res.Reference == nil || len(res.Reference.Runs) != 1 || res.Reference.Runs[0].Summary.Paired.Response.B != 3 ||
		len(res.Reference.Runs[0].Decisions) != 20 || res.Meta.ReferenceDir != meta.ReferenceDir {
		t.Errorf("results.json reference: %+v", res.Reference)
	}
}

func TestNoReferenceSectionWithoutReferenceDir(t *testing.T) {
	dir := writeAll(t, summary(6, 2))
	for _, name := range []string{MarkdownFile, HTMLFile, JSONFile} {
		text := read(t, dir, name)
		if strings.Contains(text, "Text reference") || strings.Contains(text, `"reference`) || strings.Contains(text, `id="reference"`) {
			t.Errorf("%s mentions a reference without one", name)
		}
	}
}

// A reference on another dataset is shown, with both hashes, so a reader sees they differ.
func TestReferenceOnAnotherDatasetIsFlagged(t *testing.T) {
	meta := testMeta()
	meta.ReferenceDir = writeReference(t, referenceResult("sha256:beef"))
	dir := t.TempDir()
	if err := WriteAll(dir, summary(6, 2), meta); err != nil {
		t.Fatal(err)
	}
	if md := read(t, dir, MarkdownFile); !strings.Contains(md, "hash sha256:beef: not the dataset of this run (sha256:00ff)") {
		t.Errorf("no dataset mismatch note:\n%s", md)
	}
}

func TestUnreadableReferenceIsAnErrorNamingTheFile(t *testing.T) {
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, reference.JSONFile), []byte(`{"format_version": "1", "runs": [`), 0o644)
	old := t.TempDir()
	os.WriteFile(filepath.Join(old, reference.JSONFile), []byte(`{"format_version": "0"}`), 0o644)
	for _, refDir := range []string{filepath.Join(t.TempDir(), "missing"), bad, old} {
		meta := testMeta()
		meta.ReferenceDir = refDir
		dir := t.TempDir()
		err := WriteAll(dir, summary(3, 2), meta)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(refDir, reference.JSONFile)) || !strings.Contains(err.Error(), "duplexmpe reference") {
			t.Errorf("%s: err = %v", refDir, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s: files written despite the error: %v", refDir, entries)
		}
	}
}
