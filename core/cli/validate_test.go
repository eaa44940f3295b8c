package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/tools/clitest"
)

// runInDir runs a command line with dir as the working directory and env as the whole
// environment.
func runInDir(t *testing.T, dir string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(&State{
		Args: args, Env: env,
		Stdin:  strings.NewReader(""),
		Stdout: &out, Stderr: &errb,
		Getwd: func() (string, error) { return dir, nil },
	})
	return code, out.String(), errb.String()
}

const validRun = `variable "seed" {
  default = 1
}

plugin "flite" {
  source = "bin/flite"
}

plugin "silent" {
  source = "bin/silent"
}

dataset "d" {
  scenarios = "scenarios"
  tts       = plugin.flite
  voices    = { A = "a", B = "b", C = "c" }
}

evaluation "e" {
  dataset = dataset.d
  models  = [plugin.silent]
  asr     = plugin.silent
  judge   = plugin.silent
  seed    = var.seed
}
`

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	clitest.WriteFile(t, filepath.Join(dir, "runs", "good.hcl"), validRun)
	clitest.WriteFile(t, filepath.Join(dir, "runs", "bin", "flite"), "")
	clitest.WriteFile(t, filepath.Join(dir, "runs", "bin", "silent"), "")
	clitest.WriteFile(t, filepath.Join(dir, "runs", "scenarios", "x.json"), "")
	// A typo in an attribute name: the error names the file (as given) and the line.
	clitest.WriteFile(t, filepath.Join(dir, "runs", "typo.hcl"), strings.Replace(validRun, "tts       = plugin.flite", "ttts      = plugin.flite", 1))
	clitest.WriteFile(t, filepath.Join(dir, "runs", "badvar.hcl"), strings.Replace(validRun, "default = 1", "default = true", 1))

	cases := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stdout string
		stderr []string // substrings, in order
	}{
		// The plugins here are empty files: --no-start leaves out the check that starts them
		// (configcheck_test.go).
		{"good file", []string{"validate", "--no-start", "runs/good.hcl"}, nil, ExitOK,
			"runs/good.hcl: ok (1 variable, 2 plugins, 1 dataset, 1 evaluation)\n", nil},
		{"good file, absolute path", []string{"validate", "--no-start", filepath.Join(dir, "runs/good.hcl")}, nil, ExitOK, "ok", nil},
		{"--var", []string{"validate", "--no-start", "runs/good.hcl", "--var", "seed=2"}, nil, ExitOK, "ok", nil},
		{"typo", []string{"validate", "runs/typo.hcl"}, nil, ExitDeterministic, "",
			[]string{"Error: Unsupported argument", "on runs/typo.hcl line 15, in dataset \"d\":", "15:   ttts      = plugin.flite", `Did you mean "tts"?`}},
		{"--var of the wrong type", []string{"validate", "runs/good.hcl", "--var", "seed=two"}, nil, ExitDeterministic, "",
			[]string{"Error: Invalid value for variable", "on runs/good.hcl line 1", "a number is required"}},
		{"env var of the wrong type", []string{"validate", "runs/badvar.hcl"}, map[string]string{"DUPLEXMPE_VAR_seed": "2"}, ExitDeterministic, "",
			[]string{"DUPLEXMPE_VAR_seed gives variable \"seed\" the value \"2\": a bool is required"}},
		{"undeclared --var", []string{"validate", "runs/good.hcl", "--var", "sed=2"}, nil, ExitDeterministic, "",
			[]string{"Error: Undeclared variable", `Did you mean "seed"?`}},
		{"missing file", []string{"validate", "runs/nope.hcl"}, nil, ExitDeterministic, "", []string{"nope.hcl"}},
		{"no file", []string{"validate"}, nil, ExitUsage, "", []string{"expects one run file"}},
		{"two files", []string{"validate", "a.hcl", "b.hcl"}, nil, ExitUsage, "", []string{"expects one run file"}},
		{"bad --var", []string{"validate", "runs/good.hcl", "--var", "seed"}, nil, ExitUsage, "", []string{"write --var name=value"}},
		{"unknown flag", []string{"validate", "runs/good.hcl", "--vars", "x=1"}, nil, ExitUsage, "", []string{"unknown flag"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runInDir(t, dir, tc.env, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.stdout) {
				t.Errorf("stdout %q lacks %q", stdout, tc.stdout)
			}
			rest := stderr
			for _, want := range tc.stderr {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("stderr lacks %q (in order):\n%s", want, stderr)
				}
				rest = rest[i+len(want):]
			}
			if strings.Contains(stderr, "\x1b[") {
				t.Errorf("colour codes in a test:\n%s", stderr)
			}
		})
	}
}

