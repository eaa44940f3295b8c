package review

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
)

// Sheet file names.
const (
	CSVFile  = "sheet.csv"
	HTMLFile = "sheet.html"
)

// Columns of the sheet, in order; reviewers fill the last one (add reviewer_2, ... for
// more reviewers).
var Columns = []string{"id", "item", "model", "condition", "scenario_id", "turn", "event", "turn_label",
	"turn_text", "gold_answer", "transcript", "judge_label", "audio", "reviewer"}

// LabelsFor is the labels a reviewer may give a row of an event.
func LabelsFor(event string) []string {
	switch event {
	case EventAnswer:
		return []string{"correct", "incorrect"}
	case EventSilence:
		return []string{"acknowledgement", "intrusion"}
	}
	return nil
}

// plainCell keeps a spreadsheet from running free text (a transcript comes from the
// model's speech) as a formula: text that starts like one gets a leading quote, which
// spreadsheets show as text.
func plainCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// unplainCell undoes plainCell: the sheet read back gives the ids it was written with.
func unplainCell(s string) string {
	if len(s) > 1 && s[0] == '\'' && strings.ContainsRune("=+-@\t\r", rune(s[1])) {
		return s[1:]
	}
	return s
}

// WriteSheet writes dir/sheet.csv and dir/sheet.html (which plays each row's clip).
func WriteSheet(dir string, rows []Row) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(Columns)
	for _, r := range rows {
		cells := []string{r.ID, r.Item, r.Model, r.Condition, r.ScenarioID, strconv.Itoa(r.Turn), r.Event, r.TurnLabel,
			r.TurnText, r.GoldAnswer, r.Transcript, r.JudgeLabel, r.Audio, ""}
		// Every column: an id or a model name comes from a dataset or a run file, and a
		// scenario id starting with "=" was a formula (issue 31).
		for i := range cells {
			cells[i] = plainCell(cells[i])
		}
		w.Write(cells)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, CSVFile), b.Bytes()); err != nil {
		return err
	}
	b.Reset()
	if err := page.Execute(&b, rows); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, HTMLFile), b.Bytes())
}

var page = template.Must(template.New("sheet").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Duplex-MPE judge review</title>
<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px;vertical-align:top}th{background:#eee}</style>
</head><body>
<h1>Judge review sheet</h1>
<p>Listen to each clip and write your own label in the <code>reviewer</code> column of sheet.csv
(answers: correct or incorrect against the gold answer; speech in a silence window:
acknowledgement, a brief backchannel that adds no content, or intrusion). Judge labels are
shown for reference; decide from the audio. Then run <code>duplexmpe agreement sheet.csv</code>.</p>
<table>
<tr><th>id</th><th>model</th><th>condition</th><th>event</th><th>turn</th><th>gold answer</th><th>clip</th><th>transcript</th><th>judge</th></tr>
{{range .}}<tr id="{{.ID}}"><td>{{.ID}}</td><td>{{.Model}}</td><td>{{.Condition}}</td><td>{{.Event}}</td><td>{{.TurnLabel}}: {{.TurnText}}</td><td>{{.GoldAnswer}}</td>
<td><audio controls preload="none" src="{{.Audio}}"></audio></td><td>{{.Transcript}}</td><td>{{.JudgeLabel}}</td></tr>
{{end}}</table>
</body></html>
`))

// Sheet is a review sheet read back, with its reviewer columns.
type Sheet struct {
	Reviewers []string // the reviewer column names, in order
	Rows      []Row
}

// ReadSheet reads a filled sheet. Columns are found by name, so reviewers may reorder
// them or add their own; id, event, judge_label and at least one column named
// reviewer or reviewer_<something> are needed. A reviewer cell is empty (not reviewed)
// or one of the event's labels (LabelsFor), in any case.
func ReadSheet(path string) (Sheet, error) {
	f, err := os.Open(path)
	if err != nil {
		return Sheet{}, err
	}
	defer f.Close()
	return parseSheet(f, path)
}

func parseSheet(r io.Reader, name string) (Sheet, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return Sheet{}, fmt.Errorf("%s: empty; export a sheet with `duplexmpe sample RUN_DIR`", name)
	}
	if err != nil {
		return Sheet{}, fmt.Errorf("%s: %w", name, err)
	}
	col := map[string]int{}
	var sh Sheet
	var revCols []int
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := col[h]; dup {
			return Sheet{}, fmt.Errorf("%s line 1: column %q appears twice; give each reviewer column its own name (reviewer, reviewer_2, ...)", name, h)
		}
		col[h] = i
		if h == "reviewer" || strings.HasPrefix(h, "reviewer_") {
			sh.Reviewers = append(sh.Reviewers, h)
			revCols = append(revCols, i)
		}
	}
	for _, need := range []string{"id", "event", "judge_label"} {
		if _, ok := col[need]; !ok {
			return Sheet{}, fmt.Errorf("%s line 1: no %q column; the sheet needs the columns `duplexmpe sample` wrote", name, need)
		}
	}
	if len(revCols) == 0 {
		return Sheet{}, fmt.Errorf("%s line 1: no reviewer column (reviewer, reviewer_2, ...)", name)
	}
	get := func(rec []string, c string) string {
		if i, ok := col[c]; ok && i < len(rec) {
			return unplainCell(strings.TrimSpace(rec[i]))
		}
		return ""
	}
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Sheet{}, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		row := Row{ID: get(rec, "id"), Item: get(rec, "item"), Model: get(rec, "model"), Condition: get(rec, "condition"),
			ScenarioID: get(rec, "scenario_id"), Event: get(rec, "event"), TurnLabel: get(rec, "turn_label"),
			Transcript: get(rec, "transcript"), JudgeLabel: strings.ToLower(get(rec, "judge_label")), Audio: get(rec, "audio")}
		if row.ID == "" {
			return Sheet{}, fmt.Errorf("%s line %d: empty id", name, line)
		}
		if prev, dup := seen[row.ID]; dup {
			return Sheet{}, fmt.Errorf("%s line %d: id %q already on line %d", name, line, row.ID, prev)
		}
		seen[row.ID] = line
		labels := LabelsFor(row.Event)
		if labels == nil {
			return Sheet{}, fmt.Errorf("%s line %d: event %q is neither %q nor %q", name, line, row.Event, EventAnswer, EventSilence)
		}
		for k, c := range revCols {
			v := ""
			if c < len(rec) {
				v = strings.ToLower(strings.TrimSpace(rec[c]))
			}
			if v != "" && v != labels[0] && v != labels[1] {
				return Sheet{}, fmt.Errorf("%s line %d, column %s: %q is not a label for a %s row; write %s or %s, or leave it empty",
					name, line, sh.Reviewers[k], v, row.Event, labels[0], labels[1])
			}
			row.Reviewers = append(row.Reviewers, v)
		}
		sh.Rows = append(sh.Rows, row)
	}
	return sh, nil
}
