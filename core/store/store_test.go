package store

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/sdk"
)

func manifest() Manifest {
	return Manifest{
		Name:    "bench",
		Harness: provenance.Harness{Version: "0.1.0", Commit: "abc", ProtocolVersion: 1},
		Plugins: []provenance.Plugin{{Name: "silent", Role: "model", Plugin: "silent", Version: "1.0.0", Hash: "sha256:00"}},
		Dataset: provenance.Dataset{Name: "shipped", Hash: "sha256:11", Scenarios: 24},
		Seeds:   []int64{1},
		Params:  protocol.Defaults(),
		VAD:     protocol.DefaultVAD(),
	}
}

func sampleRecord(failure string) *record.Record {
	// 16-bit values, which the store keeps exactly (audible_test.go has the others).
	aud := make([]float32, 2400)
	for i := range aud {
		aud[i] = float32(math.Round(math.Sin(float64(i)/7)*0.3*32768) / 32768)
	}
	return &record.Record{
		ConversationID: "s1",
		Format:         sdk.Format{InputRate: 24000, OutputRate: 24000, FrameSize: 240}, // 10 frames: the 2400 samples
		Timeline: timeline.Timeline{PreambleStart: 0, PreambleEnd: 1.5, Duration: 0.1,
			Turns: []timeline.Turn{{Index: 0, Label: "T", Speaker: "A", Text: "Aria, what time is it?", Start: 2, End: 3.25}}},
		Audible: audio.PCM{Samples: aud, Rate: 24000},
		Text:    []record.TextPiece{{Frame: 3, Time: 0.32, Text: "hello"}},
		Latency: record.Latency{Frames: 10, Mean: 0.001, P50: 0.001, P95: 0.002, Max: 0.004},
		Frames:  10,
		TWait:   &record.TWait{Start: 3.25, End: 8.3, Ending: record.WaitNoOnset},
		Failure: failure,
	}
}

func meta(id string) Meta {
	return Meta{ID: id, Model: "silent", ScenarioID: "s1", Condition: "explicit"}
}

func noTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if strings.HasSuffix(path, ".tmp") {
			t.Errorf("temporary file left behind: %s", path)
		}
		return nil
	})
}

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, manifest())
	if err != nil {
		t.Fatal(err)
	}
	id := "0123456789abcdef0123456789abcdef"
	if s.Status(id) != Missing {
		t.Fatal("a fresh item is not missing")
	}
	rec := sampleRecord("")
	rec.Episodes = []timeline.Episode{{Start: 4, End: 5.5}}
	if err := s.Save(meta(id), rec); err != nil {
		t.Fatal(err)
	}
	if s.Status(id) != Done {
		t.Fatalf("status %v after saving a successful record", s.Status(id))
	}
	it, err := s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(it.Record, rec) {
		t.Errorf("record changed in the round trip:\n got %+v\nwant %+v", it.Record, rec)
	}
	if it.Meta.ID != id || it.Meta.Model != "silent" {
		t.Errorf("meta %+v", it.Meta)
	}
	noTemps(t, dir)
	if m, st, err := s.LoadMeta(id); err != nil || st != Done || m.ScenarioID != "s1" {
		t.Errorf("LoadMeta: %+v %v %v", m, st, err)
	}
	if ids, err := s.IDs(); err != nil || len(ids) != 1 || ids[0] != id {
		t.Errorf("IDs: %v %v", ids, err)
	}

	// Verdicts only on finished items.
	if err := s.SaveVerdicts(id, map[string]string{"t": "correct"}); err != nil {
		t.Fatal(err)
	}
	var v map[string]string
	if err := s.LoadVerdicts(id, &v); err != nil || v["t"] != "correct" {
		t.Errorf("verdicts %v, %v", v, err)
	}
}

