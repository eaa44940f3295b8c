package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A release is a frozen, versioned scenario set in the repository (docs/datasheet.md):
// a directory holding ReleaseFile and one directory per split, each a scripts-only set
// (scenarios.jsonl). The manifest records the SHA-256 of every scenario and of every
// split file, so a built copy can be checked against it (VerifyRelease).
const ReleaseFile = "MANIFEST.json"

// Release is the manifest of a release.
type Release struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Licence of the data (the code's is the repository's LICENSE).
	Licence string `json:"licence"`
	// GapSeed drew the natural gaps (gap_after_s) when the sources were compiled.
	GapSeed int64 `json:"gap_seed"`
	// LapseShare is the share of ordinary turns the compiler gave a lapse (3-8 s of
	// silence, docs/protocol.md section 3.3); absent (0) in releases without lapses.
	LapseShare float64 `json:"lapse_share,omitempty"`
	// Sources are the authoring files the splits were compiled from, relative to the
	// release directory, with their SHA-256.
	Sources []FileHash     `json:"sources"`
	Splits  []SplitRelease `json:"splits"`
	// SHA256 is the hash of the split files' hashes in order ("sha256:<hex>"): one
	// value that names the whole release.
	SHA256 string `json:"sha256"`
}

// FileHash is a file and its SHA-256.
type FileHash struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

// SplitRelease is one split of a release.
type SplitRelease struct {
	Name string `json:"name"`
	// File is the split's scenarios.jsonl, relative to the release directory.
	File      string `json:"file"`
	SHA256    string `json:"sha256"`
	Pairs     int    `json:"pairs"`
	Scenarios int    `json:"scenarios"`
	// ScenarioHashes maps each scenario id to ScenarioHash of its script.
	ScenarioHashes map[string]string `json:"scenario_hashes"`
}

// ScenarioHash is the SHA-256 of a scenario's script: its JSON without what a build adds
// (each turn's clip and duration), so a built copy hashes as its source.
func ScenarioHash(s Scenario) string {
	s.Turns = append([]Turn(nil), s.Turns...)
	for i := range s.Turns {
		s.Turns[i].Clip, s.Turns[i].DurationS = "", 0
	}
	raw, _ := json.Marshal(&s)
	h := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(h[:])
}

// NewSplitRelease describes one split's scenarios as written to file (its bytes raw).
func NewSplitRelease(name, file string, raw []byte, scs []Scenario) SplitRelease {
	sp := SplitRelease{Name: name, File: file, SHA256: ContentHash(raw), Scenarios: len(scs), ScenarioHashes: map[string]string{}}
	pairs := map[string]bool{}
	for _, s := range scs {
		pairs[s.PairID] = true
		sp.ScenarioHashes[s.ScenarioID] = ScenarioHash(s)
	}
	sp.Pairs = len(pairs)
	return sp
}

// Seal computes the release's own hash from its splits.
func (r *Release) Seal() {
	h := sha256.New()
	for _, s := range r.Splits {
		fmt.Fprintf(h, "%s\x00%s\n", s.Name, s.SHA256)
	}
	r.SHA256 = "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// LoadRelease reads a release manifest (the file, or the directory holding it).
func LoadRelease(path string) (*Release, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, ReleaseFile)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("release manifest: %w", err)
	}
	var r Release
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("release manifest %s: %w", path, err)
	}
	if r.Name == "" || r.Version == "" || len(r.Splits) == 0 {
		return nil, fmt.Errorf("release manifest %s: name, version and splits are required", path)
	}
	return &r, nil
}

// ReleaseOf finds the release a scenarios file belongs to: the manifest in the parent of
// the file's directory (release/<split>/scenarios.jsonl) whose split has exactly this
// content hash. It returns nil when there is none: the set is then not a release.
func ReleaseOf(scenariosFile, contentHash string) (*Release, *SplitRelease) {
	dir := filepath.Dir(filepath.Dir(scenariosFile))
	r, err := LoadRelease(filepath.Join(dir, ReleaseFile))
	if err != nil {
		return nil, nil
	}
	for i := range r.Splits {
		if r.Splits[i].SHA256 == contentHash {
			return r, &r.Splits[i]
		}
	}
	return nil, nil
}

// ReleaseIdentity is what a build of a release split records as its generator identity
// in dataset.json.
func ReleaseIdentity(r *Release, s *SplitRelease) map[string]string {
	return map[string]string{"release": r.Name, "release_version": r.Version, "split": s.Name, "release_sha256": r.SHA256}
}

// ReleaseLabelOf is how a release split is named in dataset.json, run manifests and
// reports ("open-v1 1.0.0, split dev"), from a generator identity; "" when the identity
// is not a release's (ReleaseIdentity).
func ReleaseLabelOf(id map[string]string) string {
	if id["release"] == "" {
		return ""
	}
	return fmt.Sprintf("%s %s, split %s", id["release"], id["release_version"], id["split"])
}

// ReleaseLabel is ReleaseLabelOf a release split.
func ReleaseLabel(r *Release, s *SplitRelease) string { return ReleaseLabelOf(ReleaseIdentity(r, s)) }

// VerifyRelease checks a loaded (usually built) set against a release: it must be one
// split, scenario for scenario (ScenarioHash, so clips and durations a build added do
// not count), with nothing missing and nothing extra. It returns the split matched and
// every difference; the clips themselves are Validate's (clips.sha256).
func VerifyRelease(d *Dataset, r *Release) (*SplitRelease, []string) {
	var best *SplitRelease
	bestHits := -1
	for i := range r.Splits {
		hits := 0
		for _, s := range d.Scenarios {
			if _, ok := r.Splits[i].ScenarioHashes[s.ScenarioID]; ok {
				hits++
			}
		}
		if hits > bestHits {
			best, bestHits = &r.Splits[i], hits
		}
	}
	var problems []string
	if bestHits <= 0 {
		return nil, []string{fmt.Sprintf("no scenario of %s is in release %s %s", d.File, r.Name, r.Version)}
	}
	seen := map[string]bool{}
	for i, s := range d.Scenarios {
		line := 0
		if i < len(d.Lines) {
			line = d.Lines[i]
		}
		want, ok := best.ScenarioHashes[s.ScenarioID]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s:%d: scenario %s is not in split %s of %s %s", d.File, line, s.ScenarioID, best.Name, r.Name, r.Version))
		case ScenarioHash(s) != want:
			problems = append(problems, fmt.Sprintf("%s:%d: scenario %s differs from the release (script hash %s, release %s)", d.File, line, s.ScenarioID, ScenarioHash(s), want))
		}
		seen[s.ScenarioID] = true
	}
	var missing []string
	for id := range best.ScenarioHashes {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	sort.Strings(missing)
	for _, id := range missing {
		problems = append(problems, fmt.Sprintf("%s: scenario %s of split %s is missing", d.File, id, best.Name))
	}
	return best, problems
}
