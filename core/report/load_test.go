package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

func TestSaveThenLoadGivesTheSameSummaryAndMeta(t *testing.T) {
	dir := t.TempDir()
	s := summary(6, 30)
	if err := Save(dir, s, testMeta()); err != nil {
		t.Fatal(err)
	}
	gotS, gotM, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotS, s) || !reflect.DeepEqual(gotM, testMeta()) {
		t.Error("Load does not give back what Save wrote")
	}
}

func TestLoadErrorsNameTheFileAndTheFix(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, wants ...string) {
		t.Helper()
		_, _, err := Load(dir)
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", what, err, w)
			}
		}
	}
	check("no files", filepath.Join(dir, SummaryFile), "is missing", "duplexmpe score "+dir)
	write(SummaryFile, `{"entries": [{"model": "m", "items": "three"}]}`)
	check("wrong type", SummaryFile, "damaged", "items")
	write(SummaryFile, `{"entries": []} {"entries": []}`)
	check("two documents", SummaryFile, "unexpected data")
	write(SummaryFile, `{"entries": []}`)
	check("no meta", filepath.Join(dir, MetaFile), "is missing")
	os.Mkdir(filepath.Join(dir, MetaFile), 0o755)
	check("meta is a directory", MetaFile, "is a directory")
	if _, _, err := Load(filepath.Join(dir, "absent")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("absent run directory: %v", err)
	}
}

// A run directory with per-item records (the core/store layout): the HTML lists every
// conversation with relative links to its files and its verdicts.
func TestHTMLDrillsDownToItems(t *testing.T) {
	dir := t.TempDir()
	items := fixture(2)
	write := func(path string, v any) {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o755)
		var b []byte
		if s, ok := v.(string); ok {
			b = []byte(s)
		} else {
			b, _ = json.Marshal(v)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ids := []string{"00000000000000a1", "00000000000000b2", "00000000000000c3"}
	// a1: scored, verdicts wrapped as the score command stores them; b2: scored, plain;
	// c3: failed, unscored.
	items[1].Events[1].T.Answer.Transcript = "it is <three> o'clock " + strings.Repeat("and more ", 20)
	for i, id := range ids {
		it := items[i]
		d := filepath.Join(dir, "items", id)
		write(filepath.Join(d, "item.json"), map[string]any{"id": id, "model": it.Model, "scenario_id": it.ScenarioID,
			"pair_id": it.PairID, "condition": it.Condition, "t_position": it.TPosition})
		write(filepath.Join(d, "timeline.json"), conversation())
		switch i {
		case 0:
			write(filepath.Join(d, "verdicts.json"), map[string]any{"key": "k", "scored": it})
			write(filepath.Join(d, "done"), "done\n")
		case 1:
			write(filepath.Join(d, "verdicts.json"), it)
			write(filepath.Join(d, "done"), "done\n")
		case 2:
			write(filepath.Join(d, "failure.json"), `{"failure": "plugin crashed"}`)
			write(filepath.Join(d, "failed"), "failed\n")
		}
	}
	write(filepath.Join(dir, "items", "not-an-item", "item.json"), "{}")
	write(filepath.Join(dir, "items", "00000000000000d4", "item.json"), "{broken")

	if err := WriteAll(dir, score.Summarize(items, testParams(30)), testMeta()); err != nil {
		t.Fatal(err)
	}
	page := read(t, dir, HTMLFile)
	for _, want := range []string{`href="#explore"`, `<section id="explore">`, `id="items"`} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	row := func(id string) string {
		t.Helper()
		_, r, ok := strings.Cut(page, `<tr id="item-`+id+`"`)
		if !ok {
			t.Fatalf("no row for item %s", id)
		}
		r, _, _ = strings.Cut(r, "</tr>")
		return r
	}
	rows := map[string][]string{
		// alpha explicit p000: silent on T, one eligible N4 event, yielded.
		ids[0]: {items[0].ScenarioID, "<td>done</td>", "<td>silent</td>", "<td>no response</td>", "<td>4/4 kept</td>",
			"<td>1 event: 1 eligible, 1 yielded</td>", `href="items/` + ids[0] + `/verdicts.json"`, `href="items/` + ids[0] + `/timeline.json"`},
		// alpha implicit p000: fresh onset, judged correct, spoke in no window.
		ids[1]: {items[1].ScenarioID, "<td>fresh-onset</td>", "<td>correct</td>", "<td>1 event: 0 eligible, 0 yielded</td>",
			"it is &lt;three&gt; o&#39;clock and more", "and…</td>"},
		ids[2]:             {"<td>failed</td>", `href="items/` + ids[2] + `/failure.json"`},
		"00000000000000d4": {"item.json: invalid character"},
	}
	for id, wants := range rows {
		r := row(id)
		for _, w := range wants {
			if !strings.Contains(r, w) {
				t.Errorf("item %s row lacks %q: %s", id, w, r)
			}
		}
	}
	if strings.Contains(row(ids[2]), "verdicts.json") {
		t.Error("an unscored item links verdicts")
	}
	if strings.Contains(page, "not-an-item") {
		t.Error("a directory that is not an item id is listed")
	}
}

// report.html's "audio but no speech" section names a model that emitted audio (peak
// above the floor) in which the VAD found no speech, links one such item's audible file
// and its page, and leaves out a model whose audio was speech. The viewer's tests check
// the facts it reads on a real run (TestViewerPagesRecordingsAndTheNoSpeechDiagnostic).
func TestNoSpeechSectionNamesTheModel(t *testing.T) {
	tone := fixture(1)[0]
	tone.Model = "tone"
	talker := fixture(1)[0]
	talker.Model = "talker"
	convs := []*viewer.Conv{
		{Row: viewer.ItemRow{ID: "00000000000000a1", Model: "tone"}, Scored: &tone},
		{Row: viewer.ItemRow{ID: "00000000000000a2", Model: "talker"}, Scored: &talker, Episodes: []timeline.Episode{{Start: 1, End: 2}}},
	}
	facts := map[string]viewer.AudioInfo{
		"00000000000000a1": {Audible: true, File: "audible.flac", PeakDBFS: -6},
		"00000000000000a2": {Audible: true, File: "audible.flac", PeakDBFS: -6},
	}
	page, err := htmlPage(summary(1, 30), testMeta(), nil, convs, facts, map[string]string{"00000000000000a1": "viewer/00000000000000a1.html"})
	if err != nil {
		t.Fatal(err)
	}
	_, diag, _ := strings.Cut(string(page), `<section id="no-speech">`)
	diag, _, _ = strings.Cut(diag, "</section>")
	for _, want := range []string{"<td>tone <b>(no speech in any conversation)</b></td><td>1</td><td>1</td><td>1</td>",
		`href="items/00000000000000a1/audible.flac">`, `<a href="viewer/00000000000000a1.html">listen</a>`} {
		if !strings.Contains(diag, want) {
			t.Errorf("the no-speech diagnostic lacks %q:\n%s", want, diag)
		}
	}
	if strings.Contains(diag, "talker") {
		t.Errorf("the no-speech diagnostic names a model whose audio was speech:\n%s", diag)
	}
}
