// Package store owns the run directory: every file name in it (layout.go), what each
// file holds, and the one tolerant reader of an item directory (ReadItemDir). An item:
//
//	runs/<name>/manifest.json         what the run is: config, plugins, dataset, harness, seeds, protocol, VAD
//	runs/<name>/items/<id>/item.json  which (model, conversation) this is, and its id key
//	                      timeline.json   the actual preamble and turn spans (record.Record.Timeline)
//	                      episodes.json   model speech episodes on the audible output (protocol section 4)
//	                      audible.flac    the audible output, 16-bit FLAC, sample-aligned with the timeline
//	                                      (audible.wav, 32-bit float, in runs written before: audible.go)
//	                      text.json       the model's text channel pieces
//	                      session.json    format, frames, per-frame latency, the wait after T
//	                      failure.json    why the conversation failed (failed items only)
//	                      verdicts.json   written later by scoring
//	                      done | failed   the marker, written last
//
// Every file, the audio included, is written atomically and durably (core/atomicfile:
// a temporary file in the same folder, fsynced, renamed, then the folder fsynced), and the
// marker goes last: a crash never leaves an item that looks finished. An item
// without a marker is treated as never run. Resuming a run reuses done items and runs
// failed and unmarked ones again.
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Manifest says what a run is now: the run file's current evaluation, with Plan, the
// items it consists of. A run directory keeps items of earlier plans (another model
// list, a changed model, a rebuilt scenario) on disk, but only the items of Plan count.
// Two shards of one run have equal manifests (each plans the whole run, then plays its
// slice); merge refuses directories whose manifests differ. It holds no transport
// settings (concurrency, endpoints, retries) and no timestamps, so it is the same
// wherever a shard ran.
type Manifest struct {
	Name    string             `json:"name"`
	Harness provenance.Harness `json:"harness"`
	// Config is the resolved run configuration as the config package renders it.
	Config  json.RawMessage     `json:"config,omitempty"`
	Plugins []provenance.Plugin `json:"plugins"`
	Dataset provenance.Dataset  `json:"dataset"`
	Seeds   []int64             `json:"seeds"`
	Params  protocol.Params     `json:"protocol"`
	VAD     protocol.VAD        `json:"vad"`
	// Plan is every item of the run in plan order (all shards'); empty in directories
	// written before plans were recorded, where every item on disk counts.
	Plan []PlanEntry `json:"plan,omitempty"`
}

// PlanEntry is one item of a run's plan: its id and which (model, conversation) it is.
type PlanEntry struct {
	ID         string `json:"id"`
	Model      string `json:"model"`
	ScenarioID string `json:"scenario_id"`
	PairID     string `json:"pair_id,omitempty"`
	Condition  string `json:"condition,omitempty"`
	TPosition  string `json:"t_position,omitempty"`
	// Repeat is which repeat of the (model, conversation) the item is; 0, the first,
	// is left out.
	Repeat int `json:"repeat,omitempty"`
}

// Name names the entry for people: "model/scenario", with " (repeat r)" after it for
// a repeat after the first.
func (e PlanEntry) Name() string {
	if e.Repeat > 0 {
		return fmt.Sprintf("%s/%s (repeat %d)", e.Model, e.ScenarioID, e.Repeat)
	}
	return e.Model + "/" + e.ScenarioID
}

// Entry is the plan entry of the item m describes.
func (m Meta) Entry() PlanEntry {
	return PlanEntry{ID: m.ID, Model: m.Model, ScenarioID: m.ScenarioID, PairID: m.PairID, Condition: m.Condition, TPosition: m.TPosition, Repeat: m.Repeat}
}

// Diff names the top-level manifest fields in which a and b differ.
func Diff(a, b Manifest) []string {
	ja, jb := fields(a), fields(b)
	var d []string
	for k, va := range ja {
		if !bytes.Equal(va, jb[k]) {
			d = append(d, k)
		}
	}
	for k := range jb {
		if _, ok := ja[k]; !ok {
			d = append(d, k)
		}
	}
	sort.Strings(d)
	return d
}

