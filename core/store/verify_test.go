package store

import (
	"os"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/tests/reliability/damage"
)

func keyedMeta(model, scenario string) Meta {
	k := ItemKey{Model: ModelKey{Name: model, Plugin: model, Version: "1"}, Scenario: ScenarioKey{ID: scenario, Content: "sha256:00"}, Seed: 1}
	return Meta{ID: k.ID(), Model: model, ScenarioID: scenario, Key: k}
}

// Before, one damaged finished item (a cut recording, garbage JSON, a stray done
// marker) stopped scoring for the whole run and was never replayed, and a relabelled
// item.json was scored under the wrong model. Now each reads as Damaged, says why, is
// never Done, and a new Save replaces it.
func TestDamagedItemsAreCaughtOnRead(t *testing.T) {
	want := map[string]string{
		"truncated audible audio": "audible.flac: bad FLAC: truncated",
		"garbage timeline.json":   "timeline.json does not parse",
		"stray done marker":       "episodes.json",
		"relabelled item.json":    `names model "silent-relabelled"`,
	}
	for _, d := range damage.Items {
		t.Run(d.Name, func(t *testing.T) {
			s, err := Create(t.TempDir(), manifest())
			if err != nil {
				t.Fatal(err)
			}
			m := keyedMeta("silent", "s1")
			if err := s.Save(m, sampleRecord("")); err != nil {
				t.Fatal(err)
			}
			if s.Status(m.ID) != Done || s.Check(m.ID) != nil {
				t.Fatalf("a fresh item: %v %v", s.Status(m.ID), s.Check(m.ID))
			}
			if err := d.Damage(s.ItemDir(m.ID)); err != nil {
				t.Fatal(err)
			}
			if st := s.Status(m.ID); st != Damaged {
				t.Fatalf("status %v, want damaged", st)
			}
			err = s.Check(m.ID)
			if err == nil || !strings.Contains(err.Error(), want[d.Name]) || !strings.Contains(err.Error(), m.ID) || !strings.Contains(err.Error(), "plays it again") {
				t.Fatalf("Check = %v; want it to say %q, name the item and what happens", err, want[d.Name])
			}
			if _, err := s.Load(m.ID); err == nil {
				t.Fatal("Load read a damaged item")
			}
			if _, st, err := s.LoadMeta(m.ID); st != Damaged || err == nil {
				t.Fatalf("LoadMeta: %v %v", st, err)
			}
			if err := s.SaveVerdicts(m.ID, 1); err == nil {
				t.Fatal("verdicts saved on a damaged item")
			}
			// Replayed: a new record replaces it whole.
			if err := s.Save(m, sampleRecord("")); err != nil {
				t.Fatal(err)
			}
			if s.Status(m.ID) != Done {
				t.Fatalf("after the replay: %v (%v)", s.Status(m.ID), s.Check(m.ID))
			}
		})
	}
}

func TestItemOfAnotherIdIsDamaged(t *testing.T) {
	s, err := Create(t.TempDir(), manifest())
	if err != nil {
		t.Fatal(err)
	}
	a, b := keyedMeta("silent", "s1"), keyedMeta("always", "s1")
	if err := s.Save(a, sampleRecord("")); err != nil {
		t.Fatal(err)
	}
	// item.json of b copied over a's, consistent in itself.
	if err := writeJSON(s.ItemDir(a.ID)+"/item.json", b); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(a.ID); err == nil || !strings.Contains(err.Error(), "says it is item") {
		t.Fatalf("Check = %v", err)
	}
	// The same model and scenario with another key (a different config) is another item.
	c := b
	c.ID = a.ID
	if err := writeJSON(s.ItemDir(a.ID)+"/item.json", c); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(a.ID); err == nil || !strings.Contains(err.Error(), "hashes to id") {
		t.Fatalf("Check = %v", err)
	}
}

// Merge never takes a damaged copy of an item over a sound one, and a damaged item
// alone is an unfinished one.
func TestMergeSkipsDamagedCopies(t *testing.T) {
	root := t.TempDir()
	a, _ := Create(root+"/a", manifest())
	b, _ := Create(root+"/b", manifest())
	m := keyedMeta("silent", "s1")
	for _, s := range []*Store{a, b} {
		if err := s.RecordShard(All, []string{m.ID}); err != nil {
			t.Fatal(err)
		}
		if err := s.Save(m, sampleRecord("")); err != nil {
			t.Fatal(err)
		}
	}
	if err := damage.Items[1].Damage(a.ItemDir(m.ID)); err != nil {
		t.Fatal(err)
	}
	rep, err := Merge(root+"/out", []string{root + "/a", root + "/b"})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := Open(root + "/out")
	if rep.Done != 1 || rep.Overlaps != 0 || out.Status(m.ID) != Done || !rep.Complete() {
		t.Fatalf("merge %+v, status %v", rep, out.Status(m.ID))
	}
	rep, err = Merge(root+"/out2", []string{root + "/a"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Done != 0 || rep.Complete() || len(rep.Unfinished) != 1 {
		t.Fatalf("merging only the damaged copy: %+v", rep)
	}
}

// A writer killed before its rename leaves a temporary file; the next run's Create
// removes it (and only it).
func TestCreateSweepsTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, manifest())
	if err != nil {
		t.Fatal(err)
	}
	m := keyedMeta("silent", "s1")
	if err := s.Save(m, sampleRecord("")); err != nil {
		t.Fatal(err)
	}
	stale := []string{dir + "/.manifest.json.123.tmp", s.ItemDir(m.ID) + "/.verdicts.json.456.tmp", dir + "/.run.json.tmp-789"}
	for _, p := range stale {
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Create(dir, manifest()); err != nil {
		t.Fatal(err)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if s.Status(m.ID) != Done {
		t.Fatal("the sweep touched the item")
	}
}