func TestFailedThenRetried(t *testing.T) {
	s, err := Create(t.TempDir(), manifest())
	if err != nil {
		t.Fatal(err)
	}
	id := "fedcba9876543210fedcba9876543210"
	if err := s.Save(meta(id), sampleRecord("model failed at frame 7: plugin exited")); err != nil {
		t.Fatal(err)
	}
	if s.Status(id) != Failed {
		t.Fatalf("status %v, want failed", s.Status(id))
	}
	it, err := s.Load(id)
	if err != nil || it.Record.Failure != "model failed at frame 7: plugin exited" {
		t.Fatalf("loaded failure %q, %v", it.Record.Failure, err)
	}
	if err := s.SaveVerdicts(id, 1); err == nil {
		t.Error("verdicts accepted for a failed item")
	}
	if err := s.Save(meta(id), sampleRecord("")); err != nil {
		t.Fatal(err)
	}
	if s.Status(id) != Done || exists(filepath.Join(s.ItemDir(id), "failure.json")) || exists(filepath.Join(s.ItemDir(id), "failed")) {
		t.Error("a retried item keeps its old failure")
	}
	// A record without audio (a model that failed to start) leaves no stale audio.
	rec := sampleRecord("model failed to start the conversation: out of memory")
	rec.Audible = audio.PCM{}
	if err := s.Save(meta(id), rec); err != nil {
		t.Fatal(err)
	}
	if AudibleFile(s.ItemDir(id)) != "" {
		t.Error("the audio of an older record survived")
	}
}

// An item whose files were written but whose marker was not (a crash) is missing.
func TestUnmarkedItemIsMissing(t *testing.T) {
	s, _ := Create(t.TempDir(), manifest())
	id := "00000000000000000000000000000001"
	if err := s.Save(meta(id), sampleRecord("")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(s.ItemDir(id), "done"))
	if s.Status(id) != Missing {
		t.Errorf("status %v without a marker, want missing", s.Status(id))
	}
	if _, err := s.Load(id); err == nil {
		t.Error("loaded an unmarked item")
	}
}

// The manifest records the run as it is now: a changed run (other plugins, seeds, plan)
// replaces it, its items stay; a directory of another run is refused.
func TestResumeRecordsTheCurrentRun(t *testing.T) {
	dir := t.TempDir()
	if _, err := Create(dir, manifest()); err != nil {
		t.Fatal(err)
	}
	m := manifest()
	m.Harness.Commit = "def"
	m.Plugins[0].Hash = "sha256:ff"
	m.Seeds = []int64{2}
	m.Plan = []PlanEntry{{ID: key().ID(), Model: "moshi", ScenarioID: "p1-explicit"}}
	if _, err := Create(dir, m); err != nil {
		t.Fatalf("a changed run refused: %v", err)
	}
	if got, _ := Open(dir); len(Diff(got.Manifest(), m)) > 0 {
		t.Errorf("the manifest is not the current run's: differs in %v", Diff(got.Manifest(), m))
	}
	m.Name = "other"
	_, err := Create(dir, m)
	if err == nil || !strings.Contains(err.Error(), `holds the run "bench", not "other"`) {
		t.Errorf("err = %v, want a refusal naming both runs", err)
	}
	if got, _ := Open(dir); got.Manifest().Name != "bench" {
		t.Error("a refused run rewrote the manifest")
	}
}

func TestDamagedManifest(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte("{not json"), 0o644)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "manifest.json") {
		t.Errorf("err = %v, want one naming manifest.json", err)
	}
	if _, err := Open(t.TempDir()); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "not a run directory") {
		t.Errorf("err = %v for an empty directory", err)
	}
}

func key() ItemKey {
	return ItemKey{
		Model:    ModelKey{Name: "moshi", Plugin: "moshi", Version: "0.2.13", Hash: "h1:x", Identity: map[string]string{"weights": "abc"}, Config: map[string]any{"temperature": 0.8, "device": "cuda"}},
		Scenario: ScenarioKey{ID: "p1-explicit", Condition: "explicit", Content: "sha256:1", Audio: []string{"sha256:a", "sha256:b"}},
		Schedule: ScheduleOf(protocol.Defaults()),
		VAD:      protocol.DefaultVAD(),
		Seed:     1,
	}
}

