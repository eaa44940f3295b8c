package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// refBase adds an LLM plugin to base; the lexical judge is base's.
const refBase = base + `plugin "rule" { source = "bin/rule" }
`

func TestReferenceBlock(t *testing.T) {
	dir := t.TempDir()
	f, diags := parseIn(t, dir, refBase+`
reference "paper" {
  llm         = plugin.rule
  judge       = plugin.lexical
  dataset     = dataset.shipped
  runs        = 2
  retries     = 0
  temperature = 0
  seed        = 7
  max_tokens  = 512
  out         = "refs/paper"
}
reference "plain" {
  llm     = plugin.rule
  judge   = plugin.lexical
  dataset = dataset.shipped
}
evaluation "default" {
  dataset   = dataset.shipped
  models    = [plugin.silent, plugin.always_talk]
  asr       = plugin.sphinx
  judge     = plugin.lexical
  reference = reference.paper
}
`, Options{})
	if diags.HasErrors() {
		t.Fatalf("errors:\n%s", diagText(f, diags))
	}
	for _, d := range diags {
		if d.Summary == "Unused plugin" {
			t.Errorf("a plugin used only by a reference block is reported unused: %s", d.Detail)
		}
	}
	r := f.Reference("paper")
	if r == nil || r.LLM != "rule" || r.Judge != "lexical" || r.Dataset != "shipped" || r.Runs != 2 || r.Retries != 0 ||
		r.Temperature == nil || *r.Temperature != 0 || r.Seed == nil || *r.Seed != 7 || r.MaxTokens != 512 ||
		r.Out != filepath.Join(dir, "refs", "paper") {
		t.Fatalf("reference paper = %+v", r)
	}
	if r.AttrRanges["seed"].Start.Line != 21 {
		t.Errorf("seed range = %v", r.AttrRanges["seed"])
	}
	p := f.Reference("plain")
	if p == nil || p.Runs != 1 || p.Retries != 2 || p.Temperature != nil || p.Seed != nil || p.MaxTokens != 0 ||
		p.Out != filepath.Join(dir, "runs", "reference-plain") {
		t.Fatalf("defaults of reference plain = %+v", p)
	}
	if ev := f.Evaluation("default"); ev.Reference != "paper" {
		t.Errorf("evaluation reference = %q", ev.Reference)
	}
	if uses := f.Plugin("rule").Uses; len(uses) != 1 || uses[0] != "llm" {
		t.Errorf("rule uses = %v", uses)
	}
	if f.Reference("nope") != nil {
		t.Error("Reference of an undeclared name is not nil")
	}
	// Without a reference attribute an evaluation has none.
	f = mustParse(t, dir, base+goodEval, Options{})
	if f.Evaluation("default").Reference != "" || len(f.References) != 0 {
		t.Errorf("reference without a block: %q", f.Evaluation("default").Reference)
	}
}

const goodRef = `
reference "paper" {
  llm     = plugin.rule
  judge   = plugin.lexical
  dataset = dataset.shipped
}
`

func TestReferenceErrors(t *testing.T) {
	setting := func(line string) string {
		return refBase + strings.Replace(goodRef, "dataset = dataset.shipped", "dataset = dataset.shipped\n  "+line, 1)
	}
	evalRef := func(ref string) string {
		return refBase + goodRef + strings.Replace(goodEval, "judge   = plugin.lexical", "judge   = plugin.lexical\n  reference = "+ref, 1)
	}
	cases := []struct {
		name, src       string
		summary, detail string
		line            int
	}{
		{"unknown llm", refBase + strings.Replace(goodRef, "plugin.rule", "plugin.rul", 1), "Reference to undeclared plugin", "Did you mean plugin.rule?", 15},
		{"judge not a reference", refBase + strings.Replace(goodRef, "plugin.lexical", `"lexical"`, 1), "Invalid reference", "plugin.<name>", 16},
		{"unknown dataset", refBase + strings.Replace(goodRef, "dataset.shipped", "dataset.shiped", 1), "Reference to undeclared dataset", "Did you mean dataset.shipped?", 17},
		{"missing llm", refBase + strings.Replace(goodRef, "llm     = plugin.rule", "", 1), "Missing required argument", `"llm"`, 14},
		{"zero runs", setting("runs = 0"), "Invalid runs", "at least 1", 18},
		{"negative retries", setting("retries = -1"), "Invalid retries", "at least 0", 18},
		{"negative max_tokens", setting("max_tokens = -5"), "Invalid max_tokens", "", 18},
		{"fractional seed", setting("seed = 1.5"), "Invalid whole number", "1.5", 18},
		{"negative temperature", setting("temperature = -0.5"), "Invalid temperature", "negative", 18},
		{"unknown attribute", setting("temprature = 1"), "Unsupported argument", `Did you mean "temperature"?`, 18},
		{"duplicate reference", refBase + goodRef + goodRef, "Duplicate reference block", "", 20},
		{"out shared with an evaluation", setting(`out = "runs/default"`) + goodEval, "Shared output directory", `like reference "paper"`, 21},
		{"unknown evaluation reference", evalRef("reference.papr"), "Reference to undeclared reference", "Did you mean reference.paper?", 25},
		{"evaluation reference to a plugin", evalRef("plugin.rule"), "Invalid reference", "reference.<name>", 25},
		{"evaluation reference without blocks", refBase + strings.Replace(goodEval, "judge   = plugin.lexical", "judge   = plugin.lexical\n  reference = reference.paper", 1),
			"Reference to undeclared reference", `reference "paper" { ... }`, 19},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f, diags := parseIn(t, dir, tc.src, Options{})
			var found *hcl.Diagnostic
			for _, d := range diags {
				if d.Severity == hcl.DiagError && strings.Contains(d.Summary, tc.summary) && strings.Contains(d.Detail, tc.detail) {
					found = d
					break
				}
			}
			if found == nil {
				t.Fatalf("no error %q / %q among:\n%s\nsource:\n%s", tc.summary, tc.detail, diagText(f, diags), tc.src)
			}
			if found.Subject == nil || found.Subject.Start.Line != tc.line {
				t.Errorf("error at %v, want line %d:\n%s", found.Subject, tc.line, diagText(f, diags))
			}
		})
	}
}

// An evaluation shown beside a reference on another dataset is allowed, with a warning.
func TestReferenceOnAnotherDataset(t *testing.T) {
	src := refBase + `dataset "other" {
  scenarios = "scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms" }
  out       = "build/other"
}
` + strings.Replace(goodRef, "dataset.shipped", "dataset.other", 1) +
		strings.Replace(goodEval, "judge   = plugin.lexical", "judge   = plugin.lexical\n  reference = reference.paper", 1)
	f, diags := parseIn(t, t.TempDir(), src, Options{})
	if diags.HasErrors() {
		t.Fatalf("errors:\n%s", diagText(f, diags))
	}
	found := false
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning && d.Summary == "Reference on another dataset" && strings.Contains(d.Detail, `decides dataset "other"`) {
			found = true
		}
	}
	if !found || f.Evaluation("default").Reference != "paper" {
		t.Errorf("no warning, or reference lost:\n%s", diagText(f, diags))
	}
}
