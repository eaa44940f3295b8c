package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"github.com/duplexmpe/duplexmpe/core/rundir"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/plan"
	"github.com/duplexmpe/duplexmpe/core/reference"
	"github.com/duplexmpe/duplexmpe/core/score"
)

// Results is results.json: the meta and the whole summary, as the score package
// encodes it.
type Results struct {
	Meta    Meta          `json:"meta"`
	Summary score.Summary `json:"summary"`
	// Reference is the text reference run of Meta.ReferenceDir; absent without one.
	Reference *reference.Result `json:"reference,omitempty"`
}

// WriteAll renders report.md, results.json, results.csv and report.html into dir
// (created if needed). Each file is written atomically. When dir is a run directory
// with per-item records (items/<id>/), the HTML gets the conversation explorer, every
// table cell links to the events behind it, and the viewer directory (viewer/) gets a
// page per conversation and stereo recordings within a budget (see viewer.go). When
// meta.ReferenceDir is set, its reference.json is read and shown in every format; one
// that cannot be read is an error and nothing is written.
func WriteAll(dir string, s score.Summary, meta Meta) error {
	_, err := Write(dir, s, meta)
	return err
}

// Findings are what writing a report found that whoever runs the command should be told
// at once, not only in report.html.
type Findings struct {
	// NoSpeech lists the models that emitted audio in which the VAD never found speech
	// (the "Audio but no speech" section).
	NoSpeech []NoSpeech
}

// Write is WriteAll, and returns the Findings: the Run of the summary, the meta and the
// current items of dir (NewRun, CurrentItems), written into dir.
func Write(dir string, s score.Summary, meta Meta) (Findings, error) {
	r, err := NewRun(s, meta, CurrentItems(dir), nil)
	if err != nil {
		return Findings{}, err
	}
	return r.Write(dir)
}

// Write renders the run's report.md, results.json, results.csv and report.html into
// dir (created if needed), and with items the viewer's pages (viewer/), as WriteAll
// describes; item links are relative to dir.
func (r Run) Write(dir string) (Findings, error) {
	s, meta, ref, convs := r.Summary, r.Meta, r.Reference, r.Items
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Findings{}, fmt.Errorf("report: %w", err)
	}
	// The run checked its directory for links when it started; one made since (a
	// viewer/ folder replaced by a link out of it) is refused here, before the report
	// and the viewer's pages and recordings are written through it.
	if err := rundir.CheckLinks(dir); err != nil {
		return Findings{}, err
	}
	js, err := json.MarshalIndent(Results{Meta: meta, Summary: s, Reference: ref}, "", "  ")
	if err != nil {
		return Findings{}, fmt.Errorf("report: %s: %w", filepath.Join(dir, JSONFile), err)
	}
	csvData, err := csvBytes(s, meta)
	if err != nil {
		return Findings{}, fmt.Errorf("report: %s: %w", filepath.Join(dir, CSVFile), err)
	}
	var (
		audio map[string]viewer.AudioInfo
		pages map[string]string
	)
	if len(convs) > 0 {
		if audio, pages, err = viewer.Write(dir, convs, viewer.Options{Protocol: s.Protocol, Dataset: r.Dataset, DatasetErr: r.DatasetErr, RecordingsBudget: recordingsBudget(meta), Report: HTMLFile}); err != nil {
			return Findings{}, err
		}
	}
	page, err := htmlPage(s, meta, ref, convs, audio, pages)
	if err != nil {
		return Findings{}, fmt.Errorf("report: %s: %w", filepath.Join(dir, HTMLFile), err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{MarkdownFile, markdown(s, meta, ref)},
		{JSONFile, append(js, '\n')},
		{CSVFile, csvData},
		{HTMLFile, page},
	} {
		if err := writeAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			return Findings{}, err
		}
	}
	return Findings{NoSpeech: noSpeechDiagnostic(convs, audio)}, nil
}

// loadReference reads dir/reference.json; no dir means no reference.
func loadReference(dir string) (*reference.Result, error) {
	if dir == "" {
		return nil, nil
	}
	path := filepath.Join(dir, reference.JSONFile)
	r, err := reference.Load(path)
	if err != nil {
		return nil, fmt.Errorf("report: text reference %s cannot be read (%v); run `duplexmpe reference` to write it, or leave the reference out", path, err)
	}
	return &r, nil
}

// writeAtomic writes a file atomically and durably (core/atomicfile), so a reader never
// sees half a file.
func writeAtomic(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// recordingsBudget is the viewer's budget for its recordings: the report's own, or the
// one `plan` counts (plan.RecordingsBudget).
func recordingsBudget(meta Meta) int64 {
	if meta.RecordingsBudget > 0 {
		return meta.RecordingsBudget
	}
	return plan.RecordingsBudget
}
