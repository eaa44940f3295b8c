// Package report renders a score.Summary for people and programs: report.md,
// results.json, results.csv and a self-contained report.html (inline CSS, SVG plots and
// the explorer's script; no network), plus the plain-text main table the terminal prints
// at the end of a run. Every rate is shown with its numerator, denominator and Wilson 95%
// interval, per model and condition: the protocol has no aggregate (docs/protocol.md
// sections 5 and 6). In a run directory with items, the per-conversation half (the
// explorer's events, the viewer's pages and recordings) comes from core/report/viewer,
// the only part of the report that reads the items.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// Files a run directory holds for re-rendering the report (their names: core/store). The run and score commands
// write them (see Save); `duplexmpe report RUN_DIR` reads them (see Load).
const (
	SummaryFile = store.SummaryFile
	MetaFile    = store.ReportMetaFile
)

// Files WriteAll writes (their names: core/store).
const (
	MarkdownFile = store.ReportMarkdownFile
	JSONFile     = store.ResultsJSONFile
	CSVFile      = store.ResultsCSVFile
	HTMLFile     = store.ReportHTMLFile
)

// Meta says what the results are of; it heads every format.
type Meta struct {
	Run     string              `json:"run"`
	Harness provenance.Harness  `json:"harness"`
	Dataset provenance.Dataset  `json:"dataset"`
	Models  []provenance.Plugin `json:"models"`
	Judge   *provenance.Plugin  `json:"judge,omitempty"`
	ASR     *provenance.Plugin  `json:"asr,omitempty"`
	// Protocol and VAD are the values the run used (protocol.md section 8).
	Protocol protocol.Params `json:"protocol"`
	VAD      protocol.VAD    `json:"vad"`
	// FailedConversations counts, per model, the conversations that failed to run and
	// so are in no denominator.
	FailedConversations map[string]int `json:"failed_conversations,omitempty"`
	// JudgeVerdicts and UnparseableVerdicts count the judge's verdicts over all scored
	// spans and those it could not parse (they count as failures).
	JudgeVerdicts       int `json:"judge_verdicts,omitempty"`
	UnparseableVerdicts int `json:"unparseable_verdicts,omitempty"`
	// Unscored names each conversation a scorer's failure left unscored (model/scenario,
	// which plugin, which error); Missing each conversation of the run's plan that the
	// run store has no record of. Neither is in any rate.
	Unscored []string `json:"unscored,omitempty"`
	Missing  []string `json:"missing,omitempty"`
	// StaleItems counts the items of earlier plans kept in the run directory, not counted.
	StaleItems int `json:"stale_items,omitempty"`
	// Partial, when set, says which part of the dataset a `run --limit N` played: the
	// report's title and first row say the results are partial.
	Partial string `json:"partial,omitempty"`
	// Date of the run or of scoring, as the caller wants it shown (RFC 3339 is best).
	Date string `json:"date"`
	// ReferenceDir, when set, is the directory of a text reference run (its
	// reference.json, see core/reference): WriteAll shows its tables beside the speech
	// models. Absolute, or relative to the process's working directory.
	ReferenceDir string `json:"reference_dir,omitempty"`
	// DatasetDir is the directory of the dataset the run played (absolute). The viewer
	// rebuilds each conversation's room channel from its clips, checked against the
	// hashes the run recorded, and shows the gold answers; without it, or when the
	// dataset changed, the pages say so.
	DatasetDir string `json:"dataset_dir,omitempty"`
	// RecordingsBudget bounds the bytes of the viewer's stereo recordings
	// (viewer/<id>.wav); 0 means plan.RecordingsBudget, the figure duplexmpe plan counts.
	// `duplexmpe report --recordings-budget` sets it for one rendering.
	RecordingsBudget int64 `json:"recordings_budget,omitempty"`
}

// Save writes summary.json and report-meta.json into runDir (atomically), the two files
// Load reads back.
func Save(runDir string, s score.Summary, meta Meta) error {
	for _, f := range []struct {
		name string
		v    any
	}{{SummaryFile, s}, {MetaFile, meta}} {
		b, err := json.MarshalIndent(f.v, "", "  ")
		if err != nil {
			return fmt.Errorf("report: %s: %w", filepath.Join(runDir, f.name), err)
		}
		if err := writeAtomic(filepath.Join(runDir, f.name), append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// Load reads a run directory's stored summary.json and report-meta.json. Errors name the
// file and say what to do.
func Load(runDir string) (score.Summary, Meta, error) {
	var s score.Summary
	var m Meta
	if err := readJSON(runDir, SummaryFile, &s); err != nil {
		return s, m, err
	}
	if err := readJSON(runDir, MetaFile, &m); err != nil {
		return s, m, err
	}
	return s, m, nil
}

// maxStored bounds what Load reads: a summary is kilobytes to a few megabytes.
const maxStored = 256 << 20

func readJSON(runDir, name string, v any) error {
	path := filepath.Join(runDir, name)
	fix := fmt.Sprintf("run `duplexmpe score %s` first", runDir)
	redo := fmt.Sprintf("run `duplexmpe score %s` to write it again", runDir)
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, derr := os.Stat(runDir); errors.Is(derr, fs.ErrNotExist) {
			return fmt.Errorf("report: run directory %s does not exist", runDir)
		} else if derr != nil {
			return fmt.Errorf("report: run directory %s: %v", runDir, derr)
		}
		return fmt.Errorf("report: %s is missing; %s", path, fix)
	case err != nil:
		return fmt.Errorf("report: %s: %v", path, err)
	case info.IsDir():
		return fmt.Errorf("report: %s is a directory, not a file; %s", path, fix)
	case info.Size() > maxStored:
		return fmt.Errorf("report: %s is %d bytes, more than a summary can be; %s", path, info.Size(), fix)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("report: %s: %v", path, err)
	}
	if err := decode(b, v); err != nil {
		return fmt.Errorf("report: %s: %v; the file is damaged: %s", path, err, redo)
	}
	return nil
}

// decode parses one stored JSON document; trailing data is an error.
func decode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON document")
	}
	return nil
}

// Title is the report's title: the run's name, marked when the run is partial.
func Title(m Meta) string {
	title := "Duplex-MPE report"
	if m.Run != "" {
		title += ": " + m.Run
	}
	if m.Partial != "" {
		title += " (PARTIAL RUN)"
	}
	return title
}
