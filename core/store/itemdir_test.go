package store

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// ReadItemDir reads what Save wrote; a file that does not read back is named and the
// rest is still read; an item without a readable item.json says so and nothing more.
func TestReadItemDirIsTolerant(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, manifest())
	if err != nil {
		t.Fatal(err)
	}
	good, damaged, nameless := "0123456789abcdef0123456789abcdef", "1123456789abcdef0123456789abcdef", "2123456789abcdef0123456789abcdef"
	rec := sampleRecord("")
	for _, id := range []string{good, damaged, nameless} {
		if err := s.Save(meta(id), rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveVerdicts(good, map[string]int{"turns": 3}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.ItemDir(damaged), TimelineFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.ItemDir(nameless), ItemFile)); err != nil {
		t.Fatal(err)
	}

	items := ReadItems(dir)
	if len(items) != 3 || items[0].ID != good || items[1].ID != damaged || items[2].ID != nameless {
		t.Fatalf("ReadItems: %d items, want the three in id order", len(items))
	}
	g := items[0]
	if g.Marker != Done || g.Meta == nil || g.Meta.ID != good || len(g.Problems) != 0 {
		t.Fatalf("a sound item: marker %v, meta %+v, problems %v", g.Marker, g.Meta, g.Problems)
	}
	if !reflect.DeepEqual(*g.Timeline, rec.Timeline) || !reflect.DeepEqual(g.Text, rec.Text) ||
		g.Session == nil || g.Session.Format != rec.Format || g.Session.Frames != rec.Frames || string(g.Verdicts) != "{\n  \"turns\": 3\n}" {
		t.Errorf("a sound item reads back otherwise than saved: %+v", g)
	}
	if want := []string{ItemFile, TimelineFile, EpisodesFile, VerdictsFile, TextFile, SessionFile, AudibleFLAC}; !slices.Equal(g.Files, want) {
		t.Errorf("files %v, want %v", g.Files, want)
	}

	d := items[1]
	if d.Timeline != nil || d.Problem(TimelineFile) == nil || len(d.Problems) != 1 || d.Session == nil || d.Meta == nil {
		t.Errorf("a damaged timeline.json: timeline %v, problems %v, session %v; want the problem named and the rest read", d.Timeline, d.Problems, d.Session)
	}

	n := items[2]
	if n.Meta != nil || n.Problem(ItemFile) == nil || n.Session != nil || n.Marker != Done {
		t.Errorf("no item.json: meta %v, problems %v, session %v, marker %v; want only the problem and the marker", n.Meta, n.Problems, n.Session, n.Marker)
	}
}
