package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// RunListing is one run directory as `duplexmpe runs` lists it.
type RunListing struct {
	// Dir is the run directory, as found under the folder listed.
	Dir string `json:"dir"`
	// Evaluation is the run file's evaluation block (run.json), else the manifest's name.
	Evaluation string `json:"evaluation"`
	// RunFile is the run file that made it (run.json); empty when unknown.
	RunFile string `json:"run_file,omitempty"`
	// Date is when the run last changed: its manifest or its summary, the later.
	Date time.Time `json:"date"`
	// Models are the model block names, in the run's order.
	Models []string `json:"models"`
	// Dataset and DatasetVersion name what it played (the manifest's dataset record).
	Dataset        string `json:"dataset"`
	DatasetVersion string `json:"dataset_version,omitempty"`
	// Planned, Done and Failed count the items of its plan by their markers.
	Planned int `json:"planned"`
	Done    int `json:"done"`
	Failed  int `json:"failed"`
	// Scored: the run has a summary (score ran); Partial: `run --limit` played it.
	Scored  bool `json:"scored"`
	Partial bool `json:"partial,omitempty"`
	// State says it in words: "complete, scored", "12 of 40 done, 2 failed", ...
	State string `json:"state"`
}

// ListRuns lists the run directories under root (root itself included): every folder
// holding a run manifest, sorted by path. It does not look inside a run directory. A
// root that does not exist is a deterministic error.
func ListRuns(root string) ([]RunListing, error) {
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		if err == nil {
			err = errors.New("not a folder")
		}
		return nil, fault.Deterministicf("runs: %s: %v; give a folder that holds run directories", root, err)
	}
	var out []RunListing
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			return nil // an unreadable folder lists nothing
		}
		if !d.IsDir() {
			return nil
		}
		if _, err := os.Stat(filepath.Join(path, store.ManifestFile)); err != nil {
			return nil
		}
		if l, err := listRun(path); err == nil {
			out = append(out, l)
		}
		return filepath.SkipDir // items, viewer, logs: nothing more to list below
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

func listRun(dir string) (RunListing, error) {
	s, err := store.Open(dir)
	if err != nil {
		return RunListing{}, err
	}
	m := s.Manifest()
	l := RunListing{Dir: dir, Evaluation: m.Name, Dataset: m.Dataset.Name, DatasetVersion: m.Dataset.Version}
	if info, err := ReadRunInfo(dir); err == nil {
		if info.Evaluation != "" {
			l.Evaluation = info.Evaluation
		}
		l.RunFile, l.Partial = info.RunFile, info.Partial != nil
	}
	for _, p := range m.Plugins {
		if p.Role == sdk.KindModel {
			l.Models = append(l.Models, p.Name)
		}
	}
	for _, f := range []string{store.ManifestFile, store.SummaryFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
			if f == store.SummaryFile {
				l.Scored = true
			}
			if st.ModTime().After(l.Date) {
				l.Date = st.ModTime().UTC().Truncate(time.Second)
			}
		}
	}
	plan, err := s.Planned()
	if err != nil {
		return RunListing{}, err
	}
	l.Planned = len(plan)
	for _, e := range plan {
		switch s.Marked(e.ID) {
		case store.Done:
			l.Done++
		case store.Failed:
			l.Failed++
		}
	}
	switch {
	case l.Planned > 0 && l.Done == l.Planned:
		l.State = "complete"
	default:
		l.State = fmt.Sprintf("%d of %d done", l.Done, l.Planned)
	}
	if l.Failed > 0 {
		l.State += fmt.Sprintf(", %d failed", l.Failed)
	}
	if l.Partial {
		l.State += ", partial (--limit)"
	}
	if l.Scored {
		l.State += ", scored"
	} else {
		l.State += ", not scored"
	}
	return l, nil
}

// PrintRuns writes the listing as a table, one run a line.
func PrintRuns(w io.Writer, runs []RunListing) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "no run directories here")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tevaluation\tdate (UTC)\tmodels\tdataset\tstate")
	for _, r := range runs {
		ds := r.Dataset
		if r.DatasetVersion != "" {
			ds += " " + r.DatasetVersion
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Dir, r.Evaluation, r.Date.Format("2006-01-02 15:04"), strings.Join(r.Models, ", "), ds, r.State)
	}
	tw.Flush()
}
