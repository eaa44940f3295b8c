package reference

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/stats"
)

// decisions builds a small hand-checked run: pairs p1..p4, T responses explicit
// (yes, yes, yes, no) and implicit (no, no, yes, yes); so b = 2, c = 1.
func decisions() []Decision {
	var ds []Decision
	ex := []bool{true, true, true, false}
	im := []bool{false, false, true, true}
	for i := range ex {
		for _, c := range []struct {
			cond string
			resp bool
		}{{"explicit", ex[i]}, {"implicit", im[i]}} {
			id := "p" + string(rune('1'+i)) + "-" + c.cond
			t := Decision{ScenarioID: id, PairID: "p" + string(rune('1'+i)), Condition: c.cond, Turn: 1, Label: "T", Decision: Silent}
			if c.resp {
				t.Decision, t.Answer = Respond, "x"
				t.Verdict = &Verdict{Label: "correct", Parsed: i != 2}
			}
			n2 := Decision{ScenarioID: id, PairID: t.PairID, Condition: c.cond, Turn: 0, Label: "N2", Addressee: "device", Decision: Silent}
			if i == 0 {
				n2.Decision = Unparseable
			}
			ds = append(ds, n2, t)
		}
	}
	return ds
}

func TestSummarizeHandWorked(t *testing.T) {
	s := Summarize(decisions())
	m := s.Paired.Response
	if s.Paired.Pairs != 4 || m.B != 2 || m.C != 1 || m.RateFirst != 0.75 || m.RateSecond != 0.5 || m.Difference != 0.25 {
		t.Fatalf("paired %+v", s.Paired)
	}
	if m.P != 1 || stats.McNemarExact(2, 1) != 1 {
		t.Errorf("p = %v; min(1, 2 P(X<=1 | n=3)) = min(1, 2*4/8) = 1", m.P)
	}
	ex := s.Entries[0]
	// Explicit: 3 responses, the verdict of p3 does not parse, so 2 of 3 correct;
	// N2 of p1 unparseable, so 3 of 4 silences.
	if ex.Response.K != 3 || ex.Response.N != 4 || ex.Accuracy.K != 2 || ex.Accuracy.N != 3 || ex.UnparseableVerdicts != 1 {
		t.Errorf("explicit %+v", ex)
	}
	if ex.Silence.K != 3 || ex.Silence.N != 4 || ex.SilenceByAddressee["device"].K != 3 || ex.Unparseable != 1 || ex.Decisions != 8 {
		t.Errorf("explicit silence %+v", ex)
	}
	if _, ok := ex.SilenceByLabel["N1"]; ok {
		t.Error("an N1 rate without N1 turns")
	}
}

func TestAgree(t *testing.T) {
	a := decisions()
	b := decisions()
	b[1].Decision = Silent      // p1 explicit T: RESPOND -> SILENT
	b[4].Decision = Unparseable // p2 explicit N2: SILENT -> unparseable
	b = b[:len(b)-1]            // the last turn only in a
	g := Agree(a, b)
	if g.Turns != 15 || g.Agree != 13 || g.OnlyOne != 1 || g.Rate != 13.0/15 {
		t.Errorf("%+v", g)
	}
	if g := Agree(nil, nil); g.Rate != 0 || g.Turns != 0 {
		t.Errorf("empty: %+v", g)
	}
}

func TestWriteAndLoad(t *testing.T) {
	ds := decisions()
	g := Agree(ds, ds)
	r := Result{FormatVersion: FormatVersion, Dataset: "hand", LLM: provenance.Plugin{Name: "gemini|pro", Plugin: "openai-llm", Version: "1"},
		Judge: provenance.Plugin{Name: "lexical", Plugin: "lexical-judge", Version: "1"}, Prompt: "decide-v1.tmpl", PromptHash: "sha256:0123456789abcdef0123",
		Runs: []RunResult{{ds, Summarize(ds)}, {ds, Summarize(ds)}}, Agreement: &g}
	dir := filepath.Join(t.TempDir(), "ref")
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	back, err := Load(filepath.Join(dir, JSONFile))
	if err != nil || len(back.Runs) != 2 || back.Runs[1].Summary.Paired.Response.B != 2 || back.Agreement.Rate != 1 {
		t.Fatalf("%+v %v", back, err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, MarkdownFile))
	for _, want := range []string{
		"| model | measure | pairs | explicit | implicit | b (explicit only) | c (implicit only) | difference | p (exact McNemar) |",
		`| gemini\|pro | response | 4 | 0.750 (3/4) | 0.500 (2/4) | 2 | 1 | +0.250 | 1.000 |`,
		"| gemini\\|pro | explicit | 4 | 0.750 (3/4) [",
		"### Text reference: explicit vs implicit (paired McNemar) (run 2)",
		"Agreement between runs 1 and 2: 100.0% of decisions (16/16 turns).",
		"sha256:0123456789ab)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("reference.md lacks %q:\n%s", want, md)
		}
	}

	os.WriteFile(filepath.Join(dir, "old.json"), []byte(`{"format_version":"0"}`), 0o644)
	if _, err := Load(filepath.Join(dir, "old.json")); err == nil || !strings.Contains(err.Error(), "format version") {
		t.Errorf("old format: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{`), 0o644)
	if _, err := Load(filepath.Join(dir, "bad.json")); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("bad json: %v", err)
	}
}

// The reference track's rates and McNemar test are score's: the same counts give the
// same record, text included (the copy this package had left the text of every
// available rate empty).
func TestRatesAndMcNemarAreScores(t *testing.T) {
	s := Summarize(decisions())
	ex, im := s.Entries[0], s.Entries[1]
	for _, c := range []struct {
		name string
		got  score.Rate
		k, n int
	}{
		{"explicit response", ex.Response, 3, 4}, {"explicit accuracy", ex.Accuracy, 2, 3},
		{"explicit silence", ex.Silence, 3, 4}, {"implicit response", im.Response, 2, 4},
		{"explicit N2 to a device", ex.SilenceByAddressee["device"], 3, 4},
	} {
		if want := score.NewRate(c.k, c.n); c.got != want {
			t.Errorf("%s: %+v; score's rate of %d/%d is %+v", c.name, c.got, c.k, c.n, want)
		}
	}
	if ex.Response.Text != "0.750 (3/4)" {
		t.Errorf("explicit response text %q", ex.Response.Text)
	}
	if want := score.NewMcNemar(2, 1, 4, 3, 2); s.Paired.Response != want {
		t.Errorf("paired %+v; score's McNemar is %+v", s.Paired.Response, want)
	}
	if empty := Summarize(nil); len(empty.Entries) != 0 || empty.Paired.Response != score.NewMcNemar(0, 0, 0, 0, 0) {
		t.Errorf("no decisions: %+v", empty)
	}
}