// A missing scenario directory that no dataset of the file builds is an error (issue 30:
// it was a warning, and run exited 1, "retry", after starting); a plugin
// executable that does not exist is an error, exit 3, naming the plugin and the run
// file's line, printed once: validate exited 0 with the warning printed twice, and run
// failed only after printing the whole plan, with a bare "open ...: no such file".
func TestValidateMissingPlugin(t *testing.T) {
	dir := t.TempDir()
	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), validRun)
	clitest.WriteFile(t, filepath.Join(dir, "bin", "flite"), "")
	code, stdout, stderr := runInDir(t, dir, nil, "validate", "run.hcl")
	if code != ExitDeterministic || strings.Contains(stdout, "ok") {
		t.Fatalf("validate: exit %d, want 3: %s %s", code, stdout, stderr)
	}
	for _, want := range []string{"Error: Missing plugin executable", "on run.hcl line 10", `Plugin "silent": its executable ` + filepath.Join(dir, "bin", "silent") + " does not exist", "make build", "Error: Missing scenario directory", "no dataset of this file builds it"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("validate: stderr lacks %q:\n%s", want, stderr)
		}
	}
	if n := strings.Count(stderr, "Missing plugin executable"); n != 1 {
		t.Errorf("validate printed the missing executable %d times:\n%s", n, stderr)
	}

	// run stops at the same message, before it plans, builds or starts anything.
	code, stdout, runErr := runInDir(t, dir, nil, "run", "run.hcl")
	if code != ExitDeterministic || stdout != "" {
		t.Errorf("run: exit %d, want 3 and nothing on stdout (no plan):\n%s", code, stdout)
	}
	if !strings.Contains(runErr, `Plugin "silent": its executable`) || !strings.Contains(runErr, "on run.hcl line 10") || strings.Contains(runErr, "open ") {
		t.Errorf("run: stderr does not name the plugin and line as validate does:\n%s", runErr)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); err == nil {
		t.Error("run wrote a run directory before refusing the run file")
	}
}

// The shipped run files validate.
func TestValidateShipped(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// validate needs the plugins built (make build, which make test runs first); without
	// them it must say so, and nothing else.
	_, built := os.Stat(filepath.Join(root, "bin", "plugins", "silent"))
	for _, f := range []string{"bench.hcl", "examples/runs/minimal.hcl", "examples/runs/pinned.hcl"} {
		code, _, stderr := runInDir(t, root, nil, "validate", "--no-start", f) // the run-file checks; configcheck_test.go starts plugins
		if built == nil {
			if code != ExitOK {
				t.Errorf("%s: exit %d\n%s", f, code, stderr)
			}
			continue
		}
		_, diags := config.Load(filepath.Join(root, f), config.Options{Cwd: root})
		if diags.HasErrors() || code != ExitDeterministic || !strings.Contains(stderr, "make build") {
			t.Errorf("%s without make build: exit %d, load errors %v\n%s", f, code, diags.Errs(), stderr)
		}
	}
}

// `validate --help`, `dataset validate --help` and docs/run-files.md said exit 1 for a
// bad run file or dataset; the binary exits 3. Each states the code the binary returns.
func TestValidateHelpAndDocsSayTheExitCode(t *testing.T) {
	dir := t.TempDir()
	clitest.WriteFile(t, filepath.Join(dir, "bad.hcl"), "plugin \"x\" {\n  sorce = \"y\"\n}\n")
	clitest.WriteFile(t, filepath.Join(dir, "bad.jsonl"), `{"scenario_id":"x-explicit","pair_id":"x","condition":"explicit","t_position":"middle","speakers":["A","B","C"],"turns":[{"speaker":"A","text":"Hi.","label":"N9"}]}`+"\n")
	runCode, _, _ := runInDir(t, dir, nil, "validate", "bad.hcl")
	dsCode, _, _ := runInDir(t, dir, nil, "dataset", "validate", "bad.jsonl")
	if runCode != ExitDeterministic || dsCode != ExitDeterministic {
		t.Fatalf("validate: exit %d, dataset validate: exit %d; want 3 (README, docs/scale.md)", runCode, dsCode)
	}
	said := func(text, pattern string) string {
		t.Helper()
		m := regexp.MustCompile(pattern).FindStringSubmatch(strings.Join(strings.Fields(text), " "))
		if m == nil {
			t.Fatalf("%q not found in:\n%s", pattern, text)
		}
		return m[1]
	}
	_, help, _ := runInDir(t, dir, nil, "validate", "--help")
	if got := said(help, `Exit 0 when it is good, (\d) with the problems`); got != strconv.Itoa(runCode) {
		t.Errorf("validate --help says exit %s for problems; the binary exits %d", got, runCode)
	}
	_, help, _ = runInDir(t, dir, nil, "dataset", "validate", "--help")
	if got := said(help, `exit (\d) on any violation`); got != strconv.Itoa(dsCode) {
		t.Errorf("dataset validate --help says exit %s; the binary exits %d", got, dsCode)
	}
	doc, err := os.ReadFile("../../docs/run-files.md")
	if err != nil {
		t.Fatal(err)
	}
	if got := said(string(doc), "`duplexmpe validate FILE.hcl[^|]*\\|[^|]*\\| 0 good, (\\d) problems"); got != strconv.Itoa(runCode) {
		t.Errorf("docs/run-files.md says validate exits %s on problems; the binary exits %d", got, runCode)
	}
}