func TestItemIDChangesWithEveryInput(t *testing.T) {
	base := key().ID()
	if len(base) != 32 || !idPattern.MatchString(base) {
		t.Fatalf("id %q is not 32 hex digits", base)
	}
	if key().ID() != base {
		t.Fatal("equal keys give different ids")
	}
	changes := map[string]func(*ItemKey){
		"model config":   func(k *ItemKey) { k.Model.Config = map[string]any{"temperature": 0.7, "device": "cuda"} },
		"model identity": func(k *ItemKey) { k.Model.Identity = map[string]string{"weights": "abd"} },
		"plugin hash":    func(k *ItemKey) { k.Model.Hash = "h1:y" },
		"clip audio":     func(k *ItemKey) { k.Scenario.Audio = []string{"sha256:a", "sha256:c"} },
		"scenario text":  func(k *ItemKey) { k.Scenario.Content = "sha256:2" },
		"turn gap":       func(k *ItemKey) { k.Schedule.TurnGap = 0.6 },
		"vad threshold":  func(k *ItemKey) { k.VAD.Threshold = 0.6 },
		"seed":           func(k *ItemKey) { k.Seed = 2 },
		"instruction":    func(k *ItemKey) { k.Instruction = "You are Aria." },
		"repeat":         func(k *ItemKey) { k.Repeat, k.Seed = 1, 1 },
	}
	for name, change := range changes {
		k := key()
		change(&k)
		if k.ID() == base {
			t.Errorf("changing the %s keeps the id", name)
		}
	}
	// Scoring-only values do not reach the key.
	p := protocol.Defaults()
	p.YieldDeadline, p.MinEligible = 3, 10
	if ScheduleOf(p) != ScheduleOf(protocol.Defaults()) {
		t.Error("scoring values change the schedule")
	}
}

// The first repeat's key is the key a run had before runs could repeat: the id below is
// key().ID() computed at the commit before repeats existed, so every run directory
// written then is reused by a run with repeats = 1 (docs/protocol.md section 6.5). That
// commit had scheduler revision 2; a later revision changes every id, as it must.
func TestFirstRepeatKeepsTheEarlierItemID(t *testing.T) {
	k := key()
	k.Repeat = 0
	k.Schedule.Rules = 2
	if got := k.ID(); got != "568e88f3b8fb03a84bffb3eceae641d9" {
		t.Errorf("repeat 0's item id is %s, not the id the same key had before repeats (568e88f3b8fb03a84bffb3eceae641d9)", got)
	}
}

func TestHashPCM(t *testing.T) {
	a := audio.PCM{Samples: []float32{0, 0.5, -0.25}, Rate: 16000}
	b := audio.PCM{Samples: []float32{0, 0.5, -0.25}, Rate: 24000}
	c := audio.PCM{Samples: []float32{0, 0.5, -0.26}, Rate: 16000}
	if HashPCM(a) == HashPCM(b) || HashPCM(a) == HashPCM(c) || HashPCM(a) != HashPCM(audio.PCM{Samples: []float32{0, 0.5, -0.25}, Rate: 16000}) {
		t.Error("HashPCM does not follow rate and samples")
	}
}

func TestShards(t *testing.T) {
	for _, bad := range []string{"", "1", "a/2", "2/2", "-1/2", "0/0", "1/2/3"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
	const n = 3
	counts := make([]int, n)
	for i := 0; i < 300; i++ {
		k := key()
		k.Seed = int64(i)
		id := k.ID()
		in := 0
		for j := 0; j < n; j++ {
			sh, err := ParseShard(strings.Join([]string{itoa(j), itoa(n)}, "/"))
			if err != nil {
				t.Fatal(err)
			}
			if sh.Contains(id) {
				in++
				counts[j]++
			}
		}
		if in != 1 {
			t.Fatalf("id %s is in %d of %d shards", id, in, n)
		}
		if !All.Contains(id) {
			t.Fatal("the whole run misses an id")
		}
	}
	for j, c := range counts {
		if c < 60 {
			t.Errorf("shard %d/%d got %d of 300 ids", j, n, c)
		}
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "3/4", " 1 / 2 ", "4/4", "-1/3", "a/b", "/", "", "1/0", "9999999999999999999/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			if !strings.Contains(err.Error(), "shard") {
				t.Errorf("error %q does not say it is about the shard", err)
			}
			return
		}
		if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
			t.Fatalf("ParseShard(%q) = %+v", s, sh)
		}
		back, err := ParseShard(sh.String())
		if err != nil || back != sh {
			t.Fatalf("%+v does not round-trip: %+v %v", sh, back, err)
		}
	})
}

