package report

import (
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// ExplainItem explains the stored conversation id of the run directory runDir
// (viewer.ExplainConv) under the run's protocol constants (summary.json, else the run
// store's manifest), with the gold answer from the dataset the report names
// (report-meta.json's dataset_dir): it builds the run's Run for that one item. An item
// of an earlier plan is explained too, and said to be superseded.
func ExplainItem(runDir, id string) (*viewer.Item, error) {
	p, meta, err := runProtocol(runDir)
	if err != nil {
		return nil, err
	}
	c, err := viewer.ReadItem(runDir, id)
	if err != nil {
		return nil, err
	}
	r := Run{Summary: score.Summary{Protocol: p}, Meta: meta, Items: []*viewer.Conv{c}}
	r.Dataset, r.DatasetErr = viewer.LoadDataset(meta.DatasetDir)
	it := r.Explain(runDir, c)
	if keep := CurrentPlan(runDir); keep != nil && !keep(id) {
		it.Problems = append(it.Problems, Superseded)
	}
	return it, nil
}

// Superseded is what explain says of an item of an earlier plan.
const Superseded = "superseded: this conversation is of an earlier plan of the run, so it is in no rate, no explorer event and no link of the report (duplexmpe prune removes it)"

// Explain explains one of the run's conversations, read from runDir, as its page does.
func (r Run) Explain(runDir string, c *viewer.Conv) *viewer.Item {
	return viewer.ExplainConv(runDir, c, r.Summary.Protocol, r.Dataset, r.DatasetErr)
}

// runProtocol is the protocol a run was scored under, and its report meta (empty when
// there is no report yet).
func runProtocol(runDir string) (protocol.Params, Meta, error) {
	s, meta, err := Load(runDir)
	if err == nil {
		return s.Protocol, meta, nil
	}
	st, err := store.Open(runDir)
	if err != nil {
		return protocol.Params{}, Meta{}, err
	}
	return st.Manifest().Params, Meta{}, nil
}
