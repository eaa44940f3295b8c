package config

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// parseIn writes nothing: it parses src as <dir>/run.hcl so relative paths resolve
// against dir.
func parseIn(t *testing.T, dir, src string, opts Options) (*File, hcl.Diagnostics) {
	t.Helper()
	return Parse([]byte(src), filepath.Join(dir, "run.hcl"), opts)
}

func mustParse(t *testing.T, dir, src string, opts Options) *File {
	t.Helper()
	f, diags := parseIn(t, dir, src, opts)
	if diags.HasErrors() {
		t.Fatalf("unexpected errors:\n%s", diagText(f, diags))
	}
	return f
}

func diagText(f *File, diags hcl.Diagnostics) string {
	var b strings.Builder
	_ = WriteDiagnostics(&b, f.Sources, diags, 0, false)
	return b.String()
}

// base declares the plugins and dataset that evaluation tests refer to.
const base = `
plugin "flite" { source = "bin/flite" }
plugin "silent" { source = "bin/silent" }
plugin "always_talk" { source = "bin/always-talk" }
plugin "sphinx" { source = "bin/sphinx" }
plugin "lexical" { source = "bin/lexical" }
dataset "shipped" {
  scenarios = "scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms" }
}
`

const goodEval = `
evaluation "default" {
  dataset = dataset.shipped
  models  = [plugin.silent, plugin.always_talk]
  asr     = plugin.sphinx
  judge   = plugin.lexical
}
`

func TestFullFile(t *testing.T) {
	dir := t.TempDir()
	src := `
variable "seed" {
  default     = 1
  description = "the seed"
}
locals {
  out  = "runs/${var.seed}"
  name = upper(local.short)
  short = "ab"
}
plugin "flite" {
  source        = "bin/plugins/flite"
  env           = { CUDA_VISIBLE_DEVICES = "0" }
  version       = "0.1.0"
  checksum      = "sha256:` + strings.Repeat("ab", 32) + `"
  start_timeout = "10m"
  config {
    voice_default = "kal16"
  }
}
plugin "py" {
  command  = ["bash", "run.sh"]
  dir      = "examples/plugin-python"
  checksum = "h1:CxEEFjTn4cxknAFbkv0ijuT4iyfSWI4y7FQVdhpKdek="
}
plugin "silent" { source = "/opt/silent" }
plugin "moshi" {
  reattach = env("MOSHI_REATTACH")
}
plugin "sphinx" { source = "bin/sphinx" }
plugin "lexical" { source = "bin/lexical" }
dataset "shipped" {
  scenarios = "examples/scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  preamble  = "default"
  out       = "build/datasets/shipped"
}
dataset "gen" {
  generate {
    generator          = "llm"
    llm                = plugin.py
    pairs              = 200
    seed               = 7
    four_speaker_share = 0.5
  }
  tts      = plugin.flite
  voices   = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  preamble = "preamble.txt"
}
evaluation "default" {
  dataset     = dataset.shipped
  models      = [plugin.silent, plugin.py, plugin.moshi]
  asr         = plugin.sphinx
  judge       = plugin.lexical
  concurrency = 4
  seed        = var.seed
  repeats     = 3
  out         = local.out
  protocol {
    t_onset_window = "6s"
    n4_gap         = 2.5
    min_eligible   = 10
  }
  vad {
    model       = "silero-v6"
    threshold   = 0.6
    min_speech  = "100ms"
    merge_pause = "1s"
  }
}
evaluation "second" {
  dataset = dataset.gen
  models  = [plugin.silent]
  asr     = plugin.sphinx
  judge   = plugin.lexical
}
`
	f := mustParse(t, dir, src, Options{Env: map[string]string{"MOSHI_REATTACH": `{"x":1}`}, Vars: map[string]string{"seed": "3"}})

	if f.Dir != dir {
		t.Errorf("Dir = %q, want %q", f.Dir, dir)
	}
	if got := []string{f.Plugins[0].Name, f.Plugins[1].Name, f.Plugins[2].Name}; !reflect.DeepEqual(got, []string{"flite", "py", "silent"}) {
		t.Errorf("plugin order = %v", got)
	}
	fl := f.Plugin("flite").Spec
	if fl.Source != filepath.Join(dir, "bin/plugins/flite") || fl.Env["CUDA_VISIBLE_DEVICES"] != "0" ||
		fl.Version != "0.1.0" || !strings.HasPrefix(fl.Checksum, "sha256:abab") || fl.Reattach != "" || fl.StartTimeout != 10*time.Minute {
		t.Errorf("flite spec = %+v", fl)
	}
	py := f.Plugin("py").Spec
	if !reflect.DeepEqual(py.Command, []string{"bash", "run.sh"}) || py.Dir != filepath.Join(dir, "examples/plugin-python") || py.Source != "" {
		t.Errorf("py spec = %+v", py)
	}
	if p := f.Plugin("flite"); p.WrittenSource != "bin/plugins/flite" || p.WrittenDir != "" {
		t.Errorf("flite as written: %q %q", p.WrittenSource, p.WrittenDir)
	}
	if p := f.Plugin("py"); p.WrittenDir != "examples/plugin-python" || f.Plugin("silent").WrittenSource != "/opt/silent" {
		t.Errorf("as written: %q %q", p.WrittenDir, f.Plugin("silent").WrittenSource)
	}
	if m := f.Plugin("moshi").Spec; m.Reattach != `{"x":1}` || m.Source != "" {
		t.Errorf("moshi spec = %+v", m)
	}
	if f.Plugin("silent").Spec.Source != "/opt/silent" {
		t.Errorf("absolute source changed: %q", f.Plugin("silent").Spec.Source)
	}
	if got := f.Plugin("flite").Uses; !reflect.DeepEqual(got, []string{"tts"}) {
		t.Errorf("flite uses = %v", got)
	}
	if got := f.Plugin("py").Uses; !reflect.DeepEqual(got, []string{"llm", "model"}) {
		t.Errorf("py uses = %v", got)
	}
	if f.Plugin("flite").ConfigRange.Start.Line != 17 {
		t.Errorf("config range = %v", f.Plugin("flite").ConfigRange)
	}
	if r := f.Plugin("flite").AttrRanges["checksum"]; r.Start.Line != 15 {
		t.Errorf("checksum range = %v", r)
	}

	ds := f.Dataset("shipped")
	if ds.Scenarios != filepath.Join(dir, "examples/scenarios") || ds.TTS != "flite" || ds.Voices["D"] != "slt" ||
		ds.Preamble != "default" || ds.Out != filepath.Join(dir, "build/datasets/shipped") || ds.Generate != nil {
		t.Errorf("shipped = %+v", ds)
	}
	if r := ds.AttrRanges["voices"]; r.Start.Line != 35 {
		t.Errorf("voices range = %v", r)
	}
	gen := f.Dataset("gen")
	want := &Generate{Generator: "llm", LLM: "py", Pairs: 200, Seed: 7, FourSpeakerShare: 0.5, DeclRange: gen.Generate.DeclRange}
	if !reflect.DeepEqual(gen.Generate, want) || gen.Preamble != filepath.Join(dir, "preamble.txt") ||
		gen.Out != filepath.Join(dir, "build/datasets/gen") || gen.Scenarios != "" {
		t.Errorf("gen = %+v %+v", gen, gen.Generate)
	}

	ev := f.Evaluation("default")
	if ev.Dataset != "shipped" || !reflect.DeepEqual(ev.Models, []string{"silent", "py", "moshi"}) || ev.ASR != "sphinx" ||
		ev.Judge != "lexical" || ev.Concurrency != 4 || ev.Seed != 3 || ev.Repeats != 3 || ev.Out != filepath.Join(dir, "runs/3") {
		t.Errorf("evaluation = %+v", ev)
	}
	wantP := protocol.Defaults()
	wantP.TOnsetWindow, wantP.N4Gap, wantP.MinEligible = 6, 2.5, 10
	if ev.Protocol != wantP {
		t.Errorf("protocol = %+v, want %+v", ev.Protocol, wantP)
	}
	wantV := protocol.DefaultVAD()
	wantV.Model, wantV.Threshold, wantV.MinSpeech, wantV.MergePause = protocol.SileroV6, 0.6, 0.1, 1
	if ev.VAD != wantV {
		t.Errorf("vad = %+v, want %+v", ev.VAD, wantV)
	}
	second := f.Evaluation("second")
	if second.Protocol != protocol.Defaults() || second.VAD != protocol.DefaultVAD() || second.Concurrency != 0 ||
		second.PlayConcurrency() != runtime.NumCPU() || ev.PlayConcurrency() != 4 ||
		second.Seed != 1 || second.Repeats != 1 || second.Out != filepath.Join(dir, "runs/second") {
		t.Errorf("defaults not applied: %+v", second)
	}
	if f.Locals["name"].AsString() != "AB" {
		t.Errorf("local.name = %v", f.Locals["name"])
	}
	if v := f.Variables[0]; v.Name != "seed" || v.Description != "the seed" || v.Source != "--var" {
		t.Errorf("variable = %+v", v)
	}
}