// Issue 15: item files were owner-only (0600, the mode of temporary files), so a group
// sharing a run directory could not read them. Every file of an item, the audio
// included, now has the mode os.WriteFile(path, data, 0644) gives.
func TestItemFilesAreReadableByOthers(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	s, err := Create(dir, manifest())
	if err != nil {
		t.Fatal(err)
	}
	id := "0123456789abcdef0123456789abcdef"
	if err := s.Save(meta(id), sampleRecord("")); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveVerdicts(id, map[string]string{"t": "correct"}); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(s.ItemDir(id))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		info, _ := e.Info()
		if info.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v; want -rw-r--r--", e.Name(), info.Mode().Perm())
		}
	}
	if !slices.Contains(names, AudibleFLAC) || !slices.Contains(names, "done") {
		t.Errorf("item files %v lack audible.flac or the marker", names)
	}
	if info, _ := os.Stat(filepath.Join(dir, ManifestFile)); info.Mode().Perm() != 0o644 {
		t.Errorf("manifest.json: mode %v", info.Mode().Perm())
	}
}

// Run directories written before the provenance records were one type keep a plugin's
// whole Describe answer under "describe". They load, compare equal to the manifest a new
// run of the same thing makes, and so resume.
func TestManifestWithTheOldPluginShapeResumes(t *testing.T) {
	dir := t.TempDir()
	m := manifest()
	m.Plugins[0].Identity = map[string]string{"weights": "sha256:aa"}
	m.Plugins[0].Config = map[string]any{"frame_ms": 80.0}
	old := `{"name": "bench", "harness": {"version": "0.0.9", "protocol_version": 1},
  "plugins": [{"name": "silent", "role": "model",
    "describe": {"Name": "silent", "Version": "1.0.0", "Description": "says nothing", "Kinds": ["model"],
      "ProtocolVersion": 1, "Capabilities": ["model.concurrency=4"], "Config": null, "Identity": {"weights": "sha256:aa"}},
    "hash": "sha256:00", "config": {"frame_ms": 80}}],
  "dataset": {"name": "shipped", "hash": "sha256:11", "scenarios": 24},
  "seeds": [1], "protocol": ` + mustJSON(t, m.Params) + `, "vad": ` + mustJSON(t, m.VAD) + `}`
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Manifest().Plugins[0]; !reflect.DeepEqual(got, m.Plugins[0]) {
		t.Errorf("old plugin record read as %+v; want %+v", got, m.Plugins[0])
	}
	if d := Diff(s.Manifest(), m); !reflect.DeepEqual(d, []string{"harness"}) {
		t.Errorf("Diff with the same run made now: %v; want only the harness", d)
	}
	if _, err := Create(dir, m); err != nil {
		t.Errorf("the same run does not resume the old directory: %v", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Changes says which leaf of the key moved, so that `run` can say why an item of an
// earlier plan is not reused.
func TestKeyChanges(t *testing.T) {
	old := key()
	k := key()
	k.Model.Config = map[string]any{"temperature": 0.7, "device": "cuda"}
	k.Scenario.Audio = []string{"sha256:a", "sha256:c"}
	k.Model.Identity = nil
	got := k.Changes(old)
	want := []string{
		"model.config.temperature: 0.8 -> 0.7",
		"model.identity: {\"weights\":\"abc\"} -> (none)",
		"scenario.audio[1]: sha256:b -> sha256:c",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Changes = %q\nwant %q", got, want)
	}
	if c := old.Changes(old); len(c) != 0 {
		t.Errorf("no change gives %q", c)
	}
	// A rebuilt set changes every clip: the change is counted, not listed, so a reason
	// stays a line however many clips a conversation has.
	many, other := key(), key()
	many.Scenario.Audio, other.Scenario.Audio = []string{"a", "b", "c", "d", "e"}, []string{"v", "w", "x", "y", "e"}
	if got, want := other.Changes(many), []string{"scenario.audio: 4 of 5 entries changed"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Changes = %q, want %q", got, want)
	}
	other.Scenario.Audio = []string{"a"}
	if got, want := other.Changes(many), []string{"scenario.audio: 5 -> 1 entries"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Changes = %q, want %q", got, want)
	}
}
