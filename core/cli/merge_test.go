package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/record"
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
	const id0, id1 = "00000000000000000000000000000000", "00000000000000010000000000000000" // shards 0/2 and 1/2
	a, _ := store.Create(filepath.Join(root, "a"), m)
	b, _ := store.Create(filepath.Join(root, "b"), m)
	a.RecordShard(store.Shard{Index: 0, Count: 2}, []string{id0})
	a.Save(store.Meta{ID: id0}, &record.Record{})

	// Shard 1/2 is missing: what there is gets merged, and merge exits 1.
	out := filepath.Join(root, "out")
	code, stdout, stderr := runMerge("merge", out, a.Dir())
	if code != ExitFailed || !strings.Contains(stdout, "1 items done") || !strings.Contains(stderr, "no directory given played shard 1/2") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and the missing shard named", code, stdout, stderr)
	}
	s, err := store.Open(out)
	if err != nil || s.Status(id0) != store.Done {
		t.Errorf("merged store: %v", err)
	}

	b.RecordShard(store.Shard{Index: 1, Count: 2}, []string{id1})
	b.Save(store.Meta{ID: id1}, &record.Record{Failure: "crash"})
	code, stdout, stderr = runMerge("merge", out, a.Dir(), b.Dir())
	if code != ExitOK || !strings.Contains(stdout, "1 items done, 1 failed") || !strings.Contains(stdout, "shards recorded: 0/2 1/2") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	m.Seeds = []int64{9}
	c, _ := store.Create(filepath.Join(root, "c"), m)
	code, _, stderr = runMerge("merge", filepath.Join(root, "out2"), a.Dir(), c.Dir())
	if code != ExitDeterministic || !strings.Contains(stderr, "differ in seeds") {
		t.Errorf("exit %d, stderr %q; want 3 and a message naming seeds", code, stderr)
	}
	if code, _, stderr = runMerge("merge", out); code != ExitUsage || !strings.Contains(stderr, "at least one run directory") {
		t.Errorf("exit %d, stderr %q; want a usage error", code, stderr)
	}
}
