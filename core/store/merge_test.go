package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// idIn is an item id in shard i of 4: Contains reads the first 16 hex digits as a
// number, so the 16th digit decides the residue. n tells ids of one shard apart.
func idIn(i, n int) string {
	return "0000000000000" + string("0123456789abcdef"[n]) + "0" + string("0123"[i]) + strings.Repeat("0", 16)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// shardDir makes the directory of shard i/4 with its record, the planned items ids, and
// saves the finished ones.
func shardDir(t *testing.T, root string, i int, planned []string, finished ...string) *Store {
	t.Helper()
	s, err := Create(filepath.Join(root, "shard"+string("0123"[i])), manifest())
	must(t, err)
	must(t, s.RecordShard(Shard{Index: i, Count: 4}, planned))
	for _, id := range finished {
		must(t, s.Save(meta(id), sampleRecord("")))
	}
	return s
}

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
	must(t, a.RecordShard(All, ids))
	must(t, a.Save(meta(ids[0]), sampleRecord("")))
	must(t, a.Save(meta(ids[1]), sampleRecord("crash"))) // failed in a ...
	must(t, b.Save(meta(ids[1]), sampleRecord("")))      // ... done in b: b's wins
	must(t, b.Save(meta(ids[2]), sampleRecord("crash"))) // failed everywhere
	must(t, b.Save(meta(ids[0]), sampleRecord("")))      // done twice, identically
	must(t, a.Save(meta(ids[3]), sampleRecord("")))
	removeMarker(t, a, ids[3]) // interrupted: skipped
	must(t, b.RecordShard(All, ids))

	out := filepath.Join(root, "out")
	rep, err := Merge(out, []string{a.Dir(), b.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Done != 2 || rep.Failed != 1 || rep.Overlaps != 1 {
		t.Errorf("report %+v, want 2 done, 1 failed, 1 overlap", rep)
	}
	if rep.Complete() || len(rep.Unfinished) != 1 || !reflect.DeepEqual(rep.Unfinished[0].Missing, []string{ids[3]}) {
		t.Errorf("report %+v: want the interrupted item %s named as unfinished", rep, ids[3][:2])
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
	if rep2, err := Merge(out, []string{a.Dir(), b.Dir()}); err != nil || !reflect.DeepEqual(rep2, rep) {
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
	a.Save(meta("10000000000000000000000000000000"), sampleRecord(""))
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

func TestMergeReportsMissingShardsAndItems(t *testing.T) {
	root := t.TempDir()
	s0 := shardDir(t, root, 0, []string{idIn(0, 1), idIn(0, 2)}, idIn(0, 1), idIn(0, 2))
	// Shard 1 was stopped after its first item; shard 2 never ran; shard 3 planned nothing.
	s1 := shardDir(t, root, 1, []string{idIn(1, 1), idIn(1, 2), idIn(1, 3)}, idIn(1, 1))
	s3 := shardDir(t, root, 3, nil)
	out := filepath.Join(root, "out")
	rep, err := Merge(out, []string{s0.Dir(), s1.Dir(), s3.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Complete() {
		t.Fatalf("report %+v is complete; shard 2 and two items of shard 1 are missing", rep)
	}
	if want := []Shard{{2, 4}}; !reflect.DeepEqual(rep.MissingShards, want) {
		t.Errorf("missing shards %v, want %v", rep.MissingShards, want)
	}
	if want := []ShardGap{{Shard: Shard{1, 4}, Planned: 3, Missing: []string{idIn(1, 2), idIn(1, 3)}}}; !reflect.DeepEqual(rep.Unfinished, want) {
		t.Errorf("unfinished %+v, want %+v", rep.Unfinished, want)
	}
	msg := rep.Incomplete()
	for _, w := range []string{"shard 1/4 has 2 of its 3 planned items unfinished", "no directory given played shard 2/4", "do not score"} {
		if !strings.Contains(msg, w) {
			t.Errorf("Incomplete() = %q, want it to say %q", msg, w)
		}
	}
	if rep.Done != 3 {
		t.Errorf("%d items done in the output, want the 3 finished ones kept", rep.Done)
	}

	// The holes are filled: shard 1 resumed in its directory, shard 2 played elsewhere
	// and merged into the same output.
	must(t, s1.Save(meta(idIn(1, 2)), sampleRecord("")))
	must(t, s1.Save(meta(idIn(1, 3)), sampleRecord("model crashed")))
	s2 := shardDir(t, root, 2, []string{idIn(2, 1)}, idIn(2, 1))
	rep, err = Merge(out, []string{s1.Dir(), s2.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete() || rep.Incomplete() != "" {
		t.Errorf("report %+v is incomplete after the holes were filled: %s", rep, rep.Incomplete())
	}
	if rep.Done != 5 || rep.Failed != 1 || len(rep.Shards) != 4 {
		t.Errorf("report %+v: want 5 done, 1 failed over 4 shards", rep)
	}
}

func TestMergeWithoutShardRecords(t *testing.T) {
	root := t.TempDir()
	a, _ := Create(filepath.Join(root, "a"), manifest())
	must(t, a.Save(meta(idIn(0, 1)), sampleRecord("")))
	rep, err := Merge(filepath.Join(root, "out"), []string{a.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Complete() || !reflect.DeepEqual(rep.Unrecorded, []string{a.Dir()}) || !strings.Contains(rep.Incomplete(), a.Dir()+" has no shard record") {
		t.Errorf("report %+v (%s): a directory without a record cannot vouch for its shard", rep, rep.Incomplete())
	}
	if rep.Done != 1 {
		t.Errorf("its finished item was not merged: %+v", rep)
	}
}

func TestMergeRefusesConflictingItems(t *testing.T) {
	root := t.TempDir()
	id := idIn(0, 1)
	a := shardDir(t, root, 0, []string{id}, id)
	b, _ := Create(filepath.Join(root, "b"), manifest())
	other := sampleRecord("")
	other.Audible.Samples[100] += 0.25 // another play of the same item, with another answer
	must(t, b.Save(meta(id), other))
	before := tree(t, root)

	out := filepath.Join(root, "out")
	_, err := Merge(out, []string{a.Dir(), b.Dir()})
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].ID != id || ce.Conflicts[0].File != AudibleFLAC {
		t.Fatalf("err = %v, want one conflict on %s in %s", err, id, AudibleFLAC)
	}
	for _, w := range []string{a.ItemDir(id), b.ItemDir(id), "nothing was merged", "remove the other item directory"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if exists(out) {
		t.Error("a refused merge wrote the output directory")
	}
	if after := tree(t, root); !reflect.DeepEqual(after, before) {
		t.Error("a refused merge changed a run directory")
	}

	// A replay that differs only in wall-clock latency (and verdicts) is the same record.
	c, _ := Create(filepath.Join(root, "c"), manifest())
	slow := sampleRecord("")
	slow.Latency.Max, slow.Latency.Mean = 3, 1
	must(t, c.Save(meta(id), slow))
	must(t, c.SaveVerdicts(id, map[string]int{"x": 1}))
	rep, err := Merge(out, []string{a.Dir(), c.Dir()})
	if err != nil || rep.Overlaps != 1 || rep.Done != 1 {
		t.Fatalf("merge of identical plays: %+v %v, want one overlap kept once", rep, err)
	}

	// The output counts too: b's play conflicts with the one merged into out above.
	before = tree(t, root)
	if _, err := Merge(out, []string{b.Dir()}); !errors.As(err, &ce) || ce.Conflicts[0].A != filepath.Join(out, "items", id) {
		t.Fatalf("err = %v, want a conflict between out and b", err)
	}
	if after := tree(t, root); !reflect.DeepEqual(after, before) {
		t.Error("a refused merge changed a directory")
	}
}

// TestMergeLeavesSourcesAlone checks that the sources are never changed, even though
// merged items share their files: writing the output (verdicts, a replayed item) must
// not reach the shard directories.
func TestMergeLeavesSourcesAlone(t *testing.T) {
	root := t.TempDir()
	id := idIn(0, 1)
	a := shardDir(t, root, 0, []string{id}, id)
	before := tree(t, a.Dir())
	out := filepath.Join(root, "out")
	if _, err := Merge(out, []string{a.Dir()}); err != nil {
		t.Fatal(err)
	}
	o, err := Open(out)
	must(t, err)
	must(t, o.SaveVerdicts(id, map[string]int{"x": 1}))
	must(t, o.Save(meta(id), sampleRecord("replayed and failed")))
	if after := tree(t, a.Dir()); !reflect.DeepEqual(after, before) {
		t.Errorf("writing the merged output changed the shard directory:\nbefore %v\nafter  %v", before, after)
	}
}

// tree maps every file under dir to a hash of its contents.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		m[path] = hex.EncodeToString(sum[:8])
		return nil
	})
	must(t, err)
	return m
}

func TestRecordShard(t *testing.T) {
	s, _ := Create(t.TempDir(), manifest())
	if err := s.RecordShard(Shard{1, 4}, []string{idIn(2, 1)}); err == nil || !strings.Contains(err.Error(), "does not belong to shard 1/4") {
		t.Errorf("err = %v, want a refusal of an item of another shard", err)
	}
	must(t, s.RecordShard(Shard{1, 4}, []string{idIn(1, 2), idIn(1, 1)}))
	must(t, s.RecordShard(Shard{3, 4}, nil))
	must(t, s.RecordShard(Shard{1, 4}, []string{idIn(1, 3)})) // replaces the first
	recs, err := s.Shards()
	must(t, err)
	want := []ShardRecord{{Index: 1, Count: 4, Items: []string{idIn(1, 3)}}, {Index: 3, Count: 4, Items: []string{}}}
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("records %+v, want %+v", recs, want)
	}
	// A record whose content contradicts its name is damage, not a shard.
	must(t, os.WriteFile(filepath.Join(s.Dir(), "shards", "2-of-4.json"), []byte(`{"index":1,"count":4,"items":[]}`), 0o644))
	if _, err := s.Shards(); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("err = %v, want a damaged record named", err)
	}
}

func TestMissingShards(t *testing.T) {
	rec := func(i, n int) ShardRecord { return ShardRecord{Index: i, Count: n} }
	cases := []struct {
		recs []ShardRecord
		want []Shard
	}{
		{nil, nil},
		{[]ShardRecord{rec(0, 1)}, nil},
		{[]ShardRecord{rec(0, 4), rec(1, 4), rec(3, 4)}, []Shard{{2, 4}}},
		{[]ShardRecord{rec(0, 2), rec(1, 2)}, nil},
		{[]ShardRecord{rec(0, 4), rec(2, 4)}, []Shard{{1, 4}, {3, 4}}},
		{[]ShardRecord{rec(0, 2), rec(1, 4)}, []Shard{{3, 4}}},
		{[]ShardRecord{rec(0, 1), rec(2, 3)}, nil},
		{[]ShardRecord{rec(1, 2), rec(0, 3)}, []Shard{{2, 6}, {4, 6}}},
	}
	for _, c := range cases {
		got, err := missingShards(c.recs)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("missingShards(%v) = %v, %v; want %v", c.recs, got, err, c.want)
		}
	}
	if _, err := missingShards([]ShardRecord{rec(0, 1021), rec(0, 1031), rec(0, 1033)}); err == nil {
		t.Error("counts whose common multiple is huge were not refused")
	}
}