// TestErrors checks that each mistake is reported with the right summary at the right
// line of the right file.
func TestErrors(t *testing.T) {
	cases := []struct {
		name, src string
		opts      Options
		summary   string // substring of the error's summary
		detail    string // substring of its detail
		line      int
	}{
		{"syntax", "plugin \"x\" {\n  source = \n}", Options{}, "Invalid expression", "", 2},
		{"unknown top-level block", "\nrun \"x\" {}", Options{}, "Unsupported block type", "", 2},
		{"attribute typo", "plugin \"x\" {\n  sorce = \"a\"\n  command = [\"a\"]\n}", Options{}, "Unsupported argument", `Did you mean "source"?`, 2},
		{"block typo", "plugin \"x\" {\n  source = \"a\"\n  confg {}\n}", Options{}, "Unsupported block type", `Did you mean "config"?`, 3},
		{"duplicate plugin", "plugin \"x\" { source = \"a\" }\n\nplugin \"x\" { source = \"b\" }", Options{}, "Duplicate plugin block", "run.hcl:1", 3},
		{"duplicate dataset", base + "dataset \"shipped\" {\n}", Options{}, "Duplicate dataset block", "", 12},
		{"duplicate variable", "variable \"a\" { default = 1 }\nvariable \"a\" { default = 2 }", Options{}, "Duplicate variable block", "", 2},
		{"duplicate config block", "plugin \"x\" {\n  source = \"a\"\n  config {}\n  config {}\n}", Options{}, "Duplicate config block", "", 4},
		{"source and command", "plugin \"x\" {\n  source = \"a\"\n  command = [\"b\"]\n}", Options{}, "Conflicting plugin attributes", "", 3},
		{"neither source nor command", "plugin \"x\" {\n}", Options{}, "Missing plugin executable", "", 1},
		{"empty command", "plugin \"x\" {\n  command = []\n}", Options{}, "Empty command", "", 2},
		{"bad checksum", "plugin \"x\" {\n  source = \"a\"\n  checksum = \"md5:abc\"\n}", Options{}, "Invalid checksum", "sha256:", 3},
		{"short sha256", "plugin \"x\" {\n  source = \"a\"\n  checksum = \"sha256:abc\"\n}", Options{}, "Invalid checksum", "64", 3},
		{"h1 without dir", "plugin \"x\" {\n  source = \"a\"\n  checksum = \"h1:CxEEFjTn4cxknAFbkv0ijuT4iyfSWI4y7FQVdhpKdek=\"\n}", Options{}, "Invalid checksum", "no command and dir", 3},
		{"short h1", "plugin \"x\" {\n  command = [\"a\"]\n  dir = \".\"\n  checksum = \"h1:abc=\"\n}", Options{}, "Invalid checksum", "base64 of a SHA-256", 4},
		{"checksum with reattach", "plugin \"x\" {\n  source = \"a\"\n  reattach = \"{}\"\n  checksum = \"sha256:" + strings.Repeat("0", 64) + "\"\n}", Options{}, "Checksum with reattach", "", 4},
		{"reattach from unset env needs a source", "plugin \"x\" {\n  reattach = env(\"NOPE\")\n}", Options{}, "Missing plugin executable", "", 1},
		{"bad start_timeout", "plugin \"x\" {\n  source = \"a\"\n  start_timeout = \"10 minutes\"\n}", Options{}, "Invalid duration", "10 minutes", 3},
		{"negative start_timeout", "plugin \"x\" {\n  source = \"a\"\n  start_timeout = -1\n}", Options{}, "Invalid duration", "negative", 3},
		{"env not a map", "plugin \"x\" {\n  source = \"a\"\n  env = \"A=1\"\n}", Options{}, "Incorrect attribute value type", "env", 3},
		{"bad label", "plugin \"1x\" { source = \"a\" }", Options{}, "Invalid block name", "", 1},
		{"unknown tts", strings.Replace(base, "tts       = plugin.flite", "tts       = plugin.flit", 1), Options{}, "Reference to undeclared plugin", "Did you mean plugin.flite?", 9},
		{"tts not a reference", strings.Replace(base, "tts       = plugin.flite", "tts       = \"flite\"", 1), Options{}, "Invalid reference", "plugin.<name>", 9},
		{"tts references a dataset", strings.Replace(base, "tts       = plugin.flite", "tts       = dataset.shipped", 1), Options{}, "Invalid reference", "", 9},
		{"missing tts", strings.Replace(base, "tts       = plugin.flite", "", 1), Options{}, "Missing required argument", `"tts"`, 7},
		{"missing voice", strings.Replace(base, `C = "rms" `, "", 1), Options{}, "Missing voice", "speaker C", 10},
		{"unknown speaker", strings.Replace(base, `C = "rms"`, `C = "rms", E = "x"`, 1), Options{}, "Unknown speaker", `"E"`, 10},
		{"narrator is a speaker", strings.Replace(base, `tts       = plugin.flite`, "tts       = plugin.flite\n  narrator = \"awb\"", 1), Options{}, "Narrator is a speaker's voice", "speaker B", 10},
		{"loudness too high", strings.Replace(base, `tts       = plugin.flite`, "tts       = plugin.flite\n  loudness = -3", 1), Options{}, "Loudness out of range", "-3 LUFS", 10},
		{"scenarios and generate", strings.Replace(base, `scenarios = "scenarios"`, "scenarios = \"s\"\n  generate {\n generator = \"procedural\"\n pairs = 1\n}", 1), Options{}, "Conflicting dataset sources", "", 9},
		{"no dataset source", strings.Replace(base, `scenarios = "scenarios"`, "", 1), Options{}, "Missing dataset source", "", 7},
		{"unknown generator", strings.Replace(base, `scenarios = "scenarios"`, "generate {\n generator = \"procedurl\"\n pairs = 1\n}", 1), Options{}, "Unknown generator", `Did you mean "procedural"?`, 9},
		{"unknown room", strings.Replace(base, `tts       = plugin.flite`, "tts       = plugin.flite\n  room {\n    preset = \"livingroom\"\n  }", 1), Options{}, "Unknown room", `Did you mean "living-room"?`, 11},
		{"room without preset", strings.Replace(base, `tts       = plugin.flite`, "tts       = plugin.flite\n  room {\n  }", 1), Options{}, "Missing required argument", `"preset"`, 10},
		{"llm generator without llm", strings.Replace(base, `scenarios = "scenarios"`, "generate {\n generator = \"llm\"\n pairs = 1\n}", 1), Options{}, "Missing llm", "", 8},
		{"fractional pairs", strings.Replace(base, `scenarios = "scenarios"`, "generate {\n generator = \"procedural\"\n pairs = 1.5\n}", 1), Options{}, "Invalid whole number", "1.5", 10},
		{"zero pairs", strings.Replace(base, `scenarios = "scenarios"`, "generate {\n generator = \"procedural\"\n pairs = 0\n}", 1), Options{}, "Invalid pairs", "", 10},
		{"missing pairs", strings.Replace(base, `scenarios = "scenarios"`, "generate {\n generator = \"procedural\"\n}", 1), Options{}, "Missing required argument", `"pairs"`, 8},
		{"four speakers without D", strings.Replace(base, `scenarios = "scenarios"`, "generate {\n generator = \"procedural\"\n pairs = 1\n}", 1), Options{}, "Missing voice", "fourth speaker", 13},
		{"same evaluation out", base + strings.Replace(goodEval, "judge   = plugin.lexical", "judge   = plugin.lexical\n  out = \"r\"", 1) +
			strings.Replace(strings.Replace(goodEval, "judge   = plugin.lexical", "judge   = plugin.lexical\n  out = \"./r\"", 1), `"default"`, `"other"`, 1),
			Options{}, "Shared output directory", `evaluation "other" writes to`, 21},
		{"same dataset out", base + "dataset \"two\" {\n  scenarios = \"s\"\n  tts = plugin.flite\n  voices = { A = \"a\", B = \"b\", C = \"c\" }\n  out = \"build/datasets/shipped\"\n}\n",
			Options{}, "Shared output directory", `like dataset "shipped"`, 12},
		{"share above 1", strings.Replace(base, `scenarios = "scenarios"`, "generate {\n generator = \"procedural\"\n pairs = 1\n four_speaker_share = 2\n}", 1), Options{}, "Invalid four_speaker_share", "", 11},
		{"unknown dataset", base + "evaluation \"e\" {\n  dataset = dataset.shiped\n  models = [plugin.silent]\n  asr = plugin.sphinx\n  judge = plugin.lexical\n}", Options{}, "Reference to undeclared dataset", "Did you mean dataset.shipped?", 13},
		{"unknown model", base + strings.Replace(goodEval, "plugin.always_talk", "plugin.alwaystalk", 1), Options{}, "Reference to undeclared plugin", "Did you mean plugin.always_talk?", 15},
		{"no close plugin", base + strings.Replace(goodEval, "plugin.always_talk", "plugin.zzzzzzzz", 1), Options{}, "Reference to undeclared plugin", "Declared plugin blocks: always_talk, flite", 15},
		{"duplicate model", base + strings.Replace(goodEval, "plugin.always_talk", "plugin.silent", 1), Options{}, "Duplicate model", "", 15},
		{"models not a list", base + strings.Replace(goodEval, "[plugin.silent, plugin.always_talk]", "plugin.silent", 1), Options{}, "Invalid models", "", 15},
		{"empty models", base + strings.Replace(goodEval, "[plugin.silent, plugin.always_talk]", "[]", 1), Options{}, "No models", "", 15},
		{"missing judge", base + strings.Replace(goodEval, "judge   = plugin.lexical", "", 1), Options{}, "Missing required argument", `"judge"`, 13},
		{"negative concurrency", base + strings.Replace(goodEval, "judge   = plugin.lexical", "judge = plugin.lexical\n  concurrency = -1", 1), Options{}, "Invalid concurrency", "", 18},
		{"zero repeats", base + strings.Replace(goodEval, "judge   = plugin.lexical", "judge = plugin.lexical\n  repeats = 0", 1), Options{}, "Invalid repeats", "between 1 and 50", 18},
		{"too many repeats", base + strings.Replace(goodEval, "judge   = plugin.lexical", "judge = plugin.lexical\n  repeats = 500", 1), Options{}, "Invalid repeats", "repeats = 500", 18},
		{"bad protocol duration", base + strings.Replace(goodEval, "judge   = plugin.lexical", "judge = plugin.lexical\n  protocol {\n    n4_gap = \"3 s\"\n  }", 1), Options{}, "Invalid duration", "n4_gap", 19},
		{"negative protocol duration", base + strings.Replace(goodEval, "judge   = plugin.lexical", "judge = plugin.lexical\n  protocol {\n    turn_gap = \"-1s\"\n  }", 1), Options{}, "Invalid duration", "negative", 19},
		{"unknown protocol field", base + strings.Replace(goodEval, "judge   = plugin.lexical", "judge = plugin.lexical\n  protocol {\n    t_onset_windw = \"1s\"\n  }", 1), Options{}, "Unsupported argument", `Did you mean "t_onset_window"?`, 19},
		{"protocol validate", base + strings.Replace(goodEval, "judge   = plugin.lexical", "judge = plugin.lexical\n  protocol {\n    t_wait_cap = \"1s\"\n  }", 1), Options{}, "Invalid protocol settings", "t_wait_cap", 18},
		{"vad validate", base + strings.Replace(goodEval, "judge   = plugin.lexical", "judge = plugin.lexical\n  vad {\n    model = \"silero-v4\"\n  }", 1), Options{}, "Invalid vad settings", "silero-v5", 18},
		{"vad threshold type", base + strings.Replace(goodEval, "judge   = plugin.lexical", "judge = plugin.lexical\n  vad {\n    threshold = \"high\"\n  }", 1), Options{}, "Incorrect attribute value type", "threshold", 19},
		{"variable without value", "\nvariable \"seed\" {}", Options{}, "No value for variable", "DUPLEXMPE_VAR_seed", 2},
		{"undeclared --var", "variable \"seed\" { default = 1 }", Options{Vars: map[string]string{"sed": "2"}}, "Undeclared variable", `Did you mean "seed"?`, 0},
		{"--var not a number", "variable \"seed\" { default = 1 }", Options{Vars: map[string]string{"seed": "two"}}, "Invalid value for variable", "number is required", 1},
		{"env var not a bool", "variable \"fast\" { default = true }", Options{Env: map[string]string{"DUPLEXMPE_VAR_fast": "maybe"}}, "Invalid value for variable", "DUPLEXMPE_VAR_fast", 1},
		{"unknown variable reference", "plugin \"x\" {\n  source = var.nope\n}", Options{}, "Unsupported attribute", "nope", 2},
		{"unknown function", "locals {\n  a = lowr(\"A\")\n}", Options{}, "Call to unknown function", "lower", 2},
		{"local cycle", "locals {\n  a = local.b\n  b = local.a\n}", Options{}, "Circular local values", "", 2},
		{"duplicate local", "locals {\n  a = 1\n}\nlocals {\n  a = 2\n}", Options{}, "Duplicate local value", "", 5},
		{"null attribute", "plugin \"x\" {\n  source = null\n}", Options{}, "Missing value", "null", 2},
		{"file() missing", "locals {\n  a = file(\"nope.txt\")\n}", Options{}, "Error in function call", "nope.txt", 2},
		{"top-level attribute", "x = 1", Options{}, "Unsupported argument", "", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f, diags := parseIn(t, dir, tc.src, tc.opts)
			if !diags.HasErrors() {
				t.Fatalf("no error for:\n%s", tc.src)
			}
			var found *hcl.Diagnostic
			for _, d := range diags {
				if d.Severity == hcl.DiagError && strings.Contains(d.Summary, tc.summary) && strings.Contains(d.Detail, tc.detail) {
					found = d
					break
				}
			}
			if found == nil {
				t.Fatalf("no error %q / %q among:\n%s", tc.summary, tc.detail, diagText(f, diags))
			}
			if tc.line == 0 {
				if found.Subject != nil {
					t.Errorf("expected no source range, got %v", found.Subject)
				}
				return
			}
			if found.Subject == nil || found.Subject.Filename != filepath.Join(dir, "run.hcl") || found.Subject.Start.Line != tc.line {
				t.Errorf("error at %v, want line %d:\n%s", found.Subject, tc.line, diagText(f, diags))
			}
		})
	}
}

