package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/session"
	"github.com/duplexmpe/duplexmpe/core/store"
)

func runMerge(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(&State{Args: args, Stdout: &out, Stderr: &errb, Env: map[string]string{}})
	return code, out.String(), errb.String()
}

func TestMergeCommand(t *testing.T) {
	root := t.TempDir()
	m := store.Manifest{Name: "r", Params: protocol.Defaults(), VAD: protocol.DefaultVAD()}
	a, _ := store.Create(filepath.Join(root, "a"), m)
	b, _ := store.Create(filepath.Join(root, "b"), m)
	a.Save(store.Meta{ID: "10000000000000000000000000000000"}, &session.Record{})
	b.Save(store.Meta{ID: "20000000000000000000000000000000"}, &session.Record{Failure: "crash"})

	out := filepath.Join(root, "out")
	code, stdout, stderr := runMerge("merge", out, a.Dir(), b.Dir())
	if code != ExitOK || !strings.Contains(stdout, "1 items done, 1 failed") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	s, err := store.Open(out)
	if err != nil || s.Status("10000000000000000000000000000000") != store.Done {
		t.Errorf("merged store: %v", err)
	}

	m.Seeds = []int64{9}
	c, _ := store.Create(filepath.Join(root, "c"), m)
	code, _, stderr = runMerge("merge", filepath.Join(root, "out2"), a.Dir(), c.Dir())
	if code != ExitFailed || !strings.Contains(stderr, "differ in seeds") {
		t.Errorf("exit %d, stderr %q; want 1 and a message naming seeds", code, stderr)
	}
	if code, _, stderr = runMerge("merge", out); code != ExitUsage || !strings.Contains(stderr, "at least one run directory") {
		t.Errorf("exit %d, stderr %q; want a usage error", code, stderr)
	}
}
