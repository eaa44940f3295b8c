package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMergeShards(t *testing.T) {
	root := t.TempDir()
	a, _ := Create(filepath.Join(root, "a"), manifest())
	b, _ := Create(filepath.Join(root, "b"), manifest())
	ids := []string{
		"10000000000000000000000000000000",
		"20000000000000000000000000000000",
		"30000000000000000000000000000000",
		"40000000000000000000000000000000",
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.Save(meta(ids[0]), record("")))
	must(a.Save(meta(ids[1]), record("crash"))) // failed in a ...
	must(b.Save(meta(ids[1]), record("")))      // ... done in b: b's wins
	must(b.Save(meta(ids[2]), record("crash"))) // failed everywhere
	must(b.Save(meta(ids[0]), record("")))      // done twice
	must(a.Save(meta(ids[3]), record("")))
	removeMarker(t, a, ids[3]) // interrupted: skipped

	out := filepath.Join(root, "out")
	rep, err := Merge(out, []string{a.Dir(), b.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep != (MergeReport{Done: 2, Failed: 1, Duplicates: 1}) {
		t.Errorf("report %+v, want 2 done, 1 failed, 1 duplicate", rep)
	}
	m, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{ids[0]: Done, ids[1]: Done, ids[2]: Failed, ids[3]: Missing}
	for id, st := range want {
		if got := m.Status(id); got != st {
			t.Errorf("item %s is %v in the merge, want %v", id[:2], got, st)
		}
	}
	if it, err := m.Load(ids[1]); err != nil || it.Record.Failed() {
		t.Errorf("merged item %s: %v %+v", ids[1][:2], err, it)
	}
	noTemps(t, out)

	// Merging again changes nothing.
	if rep2, err := Merge(out, []string{a.Dir(), b.Dir()}); err != nil || rep2 != rep {
		t.Errorf("second merge: %+v %v", rep2, err)
	}
}

func removeMarker(t *testing.T, s *Store, id string) {
	t.Helper()
	if err := os.Remove(filepath.Join(s.ItemDir(id), "done")); err != nil {
		t.Fatal(err)
	}
}

func TestMergeRefusesMismatchedManifests(t *testing.T) {
	root := t.TempDir()
	a, _ := Create(filepath.Join(root, "a"), manifest())
	m := manifest()
	m.VAD.Threshold = 0.6
	b, _ := Create(filepath.Join(root, "b"), m)
	a.Save(meta("10000000000000000000000000000000"), record(""))
	out := filepath.Join(root, "out")
	_, err := Merge(out, []string{a.Dir(), b.Dir()})
	if err == nil || !strings.Contains(err.Error(), "differ in vad") || !strings.Contains(err.Error(), a.Dir()) || !strings.Contains(err.Error(), b.Dir()) {
		t.Fatalf("err = %v, want a refusal naming both directories and vad", err)
	}
	if exists(out) {
		t.Error("a refused merge wrote the output directory")
	}
	// Different harness builds are not shards of one run either.
	m = manifest()
	m.Harness.Commit = "zzz"
	c, _ := Create(filepath.Join(root, "c"), m)
	if _, err := Merge(out, []string{a.Dir(), c.Dir()}); err == nil || !strings.Contains(err.Error(), "harness") {
		t.Errorf("err = %v, want a refusal naming the harness", err)
	}
	// An output holding another run is refused.
	if _, err := Merge(b.Dir(), []string{a.Dir()}); err == nil || !strings.Contains(err.Error(), "already holds a different run") {
		t.Errorf("err = %v, want a refusal of the output", err)
	}
	if _, err := Merge(out, []string{filepath.Join(root, "nope")}); err == nil || !strings.Contains(err.Error(), "not a run directory") {
		t.Errorf("err = %v for a missing directory", err)
	}
}