// Printed diagnostics name the file and line and show the offending source line.
func TestDiagnosticText(t *testing.T) {
	dir := t.TempDir()
	f, diags := parseIn(t, dir, "plugin \"x\" {\n  source = \"a\"\n  versoin = \"1\"\n}\n", Options{})
	text := diagText(f, diags)
	for _, want := range []string{"Error: Unsupported argument", "on " + filepath.Join(dir, "run.hcl") + " line 3", `versoin = "1"`, `Did you mean "version"?`} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\x1b[") {
		t.Errorf("colour codes without a terminal:\n%s", text)
	}
}

func TestWarnings(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plug"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A missing executable or scenario directory is a warning (it may be built later);
	// a plugin nobody uses too.
	f, diags := parseIn(t, dir, `
plugin "a" { source = "missing" }
plugin "b" { source = "plug" }
plugin "c" { source = "plug" }
dataset "d" {
  scenarios = "nowhere"
  tts       = plugin.a
  voices    = { A = "a", B = "b", C = "c" }
}
evaluation "e" {
  dataset = dataset.d
  models  = [plugin.b]
  asr     = plugin.b
  judge   = plugin.b
}
`, Options{})
	if diags.HasErrors() {
		t.Fatalf("errors:\n%s", diagText(f, diags))
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.Summary+"@"+strconv.Itoa(d.Subject.Start.Line))
	}
	want := []string{"Missing plugin executable@2", "Missing scenario directory@6", "Unused plugin@4"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings = %v, want %v", got, want)
	}
	if uses := f.Plugin("b").Uses; !reflect.DeepEqual(uses, []string{"model", "asr", "judge"}) {
		t.Errorf("uses = %v", uses)
	}
	if r := f.Plugin("b").UseRanges; r["model"].Start.Line != 12 || r["asr"].Start.Line != 13 || r["judge"].Start.Line != 14 {
		t.Errorf("use ranges = %v", r)
	}
	// A source that is a directory is an error.
	_, diags = parseIn(t, dir, `plugin "a" { source = "." }`, Options{})
	if !diags.HasErrors() || diags[0].Summary != "Not a file" {
		t.Errorf("source directory: %v", diags)
	}
}