func fields(m Manifest) map[string]json.RawMessage {
	b, _ := json.Marshal(m)
	var f map[string]json.RawMessage
	_ = json.Unmarshal(b, &f)
	for k, v := range f { // compact, so formatting never counts as a difference
		var buf bytes.Buffer
		if json.Compact(&buf, v) == nil {
			f[k] = buf.Bytes()
		}
	}
	return f
}

// Store is one run directory.
type Store struct {
	dir      string
	manifest Manifest
}

// Create opens the run directory dir for m, creating it when it does not exist, and
// records m as its manifest: the run as it is now. An existing directory keeps its
// items (those m's plan no longer holds are stale, Store.Stale); one that holds another
// run (another name) is refused. Temporary files a killed writer left there are
// removed.
func Create(dir string, m Manifest) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, ItemsDir), 0o755); err != nil {
		return nil, fmt.Errorf("store: creating run directory: %w", err)
	}
	old, err := readManifest(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case old.Name != m.Name:
		// Deterministic: running it again meets the same directory (core/fault, exit 3).
		return nil, fault.Deterministicf("store: %s holds the run %q, not %q; give this run another out directory, or remove %s to start over", dir, old.Name, m.Name, dir)
	}
	sweepTemps(dir)
	if err := writeJSON(filepath.Join(dir, ManifestFile), m); err != nil {
		return nil, err
	}
	return &Store{dir: dir, manifest: m}, nil
}

// Open opens an existing run directory.
func Open(dir string) (*Store, error) {
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	return &Store{dir: dir, manifest: m}, nil
}

func readManifest(dir string) (Manifest, error) {
	var m Manifest
	path := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return m, fmt.Errorf("store: %s is not a run directory (no %s): %w", dir, ManifestFile, fs.ErrNotExist)
		}
		return m, fmt.Errorf("store: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		// Deterministic (exit 3): reading it again meets the same bytes.
		return m, fault.Deterministicf("store: %s: %v; the file is damaged: restore it or remove the run directory", path, err)
	}
	return m, nil
}

// Dir is the run directory.
func (s *Store) Dir() string { return s.dir }

// Manifest is the run's manifest.
func (s *Store) Manifest() Manifest { return s.manifest }

var idPattern = regexp.MustCompile(`^[0-9a-f]{16,64}$`)

// ItemDir is the directory of item id.
func (s *Store) ItemDir(id string) string { return filepath.Join(s.dir, ItemsDir, id) }

// Status of an item in the store.
type Status int

// The statuses are ordered from worst to best (merge keeps the best copy of an item).
const (
	Missing Status = iota // never run, or interrupted before its marker
	// Damaged is an item with a marker whose files do not read back or do not say
	// what its id says (Check tells why). It is never scored or reused: a resumed run
	// plays it again, alone.
	Damaged
	Failed // ran and failed; a resumed run tries it again
	Done   // finished; a resumed run reuses it
)

func (st Status) String() string {
	return [...]string{"missing", "damaged", "failed", "done"}[st]
}

// Status reports the state of item id. A marked item is verified first (Check): a
// damaged one is Damaged, never Done.
func (s *Store) Status(id string) Status {
	st := statusOf(s.ItemDir(id))
	if st != Missing && s.Check(id) != nil {
		return Damaged
	}
	return st
}

func statusOf(dir string) Status {
	if exists(filepath.Join(dir, DoneMarker)) {
		return Done
	}
	if exists(filepath.Join(dir, FailedMarker)) {
		return Failed
	}
	return Missing
}

