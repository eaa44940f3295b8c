package reference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/score/textfmt"
)

// File names written by Write.
const (
	JSONFile     = "reference.json"
	MarkdownFile = "reference.md"
)

// FormatVersion is the version of reference.json.
const FormatVersion = "1"

// RunResult is one pass over the dataset.
type RunResult struct {
	Decisions []Decision `json:"decisions"`
	Summary   Summary    `json:"summary"`
}

// Result is reference.json: what was asked of whom, every decision, the scores.
type Result struct {
	FormatVersion string            `json:"format_version"`
	Dataset       string            `json:"dataset"`
	DatasetHash   string            `json:"dataset_hash,omitempty"`
	LLM           provenance.Plugin `json:"llm"`
	Judge         provenance.Plugin `json:"judge"`
	Prompt        string            `json:"prompt"`
	PromptHash    string            `json:"prompt_hash"`
	Options       Options           `json:"options"`
	Runs          []RunResult       `json:"runs"`
	// Agreement compares the first two runs; nil with a single run.
	Agreement *Agreement `json:"agreement,omitempty"`
}

// Write writes reference.json and reference.md into dir (created if needed), each
// atomically.
func Write(dir string, r Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, JSONFile), append(raw, '\n')); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, MarkdownFile), Markdown(r))
}

// Load reads a reference.json.
func Load(path string) (Result, error) {
	var r Result
	raw, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if r.FormatVersion != FormatVersion {
		return r, fmt.Errorf("%s: format version %q, this harness reads %q", path, r.FormatVersion, FormatVersion)
	}
	return r, nil
}

// Table is one table of the reference section: the report can render these in its own
// formats beside the speech models' tables.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// Tables are the reference section's tables: per run, the main table (response,
// accuracy, silence per condition) and the paired table, in the report's column
// format. Run titles are numbered when there is more than one run.
func Tables(r Result) []Table {
	model := r.LLM.Name
	var out []Table
	for i, run := range r.Runs {
		suffix := ""
		if len(r.Runs) > 1 {
			suffix = fmt.Sprintf(" (run %d)", i+1)
		}
		main := Table{Title: "Text reference" + suffix, Header: []string{"model", "condition", "scenarios", "response", "accuracy", "silence",
			"N1", "N2", "N3", "N2 human", "N2 device", "unparseable"}}
		for _, e := range run.Summary.Entries {
			main.Rows = append(main.Rows, []string{model, e.Condition, fmt.Sprint(e.Scenarios), textfmt.Rate(e.Response), textfmt.Rate(e.Accuracy), textfmt.Rate(e.Silence),
				textfmt.Rate(e.SilenceByLabel["N1"]), textfmt.Rate(e.SilenceByLabel["N2"]), textfmt.Rate(e.SilenceByLabel["N3"]),
				textfmt.Rate(e.SilenceByAddressee["human"]), textfmt.Rate(e.SilenceByAddressee["device"]),
				fmt.Sprintf("%d/%d", e.Unparseable, e.Decisions)})
		}
		p := run.Summary.Paired
		m := p.Response
		paired := Table{Title: "Text reference: explicit vs implicit (paired McNemar)" + suffix,
			Header: []string{"model", "measure", "pairs", "explicit", "implicit", "b (explicit only)", "c (implicit only)", "difference", "p (exact McNemar)"},
			Rows: [][]string{{model, "response", fmt.Sprint(p.Pairs), textfmt.Paired(m.RateFirst, p.Pairs), textfmt.Paired(m.RateSecond, p.Pairs),
				fmt.Sprint(m.B), fmt.Sprint(m.C), textfmt.Signed(m.Difference), textfmt.P(m.P)}}}
		out = append(out, main, paired)
	}
	return out
}

// Markdown renders reference.md: a small section in the style of the report, with the
// main table and the paired table per run, then the agreement between runs.
func Markdown(r Result) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "## Text reference track: %s\n\n", md(r.LLM.Name))
	fmt.Fprintf(&b, "An LLM, not a speech model (protocol section 7): for every turn it reads the duty, the speaker-attributed transcript so far and the current turn, and decides RESPOND or SILENT, answering when it responds. "+
		"Dataset %s; llm %s %s; judge %s %s; prompt %s (%s). "+
		"Response: T turns decided RESPOND / every T; accuracy: correct answers / T turns decided RESPOND; silence: N1-N3 turns decided SILENT / every N1-N3 turn. "+
		"An unparseable reply (after %d retries) is a failure where it is scored.\n",
		md(r.Dataset), md(r.LLM.Plugin), md(r.LLM.Version), md(r.Judge.Plugin), md(r.Judge.Version), md(r.Prompt), md(shortHash(r.PromptHash)), r.Options.Retries)
	for _, t := range Tables(r) {
		fmt.Fprintf(&b, "\n### %s\n\n", md(t.Title))
		writeRow(&b, t.Header)
		b.WriteString("|" + strings.Repeat(" --- |", len(t.Header)) + "\n")
		for _, row := range t.Rows {
			writeRow(&b, row)
		}
	}
	if g := r.Agreement; g != nil {
		fmt.Fprintf(&b, "\nAgreement between runs 1 and 2: %.1f%% of decisions (%d/%d turns)", 100*g.Rate, g.Agree, g.Turns)
		if g.OnlyOne > 0 {
			fmt.Fprintf(&b, "; %d turns decided in one run only are left out", g.OnlyOne)
		}
		b.WriteString(".\n")
	}
	return b.Bytes()
}

func writeRow(b *bytes.Buffer, cells []string) {
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" " + md(c) + " |")
	}
	b.WriteString("\n")
}

func md(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "*", `\*`, "`", "\\`").Replace(s)
}

func shortHash(h string) string {
	if len(h) > len("sha256:")+12 {
		return h[:len("sha256:")+12]
	}
	return h
}
