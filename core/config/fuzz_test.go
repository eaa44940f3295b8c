package config

import (
	"path/filepath"
	"testing"
)

// FuzzParse: no input makes the parser panic or hang; errors come back as diagnostics.
func FuzzParse(f *testing.F) {
	// Seeds stay small: the HCL scanner is generated code that runs slowly under the fuzzer's
	// coverage instrumentation, and a 2 KB seed such as bench.hcl stalls the engine.
	// TestShippedRunFiles parses the shipped run files.
	for _, s := range []string{
		"plugin \"f\" {\n source = \"bin/f\"\n}\ndataset \"d\" {\n scenarios = \"s\"\n tts = plugin.f\n voices = { A = \"a\", B = \"b\", C = \"c\" }\n}\nevaluation \"e\" {\n dataset = dataset.d\n models = [plugin.f]\n asr = plugin.f\n judge = plugin.f\n}",
		"variable \"v\" {\n default = [1, {a = null}]\n}\nvariable \"w\" {\n default = 1\n}\nlocals {\n x = var.v[1].a\n y = local.x\n z = env(\"E\")\n}",
		"variable \"v\" {\n default = {a = 1}\n}\nvariable \"w\" {\n default = true\n}",
		"plugin \"p\" {\n command = [null]\n env = { a = null }\n}",
		"plugin \"p\" {\n source = \"a\"\n config {\n x = 1\n }\n}",
		"evaluation \"e\" {\n models = [plugin.a[0], dataset.b, plugin]\n protocol {\n n4_gap = 1e400\n min_eligible = 1e30\n }\n}",
		"dataset \"d\" {\n generate {\n pairs = -1e-400\n four_speaker_share = 0/0\n }\n voices = { A = null }\n}",
		"locals {\n a = coalesce(null)\n b = file(\"/dev/null\")\n c = format(\"%*d\")\n}",
		"reference \"r\" {\n llm = plugin.a\n judge = dataset.b\n runs = 1e30\n temperature = 0/0\n seed = -1.5\n out = null\n}\nevaluation \"e\" {\n reference = reference.r[0]\n}",
		"\x00\xff{{{",
	} {
		f.Add([]byte(s), "[1, {a = null}]")
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, src []byte, value string) {
		// value reaches variable v through --var and variable w through the environment.
		opts := Options{Vars: map[string]string{"v": value}, Env: map[string]string{"DUPLEXMPE_VAR_w": value, "E": value}}
		file, diags := Parse(src, filepath.Join(dir, "run.hcl"), opts)
		if file == nil {
			t.Fatal("nil File")
		}
		_ = diagText(file, diags) // printing never panics either
		for _, p := range file.Plugins {
			CheckPluginConfig(p, testSchema)
		}
	})
}