func TestVariables(t *testing.T) {
	src := `
variable "seed" {
  default = 1
}
variable "name" {
  default = "x"
}
variable "fast" {
  default = false
}
variable "voices" {
  default = ["a", "b"]
}
variable "required" {}
locals {
  all = format("%s-%d-%t-%s-%s", var.name, var.seed, var.fast, join("+", var.voices), var.required)
}
`
	cases := []struct {
		name string
		opts Options
		want string
		src  map[string]string
	}{
		{"defaults and env", Options{Env: map[string]string{"DUPLEXMPE_VAR_required": "r"}}, "x-1-false-a+b-r",
			map[string]string{"seed": "default", "required": "DUPLEXMPE_VAR_required"}},
		{"--var wins over env", Options{Vars: map[string]string{"seed": "2", "required": "v", "fast": "true", "voices": `["c"]`},
			Env: map[string]string{"DUPLEXMPE_VAR_seed": "3", "DUPLEXMPE_VAR_required": "e", "DUPLEXMPE_VAR_name": "env"}},
			"env-2-true-c-v", map[string]string{"seed": "--var", "name": "DUPLEXMPE_VAR_name", "voices": "--var"}},
		{"string stays a string", Options{Vars: map[string]string{"name": "007", "required": " spaced "}}, "007-1-false-a+b- spaced ", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := mustParse(t, t.TempDir(), src, tc.opts)
			if got := f.Locals["all"].AsString(); got != tc.want {
				t.Errorf("local.all = %q, want %q", got, tc.want)
			}
			for _, v := range f.Variables {
				if want, ok := tc.src[v.Name]; ok && v.Source != want {
					t.Errorf("var.%s from %q, want %q", v.Name, v.Source, want)
				}
			}
		})
	}
	// A list variable given something that is not a list.
	_, diags := parseIn(t, t.TempDir(), src, Options{Vars: map[string]string{"required": "r", "voices": `{`}})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "voices") {
		t.Errorf("bad list value: %v", diags)
	}
	// A failed variable is reported once, not again at every use.
	_, diags = parseIn(t, t.TempDir(), src, Options{Vars: map[string]string{"seed": "x", "required": "r"}})
	if len(diags.Errs()) != 1 {
		t.Errorf("want exactly one error, got %v", diags)
	}
}

