package report

import (
	"bytes"
	"html/template"
	"regexp"

	"github.com/duplexmpe/duplexmpe/core/reference"
	"github.com/duplexmpe/duplexmpe/core/score"
)

// htmlSection is a section with its charts rendered.
type htmlSection struct {
	section
	Rendered []chart
}

// itemGroup is the items of one model and condition.
type itemGroup struct {
	Model, Condition string
	Items            []itemRow
}

type htmlData struct {
	Title    string
	Meta     table
	Sections []htmlSection
	Items    []itemGroup
	NItems   int
}

// htmlPage renders report.html: one self-contained file (inline CSS and SVG, no scripts,
// no external references), readable without a network.
func htmlPage(s score.Summary, m Meta, ref *reference.Result, items []itemRow) ([]byte, error) {
	d := htmlData{Title: "Duplex-MPE report", Meta: metaTable(s, m), NItems: len(items)}
	if m.Run != "" {
		d.Title += ": " + m.Run
	}
	for _, sec := range sections(s, m, ref) {
		hs := htmlSection{section: sec}
		for _, kind := range sec.Charts {
			hs.Rendered = append(hs.Rendered, charts(kind, s)...)
		}
		d.Sections = append(d.Sections, hs)
	}
	for _, it := range items {
		n := len(d.Items)
		if n == 0 || d.Items[n-1].Model != it.Model || d.Items[n-1].Condition != it.Condition {
			d.Items = append(d.Items, itemGroup{Model: it.Model, Condition: it.Condition})
			n++
		}
		d.Items[n-1].Items = append(d.Items[n-1].Items, it)
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

var rateCellRE = regexp.MustCompile(`^(-?\d+\.\d+) (\(\d+/\d+\)) (\[\d\.\d+, \d\.\d+\])$`)

// cell renders a table cell; a rate gets its parts styled: the rate bold, the count and
// the interval quieter.
func cell(s string) template.HTML {
	if m := rateCellRE.FindStringSubmatch(s); m != nil {
		return template.HTML(`<b>` + m[1] + `</b> <span class="kn">` + m[2] + `</span> <span class="ci">` + m[3] + `</span>`)
	}
	if len(s) > 3 && s[:3] == "n/a" {
		return template.HTML(`<span class="na">` + template.HTMLEscapeString(s) + `</span>`)
	}
	return template.HTML(template.HTMLEscapeString(s))
}

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"cell": cell,
	"svg":  func(s string) template.HTML { return template.HTML(s) }, // rendered by gonum/plot, text XML-escaped
	"base": func(p string) string {
		for i := len(p) - 1; i >= 0; i-- {
			if p[i] == '/' {
				return p[i+1:]
			}
		}
		return p
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
:root { --fg: #1b1f24; --muted: #5b6470; --line: #d8dde3; --head: #f3f5f7; --accent: #0072b2; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "Liberation Sans", Arial, sans-serif; color: var(--fg); margin: 0; }
.page { max-width: 1280px; margin: 0 auto; padding: 24px 32px 64px; }
h1 { font-size: 24px; margin: 0 0 12px; }
h3 { font-size: 15px; margin: 14px 0 4px; }
h2 { font-size: 19px; margin: 36px 0 6px; padding-top: 8px; border-top: 2px solid var(--line); }
p.intro { color: var(--muted); max-width: 900px; margin: 4px 0 12px; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
nav ol { columns: 2; max-width: 760px; padding-left: 22px; margin: 6px 0; }
.scroll { overflow-x: auto; margin: 8px 0 14px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--head); font-weight: 600; min-width: 5em; max-width: 11em; }
td { white-space: nowrap; }
tbody tr:nth-child(even) td { background: #fafbfc; }
table.meta td:first-child { font-weight: 600; background: var(--head); }
table.meta td { white-space: normal; max-width: 1000px; overflow-wrap: anywhere; }
table.meta thead { display: none; }
.kn { color: var(--muted); }
.ci { color: var(--muted); font-size: 12px; display: block; }
.na { color: #a15c00; }
.charts { display: flex; flex-wrap: wrap; gap: 12px 20px; }
figure { margin: 0; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 12px; max-width: 520px; }
details { margin: 6px 0; }
summary { cursor: pointer; font-weight: 600; }
td.files { white-space: normal; min-width: 13em; }
td.files a { margin-right: 8px; }
td.heard { white-space: normal; min-width: 12em; max-width: 20em; font-style: italic; }
tr:target td { background: #fff6cc; }
footer { color: var(--muted); margin-top: 40px; font-size: 12px; }
</style>
</head>
<body>
<div class="page">
<header>
<h1>{{.Title}}</h1>
<div class="scroll"><table class="meta"><thead><tr><th>field</th><th>value</th></tr></thead><tbody>
{{range .Meta.Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
</header>
<nav>
<h2 id="contents">Contents</h2>
<ol>
{{range .Sections}}<li><a href="#{{.ID}}">{{.Title}}</a></li>
{{end}}{{if .Items}}<li><a href="#items">Conversations ({{.NItems}})</a></li>
{{end}}</ol>
</nav>
<main>
{{range .Sections}}<section id="{{.ID}}">
<h2>{{.Title}}</h2>
<p class="intro">{{.Intro}}</p>
{{range .Tables}}{{if .Title}}<h3>{{.Title}}</h3>
{{end}}<div class="scroll"><table>
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td>{{cell .}}</td>{{end}}</tr>
{{else}}<tr><td colspan="{{len .Header}}">(none)</td></tr>
{{end}}</tbody>
</table></div>
{{end}}{{if .Rendered}}<div class="charts">
{{range .Rendered}}<figure>{{svg .SVG}}<figcaption>{{.Title}}</figcaption></figure>
{{end}}</div>
{{end}}</section>
{{end}}{{if .Items}}<section id="items">
<h2>Conversations</h2>
<p class="intro">Every (model, conversation) in the run directory, with links to its stored files (paths relative to this report, which sits in the run directory).</p>
{{range .Items}}<details>
<summary>{{if .Model}}{{.Model}}{{else}}(unreadable){{end}} {{.Condition}}: {{len .Items}} conversations</summary>
<div class="scroll"><table class="items">
<thead><tr><th>scenario</th><th>T position</th><th>status</th><th>T outcome</th><th>answer</th><th>answer heard</th><th>silence windows</th><th>N4 events</th><th>files</th></tr></thead>
<tbody>
{{range .Items}}<tr id="item-{{.ID}}"><td><a href="#item-{{.ID}}">{{.Scenario}}</a></td><td>{{.TPosition}}</td><td>{{.Status}}</td><td>{{.TOutcome}}</td><td>{{.Answer}}</td><td class="heard">{{.Heard}}</td><td>{{.Silence}}</td><td>{{.N4}}</td><td class="files">{{range .Files}}<a href="{{.}}">{{base .}}</a> {{end}}</td></tr>
{{end}}</tbody></table></div>
</details>
{{end}}</section>
{{end}}</main>
<footer>Generated by duplexmpe. Every rate: successes/denominator and a Wilson 95% interval; no aggregate across measures (protocol sections 5 and 6).</footer>
</div>
</body>
</html>
`))
