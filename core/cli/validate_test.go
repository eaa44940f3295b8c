package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/internal/clitest"
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
		{"good file", []string{"validate", "runs/good.hcl"}, nil, ExitOK,
			"runs/good.hcl: ok (1 variable, 2 plugins, 1 dataset, 1 evaluation)\n", nil},
		{"good file, absolute path", []string{"validate", filepath.Join(dir, "runs/good.hcl")}, nil, ExitOK, "ok", nil},
		{"--var", []string{"validate", "runs/good.hcl", "--var", "seed=2"}, nil, ExitOK, "ok", nil},
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

// Warnings are printed but do not fail validation: plugins may not be built yet.
func TestValidateWarnings(t *testing.T) {
	dir := t.TempDir()
	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), validRun)
	code, stdout, stderr := runInDir(t, dir, nil, "validate", "run.hcl")
	if code != ExitOK || !strings.Contains(stdout, "ok") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	for _, want := range []string{"Warning: Missing plugin executable", "on run.hcl line 6", "Warning: Missing scenario directory"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// The shipped run files validate.
func TestValidateShipped(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"bench.hcl", "examples/runs/minimal.hcl", "examples/runs/pinned.hcl"} {
		if code, _, stderr := runInDir(t, root, nil, "validate", f); code != ExitOK {
			t.Errorf("%s: exit %d\n%s", f, code, stderr)
		}
	}
}
