package report

import (
	"bytes"
	"fmt"
	"html/template"
	"path/filepath"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// CompareMarkdownFile and CompareHTMLFile are what WriteComparison writes.
const (
	CompareMarkdownFile = store.CompareMarkdownFile
	CompareHTMLFile     = store.CompareHTMLFile
)

// ComparedRun is one run of a comparison page: its directory, its report's title and
// its main table as `run` and `report` print it (MainTable).
type ComparedRun struct {
	Dir, Title, Table string
}

// WriteComparison writes one page with the main tables of several scored runs side by
// side (dirs, in the order given; each as report reads it: Load) into dest:
// compare.md and compare.html. It re-scores nothing and reads no item. A directory
// that is not a scored run is an error naming it, classed as `report` classes it.
func WriteComparison(dest string, dirs []string) ([]ComparedRun, error) {
	var runs []ComparedRun
	for _, dir := range dirs {
		s, meta, err := Load(dir)
		if err != nil {
			return nil, fmt.Errorf("report --compare: %s: %w", dir, err) // as report classes it
		}
		var b strings.Builder
		if err := MainTable(&b, s); err != nil {
			return nil, err
		}
		runs = append(runs, ComparedRun{Dir: dir, Title: Title(meta), Table: b.String()})
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# Duplex-MPE: %d runs side by side\n\nEach run's main table as its own report prints it (`duplexmpe report DIR`): rates as successes/denominator with the Wilson 95%% interval below. Runs are compared item by item, with exact tests, by `duplexmpe compare DIR DIR...`.\n", len(runs))
	for _, r := range runs {
		fmt.Fprintf(&md, "\n## %s\n\n`%s`\n\n```\n%s```\n", r.Title, r.Dir, r.Table)
	}
	var page bytes.Buffer
	if err := compareTemplate.Execute(&page, runs); err != nil {
		return nil, err
	}
	for name, data := range map[string][]byte{CompareMarkdownFile: []byte(md.String()), CompareHTMLFile: page.Bytes()} {
		if err := atomicfile.WriteFile(filepath.Join(dest, name), data); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

var compareTemplate = template.Must(template.New("compare").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Duplex-MPE: {{len .}} runs side by side</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em}
.runs{display:flex;gap:1.5em;align-items:flex-start;overflow-x:auto}
.run{flex:0 0 auto;border:1px solid #ccc;border-radius:6px;padding:0 1em 1em}
pre{font-size:12px;line-height:1.35}
</style></head><body>
<h1>Duplex-MPE: {{len .}} runs side by side</h1>
<p>Each run's main table as its own report prints it (<code>duplexmpe report DIR</code>): rates as successes/denominator with the Wilson 95% interval below. Runs are compared item by item, with exact tests, by <code>duplexmpe compare DIR DIR...</code>.</p>
<div class="runs">{{range .}}
<section class="run"><h2>{{.Title}}</h2><p><code>{{.Dir}}</code></p><pre>{{.Table}}</pre></section>{{end}}
</div></body></html>
`))