func TestFunctions(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prompt.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin.dat"), []byte{0xff, 0xfe}, 0o644); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	cases := []struct {
		expr string
		want cty.Value
	}{
		{`env("HOME_X")`, cty.StringVal("/home/x")},
		{`env("UNSET")`, cty.StringVal("")},
		{`file("prompt.txt")`, cty.StringVal("hello\n")},
		{`file("${path.root}/prompt.txt")`, cty.StringVal("hello\n")},
		{`abspath("a/b")`, cty.StringVal(filepath.Join(dir, "a/b"))},
		{`abspath("/x/../y")`, cty.StringVal("/y")},
		{`basename("a/b/c.wav")`, cty.StringVal("c.wav")},
		{`dirname("a/b/c.wav")`, cty.StringVal("a/b")},
		{`join(",", ["a", "b"])`, cty.StringVal("a,b")},
		{`format("%s-%03d", "run", 7)`, cty.StringVal("run-007")},
		{`lower("AbC")`, cty.StringVal("abc")},
		{`upper("AbC")`, cty.StringVal("ABC")},
		{`concat(["a"], ["b", "c"])`, cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b"), cty.StringVal("c")})},
		{`merge({a = "1", b = "2"}, {b = "3"})`, cty.ObjectVal(map[string]cty.Value{"a": cty.StringVal("1"), "b": cty.StringVal("3")})},
		{`coalesce("", "x", "y")`, cty.StringVal("x")},
		{`coalesce(env("UNSET"), "dflt")`, cty.StringVal("dflt")},
		{`tostring(5)`, cty.StringVal("5")},
		{`tonumber("2.5")`, cty.NumberFloatVal(2.5)},
		{`path.root`, cty.StringVal(dir)},
		{`path.cwd`, cty.StringVal(cwd)},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			f := mustParse(t, dir, "locals {\n  x = "+tc.expr+"\n}\n", Options{Cwd: cwd, Env: map[string]string{"HOME_X": "/home/x"}})
			if got := f.Locals["x"]; !got.RawEquals(tc.want) {
				t.Errorf("%s = %#v, want %#v", tc.expr, got, tc.want)
			}
		})
	}
	for _, bad := range []string{`file("bin.dat")`, `file(".")`, `file("/dev/zero")`, `tonumber("x")`, `coalesce("", "")`, `format("%d", "x")`} {
		if _, diags := parseIn(t, dir, "locals {\n  x = "+bad+"\n}\n", Options{}); !diags.HasErrors() {
			t.Errorf("%s: no error", bad)
		} else if diags[0].Subject == nil || diags[0].Subject.Start.Line != 2 {
			t.Errorf("%s: error at %v", bad, diags[0].Subject)
		}
	}
	// path.cwd defaults to the run file's directory.
	f := mustParse(t, dir, "locals {\n  x = path.cwd\n}\n", Options{})
	if f.Locals["x"].AsString() != dir {
		t.Errorf("default path.cwd = %v", f.Locals["x"])
	}
	// Every documented function exists and every function is documented.
	var documented []string
	for _, fd := range FunctionDocs {
		documented = append(documented, strings.SplitN(fd.Signature, "(", 2)[0])
	}
	sort.Strings(documented)
	if got := functionNames(); !reflect.DeepEqual(got, documented) {
		t.Errorf("functions %v, documented %v", got, documented)
	}
}

