package report

import (
	"path/filepath"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"github.com/duplexmpe/duplexmpe/core/score"
)

// Issue 30 item 3: the run reaches the report as one value, the dataset included. A
// caller that has read the dataset (scoring has) hands it over and nothing reads it
// again: here Meta.DatasetDir names no folder, so a second read would fail. Without one,
// NewRun reads it once from Meta.DatasetDir, and a dataset that cannot be read is kept
// as the reason the pages give, not a failure of the report.
func TestRunCarriesTheDatasetReadOnce(t *testing.T) {
	items := []*viewer.Conv{{}}
	ds, err := dataset.Load(filepath.Join("..", "..", "datasets", "open-v1", "dev"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRun(score.Summary{}, Meta{DatasetDir: filepath.Join(t.TempDir(), "gone")}, items, ds)
	if err != nil || r.Dataset != ds || r.DatasetErr != nil {
		t.Fatalf("given dataset: %v, %p (want %p), %v", err, r.Dataset, ds, r.DatasetErr)
	}
	r, err = NewRun(score.Summary{}, Meta{DatasetDir: ds.Dir}, items, nil)
	if err != nil || r.Dataset == nil || len(r.Dataset.Scenarios) != len(ds.Scenarios) {
		t.Fatalf("read from Meta.DatasetDir: %v, %v", err, r.DatasetErr)
	}
	r, err = NewRun(score.Summary{}, Meta{DatasetDir: filepath.Join(t.TempDir(), "gone")}, items, nil)
	if err != nil || r.Dataset != nil || r.DatasetErr == nil {
		t.Fatalf("unreadable dataset: %v, %v", err, r.DatasetErr)
	}
}
