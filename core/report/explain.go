package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/report/viewer"
)

// ExplainItem explains the stored conversation id of the run directory runDir
// (viewer.Explain) under the run's protocol constants (summary.json, else
// manifest.json), with the gold answer from the dataset the report names
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
	var man struct {
		Protocol *protocol.Params `json:"protocol"`
	}
	f, merr := os.Open(filepath.Join(runDir, "manifest.json"))
	if merr == nil {
		merr = json.NewDecoder(io.LimitReader(f, maxStored)).Decode(&man)
		f.Close()
	}
	if merr != nil || man.Protocol == nil {
		if errors.Is(merr, fs.ErrNotExist) {
			return protocol.Params{}, Meta{}, fmt.Errorf("%s has no manifest.json: not a run directory", runDir)
		}
		return protocol.Params{}, Meta{}, fmt.Errorf("cannot read the protocol of the run in %s: %v", runDir, merr)
	}
	return *man.Protocol, Meta{}, nil
}
