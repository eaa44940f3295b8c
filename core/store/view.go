package store

import (
	"fmt"
	"os"
	"path/filepath"
)

// View is a scored view of a run kept outside its directory (`score --out DIR`): DIR
// holds the verdicts of each item (verdicts/<id>.json), the summary and the report of
// one scoring, never audio; the recordings stay in the run directory. A run directory
// is its own first view: its verdicts live in its items (Store.SaveVerdicts).
type View struct{ dir string }

// OpenView opens (creating it when needed) the view directory dir.
func OpenView(dir string) (*View, error) {
	if err := os.MkdirAll(filepath.Join(dir, VerdictsDir), 0o755); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return &View{dir: dir}, nil
}

// Dir is the view directory.
func (v *View) Dir() string { return v.dir }

// SaveVerdicts writes the verdicts of item id (any JSON value) atomically.
func (v *View) SaveVerdicts(id string, val any) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("store: item id %q is not a hex digest", id)
	}
	return writeJSON(filepath.Join(v.dir, VerdictsDir, id+".json"), val)
}

// LoadVerdicts reads the verdicts of item id into val; fs.ErrNotExist when not scored.
func (v *View) LoadVerdicts(id string, val any) error {
	return readJSON(filepath.Join(v.dir, VerdictsDir, id+".json"), val)
}
