package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/cli"
	"github.com/duplexmpe/duplexmpe/plugins/internal/hosted/standintest"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

const runFileTemplate = `
plugin "oai" {
  source = %q
  env    = { OPENAI_API_KEY = env("OPENAI_API_KEY") }
  config {
    base_url      = %q
    cache_dir     = %q
    retry_backoff = 0.01
    tts_rate      = 16000
    usage_log     = %q
    # The dataset builder speaks the duty preamble with voice "slt" (core/construct),
    # and a run file cannot choose another: offer it.
    voices        = ["alloy", "echo", "fable", "nova", "slt"]
  }
}

plugin "claude" {
  source = %q
  env    = { ANTHROPIC_API_KEY = env("ANTHROPIC_API_KEY") }
  config {
    base_url      = %q
    cache_dir     = %q
    retry_backoff = 0.01
  }
}

plugin "talk" {
  source = %q
}

plugin "lexical" {
  source = %q
}

dataset "tiny" {
  generate {
    generator = "procedural"
    pairs     = 1
    seed      = 3
  }
  tts    = plugin.oai
  voices = { A = "alloy", B = "echo", C = "fable", D = "nova" }
}

evaluation "e" {
  dataset = dataset.tiny
  models  = [plugin.talk]
  asr     = plugin.oai
  judge   = plugin.lexical
  out     = "run"
}
`

// The end-to-end case, with real processes against the stand-ins: a run made
// with the lexical judge is re-scored by the openai judge, then the anthropic one, each
// after changing one line of the run file; the report names the judge, its prompt version and the unparseable
// verdicts; and the API key is in no file the harness wrote (run directory, lock file,
// cache) nor in its output.
func TestScoreSwapsJudgeAndNeverWritesTheKey(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole run: seconds of CPU")
	}
	s := standintest.NewOpenAI(t, testKey)
	s.SetProseSpeech(true)
	dir := t.TempDir()
	runFile := filepath.Join(dir, "run.hcl")
	usageLog := filepath.Join(dir, "run", "openai-usage.jsonl")
	claude := standintest.NewAnthropic(t, anthropicKey)
	text := fmt.Sprintf(runFileTemplate, buildPlugin(t), s.URL+"/v1", filepath.Join(dir, "cache"), usageLog,
		plugintest.BuildGo(t, "../anthropic"), claude.URL+"/v1", filepath.Join(dir, "cache"),
		plugintest.BuildGo(t, "../always-talk"), plugintest.BuildGo(t, "../lexical-judge"))
	if err := os.WriteFile(runFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	duplexmpe := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		st := &cli.State{Ctx: ctx, Args: args, Env: map[string]string{"OPENAI_API_KEY": testKey, "ANTHROPIC_API_KEY": anthropicKey, "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")},
			Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getwd: func() (string, error) { return dir, nil }}
		if code := cli.Run(st); code != 0 {
			t.Fatalf("duplexmpe %s: exit %d\n%s", strings.Join(args, " "), code, out.String())
		}
	}
	duplexmpe("lock", runFile)
	duplexmpe("run", runFile)
	runDir := filepath.Join(dir, "run")
	report := func() string {
		b, err := os.ReadFile(filepath.Join(runDir, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if r := report(); !strings.Contains(r, "lexical") {
		t.Fatalf("the first report does not name the lexical judge:\n%s", r)
	}
	// One line changes: the evaluation's judge.
	swapped := strings.Replace(text, "judge   = plugin.lexical", "judge   = plugin.oai", 1)
	if swapped == text {
		t.Fatal("judge line not found")
	}
	if err := os.WriteFile(runFile, []byte(swapped), 0o644); err != nil {
		t.Fatal(err)
	}
	before := s.Count("/v1/chat/completions")
	duplexmpe("score", runDir)
	if s.Count("/v1/chat/completions") == before {
		t.Fatal("score did not call the openai judge")
	}
	r := report()
	judgeLine, verdictLine := reportLine(r, "| judge |"), reportLine(r, "| judge verdicts |")
	t.Log(judgeLine)
	t.Log(verdictLine)
	if !strings.Contains(judgeLine, "openai") || !strings.Contains(judgeLine, "judge_prompt_version=judge-v2") || !strings.Contains(judgeLine, "judge_prompt_sha256=sha256:") {
		t.Errorf("the report does not name the judge and its prompt: %q", judgeLine)
	}
	// The stand-in answers every acknowledgement/intrusion question in prose.
	var n, unparseable int
	if _, err := fmt.Sscanf(strings.TrimPrefix(verdictLine, "| judge verdicts | "), "%d, of which %d unparseable", &n, &unparseable); err != nil || unparseable == 0 || unparseable >= n {
		t.Errorf("verdict line %q (%v); want some, not all, unparseable", verdictLine, err)
	}
	// And one more line: the anthropic judge.
	if err := os.WriteFile(runFile, []byte(strings.Replace(text, "judge   = plugin.lexical", "judge   = plugin.claude", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	duplexmpe("score", runDir)
	if claude.Count() == 0 {
		t.Fatal("score did not call the anthropic judge")
	}
	if l := reportLine(report(), "| judge |"); !strings.Contains(l, "claude (anthropic)") || !strings.Contains(l, "judge_prompt_version=judge-v2") {
		t.Errorf("the report does not name the anthropic judge and its prompt: %q", l)
	}
	if u, err := os.ReadFile(usageLog); err != nil || !strings.Contains(string(u), `"total_cost_usd"`) {
		t.Errorf("usage log: %v\n%s", err, u)
	}
	// The key is nowhere the harness wrote, nor in what it printed.
	for _, b := range append(s.Bodies(), claude.Bodies()...) {
		if strings.Contains(b, testKey) || strings.Contains(b, anthropicKey) {
			t.Error("a request body holds the key")
		}
	}
	if strings.Contains(out.String(), testKey) || strings.Contains(out.String(), anthropicKey) {
		t.Error("the command output holds the key")
	}
	files := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		if bytes.Contains(b, []byte(testKey)) || bytes.Contains(b, []byte(anthropicKey)) {
			t.Errorf("%s holds the API key", p)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(dir, "run.lock.hcl")); err != nil || files < 10 {
		t.Fatalf("only %d files written, lock file: %v", files, err)
	}
}

const anthropicKey = "sk-ant-standin-9876543210SECRET"

// reportLine is the first line of the report that starts with prefix.
func reportLine(report, prefix string) string {
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