func TestDurations(t *testing.T) {
	cases := []struct {
		value string
		want  float64
	}{
		{`"800ms"`, 0.8}, {`"2s"`, 2}, {`"1m30s"`, 90}, {`3`, 3}, {`0.25`, 0.25}, {`"0s"`, 0}, {`" 2s "`, 2},
	}
	for _, tc := range cases {
		f := mustParse(t, t.TempDir(), base+strings.Replace(goodEval, "judge   = plugin.lexical", "judge = plugin.lexical\n protocol {\n n4_gap = "+tc.value+"\n}", 1), Options{})
		if got := f.Evaluations[0].Protocol.N4Gap; got != tc.want {
			t.Errorf("n4_gap = %s: got %v, want %v", tc.value, got, tc.want)
		}
	}
	for _, bad := range []string{`"2"`, `"fast"`, `true`, `["1s"]`, `"-2s"`, `-0.5`, `1e300`} {
		_, diags := parseIn(t, t.TempDir(), base+strings.Replace(goodEval, "judge   = plugin.lexical", "judge = plugin.lexical\n protocol {\n n4_gap = "+bad+"\n}", 1), Options{})
		if !diags.HasErrors() {
			t.Errorf("n4_gap = %s: no error", bad)
		}
	}
}

// The spec covers every field of protocol.Params and protocol.VAD, so any of them can be
// set from a run file.
func TestSpecCoversSettings(t *testing.T) {
	for block, v := range map[string]any{"protocol": protocol.Params{}, "vad": protocol.VAD{}} {
		spec := Spec.Block("evaluation").Block(block)
		typ := reflect.TypeOf(v)
		for i := 0; i < typ.NumField(); i++ {
			name := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
			if spec.Attr(name) == nil {
				t.Errorf("%s block has no attribute for field %s (json %q)", block, typ.Field(i).Name, name)
			}
		}
		if len(spec.Attrs) != typ.NumField() {
			t.Errorf("%s block has %d attributes for %d fields", block, len(spec.Attrs), typ.NumField())
		}
	}
	if got := Spec.Block("evaluation").Block("protocol").Attr("t_onset_window").Default; got != `"5s"` {
		t.Errorf("t_onset_window default shown as %s", got)
	}
	if got := Spec.Block("evaluation").Block("vad").Attr("min_speech").Default; got != `"120ms"` {
		t.Errorf("min_speech default shown as %s", got)
	}
}

func TestLoadFromDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.hcl")
	if err := os.WriteFile(path, []byte("plugin \"x\" {\n  source = \"a\"\n  nope = 1\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, diags := Load(path, Options{})
	if !diags.HasErrors() || diags[0].Subject.Start.Line != 3 || f.Sources[path] == nil {
		t.Fatalf("Load: %v (sources %v)", diags, f.Sources)
	}
	for _, bad := range []string{filepath.Join(dir, "missing.hcl"), dir} {
		f, diags = Load(bad, Options{})
		if !diags.HasErrors() || f == nil || !strings.Contains(diags.Error(), bad) {
			t.Errorf("Load(%s): %v", bad, diags)
		}
	}
	f = mustParse(t, dir, "variable \"v\" { default = 1 }\n", Options{})
	if f.LockPath() != filepath.Join(dir, strings.TrimSuffix(filepath.Base(f.Path), ".hcl")+".lock.hcl") || f.LegacyLockPath() != filepath.Join(dir, ".duplexmpe.lock.hcl") {
		t.Errorf("LockPath = %q", f.LockPath())
	}
}

// Every attribute in Spec is really decoded: given a value of no attribute type ([[]]),
// each one is reported at its own line. An attribute the schema accepts but no decoder
// reads would pass silently.
func TestEverySpecAttributeIsDecoded(t *testing.T) {
	for _, top := range Spec.Blocks {
		var cases []struct{ block, nested, attr string }
		for _, a := range top.Attrs {
			cases = append(cases, struct{ block, nested, attr string }{top.Type, "", a.Name})
		}
		for _, nb := range top.Blocks {
			for _, a := range nb.Attrs {
				cases = append(cases, struct{ block, nested, attr string }{top.Type, nb.Type, a.Name})
			}
		}
		for _, c := range cases {
			if a := Spec.Block(c.block).Attr(c.attr); c.nested == "" && a.Type == TypeAny {
				continue
			}
			header := c.block
			if len(Spec.Block(c.block).Labels) > 0 {
				header += ` "x"`
			}
			src := header + " {\n"
			line := 2
			if c.nested != "" {
				src += "  " + c.nested + " {\n"
				line = 3
			}
			src += "    " + c.attr + " = [[]]\n"
			if c.nested != "" {
				src += "  }\n"
			}
			src += "}\n"
			_, diags := parseIn(t, t.TempDir(), src, Options{})
			found := false
			for _, d := range diags {
				if d.Severity == hcl.DiagError && d.Subject != nil && d.Subject.Start.Line == line && d.Subject.Start.Column > len(c.attr)+4 {
					found = true
				}
			}
			if !found {
				t.Errorf("%s > %s > %s = [[]] is not reported at its value:\n%s\n%v", c.block, c.nested, c.attr, src, diags)
			}
		}
	}
}

// Section 6.3: a model plugin's role; only models take one.
func TestModelRoles(t *testing.T) {
	dir := t.TempDir()
	src := strings.Replace(base, `plugin "silent" { source = "bin/silent" }`, `plugin "silent" {
  source = "bin/silent"
  role   = "baseline"
}`, 1) + goodEval
	f := mustParse(t, dir, src, Options{})
	if got, want := f.ModelRoles(f.Evaluations[0]), map[string]string{"silent": protocol.RoleBaseline, "always_talk": protocol.RoleTest}; !reflect.DeepEqual(got, want) {
		t.Errorf("roles %v, want %v", got, want)
	}
	for _, c := range []struct{ name, src, summary, detail string }{
		{"unknown role", strings.Replace(src, `role   = "baseline"`, `role   = "control"`, 1), "Invalid role", `"test" (under test, the default), "baseline", "reference", "calibration"`},
		{"role of a judge", strings.Replace(src, `plugin "lexical" { source = "bin/lexical" }`, "plugin \"lexical\" {\n  source = \"bin/lexical\"\n  role = \"reference\"\n}", 1), "Role of a plugin that is not a model", "used as judge"},
	} {
		f, diags := parseIn(t, dir, c.src, Options{})
		if text := diagText(f, diags); !diags.HasErrors() || !strings.Contains(text, c.summary) || !strings.Contains(text, c.detail) {
			t.Errorf("%s: %s, want %q with %q", c.name, text, c.summary, c.detail)
		}
	}
}

// Section 3.6 and 4.2: timing_control is a protocol setting (off by default), and a
// speech_pad above 0 warns that the VAD is no longer causal.
func TestTimingControlAndSpeechPadWarning(t *testing.T) {
	dir := t.TempDir()
	f := mustParse(t, dir, base+goodEval, Options{})
	if f.Evaluations[0].Protocol.TimingControl {
		t.Error("timing_control is on by default")
	}
	src := base + strings.Replace(goodEval, "  judge   = plugin.lexical\n", "  judge   = plugin.lexical\n  protocol {\n    timing_control = true\n  }\n  vad {\n    speech_pad = \"30ms\"\n  }\n", 1)
	f, diags := parseIn(t, dir, src, Options{})
	if diags.HasErrors() {
		t.Fatal(diagText(f, diags))
	}
	if !f.Evaluations[0].Protocol.TimingControl || f.Evaluations[0].VAD.SpeechPad != 0.03 {
		t.Errorf("protocol %+v vad %+v", f.Evaluations[0].Protocol, f.Evaluations[0].VAD)
	}
	var warned bool
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning && d.Summary == "speech_pad makes the VAD non-causal" && d.Subject.Start.Line == 21 {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no speech_pad warning on the vad block (line 21): %s", diagText(f, diags))
	}
}

// The narrator and the loudness target reach the dataset block.
func TestNarratorAndLoudness(t *testing.T) {
	src := strings.Replace(base, `tts       = plugin.flite`, "tts       = plugin.flite\n  narrator  = \"slt\"\n  loudness  = -20", 1)
	f, diags := parseIn(t, t.TempDir(), src, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if ds := f.Dataset("shipped"); ds.Narrator != "slt" || ds.Loudness != -20 {
		t.Fatalf("narrator %q, loudness %g", ds.Narrator, ds.Loudness)
	}
	f, _ = parseIn(t, t.TempDir(), base, Options{})
	if ds := f.Dataset("shipped"); ds.Narrator != "" || ds.Loudness != 0 {
		t.Fatalf("defaults: narrator %q, loudness %g", ds.Narrator, ds.Loudness)
	}
}

// Issue 23: a command plugin whose dir holds the run file is not hashed with the run
// file, its lock files or the outputs the run file declares there; an output that is
// the plugin's dir itself is refused at its dir.
func TestPluginHashSkipsTheRunsFiles(t *testing.T) {
	dir := t.TempDir()
	src := base + `
plugin "mine" {
  command = ["python3", "plugin.py"]
  dir     = "."
}
plugin "other" {
  command = ["python3", "plugin.py"]
  dir     = "elsewhere"
}
variable "out" { default = "runs/e" }
` + strings.NewReplacer("plugin.silent, plugin.always_talk", "plugin.mine, plugin.other",
		"plugin.lexical\n", "plugin.lexical\n  out     = var.out\n").Replace(goodEval)
	f := mustParse(t, dir, src, Options{})
	want := []string{"run.hcl", "run.lock.hcl", LegacyLockFileName, "build/datasets/shipped", "runs/e"}
	if got := f.Plugin("mine").Spec.HashSkip; !reflect.DeepEqual(got, want) {
		t.Errorf("mine skips %q, want %q", got, want)
	}
	if got := f.Plugin("other").Spec.HashSkip; got != nil {
		t.Errorf("a plugin dir beside the run file skips %q", got)
	}
	if got := f.Plugin("flite").Spec.HashSkip; got != nil {
		t.Errorf("a source plugin skips %q", got)
	}

	f, diags := parseIn(t, dir, src, Options{Vars: map[string]string{"out": "."}})
	text := diagText(f, diags)
	if !diags.HasErrors() || !strings.Contains(text, "Output in a plugin's dir") || !strings.Contains(text, `evaluation "default" writes to `+dir) ||
		!strings.Contains(text, `plugin "mine"`) || !strings.Contains(text, "run.hcl line 15") {
		t.Errorf("out = the plugin's dir: want an error at its dir naming both\n%s", text)
	}
}

// For a command about to start the plugins (validate, run), a scenarios directory that
// does not exist is an error unless another dataset of the file builds it (issue 30);
// for the others it stays a warning.
func TestMissingScenarioDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plug"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := func(scenarios string) string {
		return `
plugin "b" { source = "plug" }
dataset "gen" {
  generate {
    generator = "procedural"
    pairs     = 2
  }
  tts    = plugin.b
  voices = { A = "a", B = "b", C = "c", D = "d" }
  out    = "built/gen"
}
dataset "d" {
  scenarios = "` + scenarios + `"
  tts       = plugin.b
  voices    = { A = "a", B = "b", C = "c" }
}
evaluation "e" {
  dataset = dataset.d
  models  = [plugin.b]
  asr     = plugin.b
  judge   = plugin.b
}
evaluation "g" {
  dataset = dataset.gen
  models  = [plugin.b]
  asr     = plugin.b
  judge   = plugin.b
}
`
	}
	summaries := func(diags hcl.Diagnostics, sev hcl.DiagnosticSeverity) []string {
		var out []string
		for _, d := range diags {
			if d.Severity == sev {
				out = append(out, d.Summary)
			}
		}
		return out
	}
	_, diags := parseIn(t, dir, src("nowhere"), Options{PluginsMustExist: true})
	if got := summaries(diags, hcl.DiagError); !reflect.DeepEqual(got, []string{"Missing scenario directory"}) {
		t.Errorf("to start: errors %v; want the missing scenario directory", got)
	}
	_, diags = parseIn(t, dir, src("nowhere"), Options{})
	if got := summaries(diags, hcl.DiagWarning); diags.HasErrors() || !reflect.DeepEqual(got, []string{"Missing scenario directory"}) {
		t.Errorf("not to start: warnings %v, errors %v; want a warning", got, diags.Errs())
	}
	_, diags = parseIn(t, dir, src("built/gen"), Options{PluginsMustExist: true})
	if diags.HasErrors() || len(summaries(diags, hcl.DiagWarning)) != 0 {
		t.Errorf("a directory another dataset builds: %v", diags)
	}
}

