package report

import (
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// ExplainItem explains the stored conversation id of the run directory runDir
// (viewer.Explain) under the run's protocol constants (summary.json, else the run
// store's manifest), with the gold answer from the dataset the report names
// (report-meta.json's dataset_dir).
func ExplainItem(runDir, id string) (*viewer.Item, error) {
	p, meta, err := runProtocol(runDir)
	if err != nil {
		return nil, err
	}
	return viewer.Explain(runDir, id, p, meta.DatasetDir)
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