// Check verifies a marked item as it is read: one marker only; every file there and
// parseable; item.json naming this id, and (when it carries its key) a key that hashes
// to it with the model and scenario it names, so an item is never scored under another
// model; the audible output (audible.flac, or audible.wav in older runs: audible.go)
// complete, mono at the model's output rate, and for a done item exactly as long as the
// frames played. It returns nil for a sound item, and for a
// missing one.
func (s *Store) Check(id string) error {
	dir := s.ItemDir(id)
	st := statusOf(dir)
	if st == Missing {
		return nil
	}
	damaged := func(format string, args ...any) error {
		return fmt.Errorf("store: item %s is damaged: %s; a resumed run (duplexmpe run) plays it again", id, fmt.Sprintf(format, args...))
	}
	if st == Done && exists(filepath.Join(dir, FailedMarker)) {
		return damaged("it has both a done and a failed marker")
	}
	var (
		meta Meta
		info SessionInfo
		tl   timeline.Timeline
		eps  []timeline.Episode
		text []record.TextPiece
		fail failureInfo
	)
	reads := []struct {
		name string
		v    any
	}{{ItemFile, &meta}, {TimelineFile, &tl}, {EpisodesFile, &eps}, {TextFile, &text}, {SessionFile, &info}}
	if st == Failed {
		reads = append(reads, struct {
			name string
			v    any
		}{FailureFile, &fail})
	}
	for _, r := range reads {
		b, err := os.ReadFile(filepath.Join(dir, r.name))
		if err != nil {
			return damaged("%s: %v", r.name, errors.Unwrap(err))
		}
		if err := json.Unmarshal(b, r.v); err != nil {
			return damaged("%s does not parse (%v)", r.name, err)
		}
	}
	if meta.ID != id {
		return damaged("item.json says it is item %q", meta.ID)
	}
	if k := meta.Key; k.Model.Name != "" || k.Scenario.ID != "" {
		if meta.Model != k.Model.Name || meta.ScenarioID != k.Scenario.ID {
			return damaged("item.json names model %q and scenario %q, but its key is of model %q and scenario %q",
				meta.Model, meta.ScenarioID, k.Model.Name, k.Scenario.ID)
		}
		if got := k.ID(); got != id {
			return damaged("item.json's key hashes to id %s, not to this item's id", got)
		}
	}
	if st == Failed && fail.Failure == "" {
		return damaged("failure.json says no reason")
	}
	f := info.Format
	if f.OutputRate <= 0 {
		return nil // failed before the model declared its format: nothing was heard
	}
	path := AudibleFile(dir)
	if path == "" {
		if st == Failed {
			return nil
		}
		return damaged("%s: it is missing", AudibleFLAC)
	}
	name := filepath.Base(path)
	samples, err := checkAudible(path, f.OutputRate)
	if err != nil {
		return damaged("%s: %v", name, err)
	}
	if st == Done && f.InputRate > 0 {
		want := int64(info.Frames) * int64(f.FrameSize) * int64(f.OutputRate) / int64(f.InputRate)
		if samples != want {
			return damaged("%s holds %d samples, but %d frames of %d at %d Hz make %d at %d Hz",
				name, samples, info.Frames, f.FrameSize, f.InputRate, want, f.OutputRate)
		}
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// IDs lists the items that have a directory, sorted.
func (s *Store) IDs() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, ItemsDir))
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var ids []string
	for _, e := range ents {
		if e.IsDir() && idPattern.MatchString(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// Failure is why item id failed (its failure.json); "" for an item that did not fail.
func (s *Store) Failure(id string) (string, error) {
	if s.Status(id) != Failed {
		return "", nil
	}
	var f failureInfo
	err := readJSON(filepath.Join(s.ItemDir(id), FailureFile), &f)
	return f.Failure, err
}

// ReadMeta reads item id's item.json whatever its status: which (model, conversation)
// it is and its key. Plans compare the keys of items on disk with their own.
func (s *Store) ReadMeta(id string) (Meta, error) {
	var m Meta
	err := readJSON(filepath.Join(s.ItemDir(id), ItemFile), &m)
	return m, err
}

// Planned lists the run's plan; for a directory written before plans were recorded,
// every item on disk that has a readable item.json, in id order.
func (s *Store) Planned() ([]PlanEntry, error) {
	if len(s.manifest.Plan) > 0 {
		return s.manifest.Plan, nil
	}
	ids, err := s.IDs()
	if err != nil {
		return nil, err
	}
	var plan []PlanEntry
	for _, id := range ids {
		if m, err := s.ReadMeta(id); err == nil && m.ID == id {
			plan = append(plan, m.Entry())
		}
	}
	return plan, nil
}

// Stale lists the items on disk that the run's plan does not hold: played under
// another model list, model identity or config, scenario or schedule. They are kept
// (the plan that made them may come back), never counted; RemoveItems removes them.
func (s *Store) Stale() ([]string, error) {
	if len(s.manifest.Plan) == 0 {
		return nil, nil
	}
	in := make(map[string]bool, len(s.manifest.Plan))
	for _, e := range s.manifest.Plan {
		in[e.ID] = true
	}
	ids, err := s.IDs()
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, id := range ids {
		if !in[id] {
			stale = append(stale, id)
		}
	}
	return stale, nil
}

// RemoveItems removes the directories of the given items.
func (s *Store) RemoveItems(ids []string) error {
	for _, id := range ids {
		if !idPattern.MatchString(id) {
			return fmt.Errorf("store: item id %q is not a hex digest", id)
		}
		if err := os.RemoveAll(s.ItemDir(id)); err != nil {
			return fmt.Errorf("store: %w", err)
		}
	}
	return atomicfile.SyncDir(filepath.Join(s.dir, ItemsDir))
}

// Meta says which (model, conversation) an item is.
type Meta struct {
	ID         string  `json:"id"`
	Model      string  `json:"model"`
	ScenarioID string  `json:"scenario_id"`
	PairID     string  `json:"pair_id,omitempty"`
	Condition  string  `json:"condition,omitempty"`
	TPosition  string  `json:"t_position,omitempty"`
	Repeat     int     `json:"repeat,omitempty"` // which repeat (0, the first, is left out)
	Key        ItemKey `json:"key"`
}

// SessionInfo is session.json: the model's format, the frames played, the step latency
// and the wait after T. It is the one declaration of that file's shape; core/plan and
// core/report read it through ReadItemDir.
type SessionInfo struct {
	Format  sdk.Format     `json:"format"`
	Frames  int            `json:"frames"`
	Latency record.Latency `json:"latency"`
	TWait   *record.TWait  `json:"t_wait,omitempty"`
}

type failureInfo struct {
	Failure string `json:"failure"`
}

// Item is everything stored for one (model, conversation).
type Item struct {
	Meta   Meta
	Record *record.Record // with Audible and Episodes
	Status Status
}

// Save writes an item: every file atomically, then the marker (done, or failed when the
// record failed). Saving over an item replaces it whole; its old marker is removed first,
// so a crash in between leaves an unmarked item, which is run again.
func (s *Store) Save(meta Meta, rec *record.Record) error {
	if !idPattern.MatchString(meta.ID) {
		return fmt.Errorf("store: item id %q is not a hex digest", meta.ID)
	}
	dir := s.ItemDir(meta.ID)
	// A new record replaces everything of the old one (its marker first), verdicts
	// included: they judged the old audio.
	for _, m := range []string{DoneMarker, FailedMarker} {
		if err := os.Remove(filepath.Join(dir, m)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("store: %w", err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	// The item's own entry must be on disk before its marker can be.
	if err := atomicfile.SyncDir(filepath.Dir(dir)); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	episodes := rec.Episodes
	if episodes == nil {
		episodes = []timeline.Episode{}
	}
	text := rec.Text
	if text == nil {
		text = []record.TextPiece{}
	}
	writes := []struct {
		name string
		v    any
	}{
		{ItemFile, meta},
		{TimelineFile, rec.Timeline},
		{EpisodesFile, episodes},
		{TextFile, text},
		{SessionFile, SessionInfo{Format: rec.Format, Frames: rec.Frames, Latency: rec.Latency, TWait: rec.TWait}},
	}
	if rec.Failed() {
		writes = append(writes, struct {
			name string
			v    any
		}{FailureFile, failureInfo{rec.Failure}})
	}
	for _, w := range writes {
		if err := writeJSON(filepath.Join(dir, w.name), w.v); err != nil {
			return err
		}
	}
	if rec.Audible.Rate > 0 {
		if err := writeAudible(dir, rec.Audible); err != nil {
			return err
		}
	}
	marker := DoneMarker
	if rec.Failed() {
		marker = FailedMarker
	}
	return writeFile(filepath.Join(dir, marker), []byte(marker+"\n"))
}

// Load reads item id back, verified (Check): a damaged item is an error saying why.
func (s *Store) Load(id string) (*Item, error) {
	dir := s.ItemDir(id)
	it := &Item{Status: statusOf(dir), Record: &record.Record{}}
	if it.Status == Missing {
		return nil, fmt.Errorf("store: item %s has no finished record in %s", id, dir)
	}
	if err := s.Check(id); err != nil {
		return nil, err
	}
	var info SessionInfo
	reads := []struct {
		name string
		v    any
	}{
		{ItemFile, &it.Meta},
		{TimelineFile, &it.Record.Timeline},
		{EpisodesFile, &it.Record.Episodes},
		{TextFile, &it.Record.Text},
		{SessionFile, &info},
	}
	var fail failureInfo
	if it.Status == Failed {
		reads = append(reads, struct {
			name string
			v    any
		}{FailureFile, &fail})
	}
	for _, r := range reads {
		if err := readJSON(filepath.Join(dir, r.name), r.v); err != nil {
			return nil, err
		}
	}
	it.Record.ConversationID = it.Meta.ScenarioID
	it.Record.Format, it.Record.Frames, it.Record.Latency, it.Record.TWait = info.Format, info.Frames, info.Latency, info.TWait
	it.Record.Failure = fail.Failure
	pcm, ok, err := readAudible(dir)
	if err != nil {
		return nil, fmt.Errorf("store: item %s: %w", id, err)
	}
	if ok {
		it.Record.Audible = pcm
	}
	return it, nil
}

// LoadMeta reads only which (model, conversation) item id is, and its status. A damaged
// item gives its status with Check's error.
func (s *Store) LoadMeta(id string) (Meta, Status, error) {
	var m Meta
	st := s.Status(id)
	switch st {
	case Missing:
		return m, st, fmt.Errorf("store: item %s has no finished record in %s", id, s.ItemDir(id))
	case Damaged:
		return m, st, s.Check(id)
	}
	err := readJSON(filepath.Join(s.ItemDir(id), ItemFile), &m)
	return m, st, err
}

// SaveVerdicts writes the scoring verdicts of item id (any JSON value) atomically.
func (s *Store) SaveVerdicts(id string, v any) error {
	if s.Status(id) != Done {
		return fmt.Errorf("store: item %s is not done; only finished items are scored", id)
	}
	return writeJSON(filepath.Join(s.ItemDir(id), VerdictsFile), v)
}

// LoadVerdicts reads the verdicts of item id into v; fs.ErrNotExist when not scored yet.
func (s *Store) LoadVerdicts(id string, v any) error {
	return readJSON(filepath.Join(s.ItemDir(id), VerdictsFile), v)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("store: %s: %w", path, err)
	}
	return writeFile(path, append(b, '\n'))
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("store: %s: %v (the file is damaged; remove the item directory to run it again)", path, err)
	}
	return nil
}

// writeFile writes atomically and durably (core/atomicfile).
func writeFile(path string, b []byte) error {
	if err := atomicfile.WriteFile(path, b); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}