// A room block names a preset, a seed and a clean set to reuse, resolved against the
// run file's directory.
func TestDatasetRoom(t *testing.T) {
	dir := t.TempDir()
	src := strings.Replace(base, `tts       = plugin.flite`, "tts       = plugin.flite\n  room {\n    preset = \"kitchen\"\n    seed = 4\n    reuse = \"build/clean\"\n  }", 1)
	f := mustParse(t, dir, src, Options{})
	r := f.Datasets[0].Room
	if r == nil || r.Preset != "kitchen" || r.Seed != 4 || r.Reuse != filepath.Join(dir, "build/clean") {
		t.Fatalf("room %+v", r)
	}
	if f := mustParse(t, dir, base, Options{}); f.Datasets[0].Room != nil {
		t.Fatal("a dataset without a room block has a room")
	}
}

// A dataset's acoustics: clean without a room block or with preset "clean", the preset
// otherwise, and an error naming the dataset for a preset no room is called.
func TestDatasetAcoustics(t *testing.T) {
	for _, r := range []*Room{nil, {Preset: "clean", Reuse: "/elsewhere"}} {
		if _, ok, err := (&Dataset{Name: "d", Room: r}).Acoustics(); ok || err != nil {
			t.Errorf("room %+v: in a room %v, error %v; want clean", r, ok, err)
		}
	}
	if p, ok, err := (&Dataset{Name: "d", Room: &Room{Preset: "kitchen"}}).Acoustics(); !ok || err != nil || p.Name != "kitchen" {
		t.Errorf("kitchen: %+v %v %v", p, ok, err)
	}
	if _, _, err := (&Dataset{Name: "d", Room: &Room{Preset: "attic"}}).Acoustics(); err == nil || !strings.Contains(err.Error(), `"attic"`) || !strings.Contains(err.Error(), `"d"`) {
		t.Errorf("an unknown preset: error %v", err)
	}
}
