package report

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/reference"
	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// Run is one scored run as the report and the viewer show it, built once by whoever
// scored it (core/app) and handed to Run.Write: nothing here reads a stage's files
// again. Directories stay in Meta as provenance (the run, the dataset the viewer takes
// the room channel and gold answers from, the reference).
type Run struct {
	Summary score.Summary
	Meta    Meta
	// Reference is the text reference run of Meta.ReferenceDir; nil without one.
	Reference *reference.Result
	// Items are the conversations of the run as it stands (its current plan), read once
	// with their verdicts; the items of earlier plans are not among them, so they appear
	// in no explorer event, rate cell, page or link. None: no explorer, no viewer.
	Items []*viewer.Conv
	// Dataset is the dataset the run played (Meta.DatasetDir), read once: the viewer's
	// room channel and gold answers and explain come from it; DatasetErr is why it could
	// not be read (the pages and explain say so; the report is still written).
	Dataset    *dataset.Dataset
	DatasetErr error
}

// NewRun is the Run of a summary, its meta, its items and the dataset it played: ds is
// the dataset when the caller has it read already (scoring has), nil to read it from
// Meta.DatasetDir. It reads the reference run Meta.ReferenceDir names (one that cannot
// be read is an error).
func NewRun(s score.Summary, meta Meta, items []*viewer.Conv, ds *dataset.Dataset) (Run, error) {
	ref, err := loadReference(meta.ReferenceDir)
	if err != nil {
		return Run{}, err
	}
	r := Run{Summary: s, Meta: meta, Reference: ref, Items: items, Dataset: ds}
	if ds == nil && len(items) > 0 {
		r.Dataset, r.DatasetErr = viewer.LoadDataset(meta.DatasetDir)
	}
	return r, nil
}

// CurrentItems reads the items of the run directory dir that its plan holds (the run
// as it stands): items of earlier plans (store.Stale) are left out. A directory that
// is not a run store, or records no plan, gives every item it has.
func CurrentItems(dir string) []*viewer.Conv {
	return viewer.ReadOf(dir, CurrentPlan(dir))
}

// CurrentPlan says whether an item id is of dir's current plan; nil (every item) when
// dir is not a run store or records no plan.
func CurrentPlan(dir string) func(id string) bool {
	if _, err := os.Stat(filepath.Join(dir, store.ManifestFile)); err != nil {
		return nil
	}
	st, err := store.Open(dir)
	if err != nil || len(st.Manifest().Plan) == 0 {
		return nil
	}
	return PlanSet(st.Manifest().Plan)
}

// PlanSet is membership in a plan's item ids.
func PlanSet(plan []store.PlanEntry) func(id string) bool {
	in := make(map[string]bool, len(plan))
	for _, e := range plan {
		in[e.ID] = true
	}
	return func(id string) bool { return in[id] }
}

// LoadRun is the Run of a scored run directory (or a score --out view): its summary and
// meta (Load), the reference they name, and its current items.
func LoadRun(dir string) (Run, error) {
	s, meta, err := Load(dir)
	if err != nil {
		return Run{}, err
	}
	return NewRun(s, meta, CurrentItems(dir), nil)
}

// Rerender writes the report of a scored run directory again from its summary, meta
// and current items (LoadRun); a directory with no report yet is left as it is
// (false). `duplexmpe prune` calls it, so the report stops showing what it removed.
func Rerender(dir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, SummaryFile)); err != nil {
		return false, nil
	}
	r, err := LoadRun(dir)
	if err != nil {
		return false, fmt.Errorf("report: re-rendering %s: %w", dir, err)
	}
	// The provenance counts the items of earlier plans kept in the directory: count them
	// as they are now.
	if st, err := store.Open(dir); err == nil {
		if stale, err := st.Stale(); err == nil {
			r.Meta.StaleItems = len(stale)
		}
	}
	if err := Save(dir, r.Summary, r.Meta); err != nil {
		return false, err
	}
	if _, err := r.Write(dir); err != nil {
		return false, err
	}
	return true, nil
}
