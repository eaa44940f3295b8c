package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The exit codes a scheduler acts on (docs/scale.md): 3 when running the same command
// again cannot pass (the input is wrong), 1 when it may (a plugin crashed, a service was
// down, the run was interrupted), 2 for a wrong command line. Each case runs the real
// CLI, with real plugin processes where a plugin is involved.
func TestExitCodesSayWhetherARetryCanHelp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real plugins")
	}
	flite := buildFlitePlugin(t)
	silent := buildPlugin(t, "plugins/silent")
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A dataset block that synthesises one generated pair with flite.
	dataset := func(tts, out string) string {
		return fmt.Sprintf(`
dataset "gen" {
  generate {
    generator = "procedural"
    pairs     = 1
    seed      = 3
  }
  tts    = plugin.%s
  voices = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out    = %q
}
`, tts, out)
	}
	// A plugin that exits as soon as it starts, the way a crashing model server does.
	crash := write("crash.sh", "#!/bin/sh\necho 'CUDA error: out of memory' >&2\nexit 1\n")
	badScript := `{"scenario_id":"x-explicit","pair_id":"x","condition":"explicit","t_position":"middle","speakers":["A","B","C"],"turns":[{"speaker":"A","text":"Hi.","label":"N9"}]}` + "\n"
	write("bad/scenarios.jsonl", badScript)

	cases := []struct {
		name   string
		args   []string
		file   string // run file written for the case
		cancel bool   // the context is cancelled before the command starts (SIGTERM)
		want   int
		says   string
	}{
		{name: "run file that does not parse", args: []string{"run", "syntax.hcl"},
			file: `plugin "flite" { source = `, want: ExitDeterministic, says: "syntax.hcl"},
		{name: "run file that does not validate", args: []string{"build", "typo.hcl"},
			file: fmt.Sprintf("plugin \"flite\" {\n  source = %q\n  sourse = \"x\"\n}\n", flite), want: ExitDeterministic, says: "sourse"},
		{name: "plugin refused by its pinned checksum", args: []string{"build", "pinned.hcl"},
			file: fmt.Sprintf("plugin \"flite\" {\n  source   = %q\n  checksum = \"sha256:%s\"\n}\n%s", flite, strings.Repeat("0", 64), dataset("flite", "pinned-out")),
			want: ExitDeterministic, says: "pinned to"},
		{name: "plugin config refused by its schema", args: []string{"build", "schema.hcl"},
			file: fmt.Sprintf("plugin \"flite\" {\n  source = %q\n  config {\n    no_such_setting = 1\n  }\n}\n%s", flite, dataset("flite", "schema-out")),
			want: ExitDeterministic, says: "no_such_setting"},
		{name: "invalid dataset", args: []string{"build", "invalid.hcl"},
			file: fmt.Sprintf("plugin \"flite\" {\n  source = %q\n}\ndataset \"bad\" {\n  scenarios = \"bad\"\n  tts       = plugin.flite\n  voices    = { A = \"kal16\", B = \"awb\", C = \"rms\", D = \"slt\" }\n}\n", flite),
			want: ExitDeterministic, says: "N9"},
		{name: "invalid dataset, checked on its own", args: []string{"dataset", "validate", "bad"}, want: ExitDeterministic, says: "violations"},
		{name: "wrong flag", args: []string{"run", "--shard", "4/4", "x.hcl"}, want: ExitUsage, says: "--shard"},
		{name: "plugin that crashes at start", args: []string{"build", "crash.hcl"},
			file: fmt.Sprintf("plugin \"tts\" {\n  source = %q\n}\n%s", crash, dataset("tts", "crash-out")), want: ExitFailed, says: `"tts"`},
		{name: "interrupted", args: []string{"build", "ok.hcl"}, cancel: true,
			file: fmt.Sprintf("plugin \"flite\" {\n  source = %q\n}\nplugin \"silent\" {\n  source = %q\n}\n%s", flite, silent, dataset("flite", "ok-out")), want: ExitFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.file != "" {
				write(c.args[len(c.args)-1], c.file)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if c.cancel {
				cancel()
			}
			defer cancel()
			code, out, errs := runCLIContext(ctx, dir, c.args...)
			if code != c.want || !strings.Contains(errs, c.says) {
				t.Errorf("duplexmpe %s: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", strings.Join(c.args, " "), code, c.want, c.says, out, errs)
			}
		})
	}
}

func runCLIContext(ctx context.Context, dir string, args ...string) (code int, stdout, stderr string) {
	var out, errb strings.Builder
	st := &State{
		Ctx: ctx, Args: args, Env: map[string]string{},
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getwd: func() (string, error) { return dir, nil },
	}
	code = Run(st)
	return code, out.String(), errb.String()
}
