package report

import (
	"bytes"
	"fmt"
	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"html/template"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/reference"
	"github.com/duplexmpe/duplexmpe/core/score"
)

// htmlCell is a table cell and, when the run directory holds the conversations, the
// explorer view of the events behind it.
type htmlCell struct {
	Text string
	Href string
}

type htmlTable struct {
	Title  string
	Header []string
	Rows   [][]htmlCell
}

// htmlSection is a section with its charts rendered and its cells linked.
type htmlSection struct {
	ID, Title, Intro string
	Tables           []htmlTable
	Rendered         []chart
}

// exploreEvent is one row of the explorer's event table.
type exploreEvent struct {
	Conv                                     *viewer.Conv
	Page                                     string
	V                                        viewer.Event
	Label, Outcomes, Members, Third, Address string
	Pairing                                  viewer.Pairing
	Said                                     string
}

// NoSpeech is one model of the "audio but no speech" diagnostic: it emitted audio (a
// peak above the floor) in which the VAD found no speech, so every measure treats that
// audio as silence.
type NoSpeech struct {
	Model           string
	Conversations   int // with verdicts
	WithAudio       int // emitted audio (peak above the floor)
	WithoutSpeech   int // emitted audio, and the VAD found no speech
	NoSpeechAtAll   bool
	Example, Peak   string
	ExampleFileHref string
}

type htmlData struct {
	Title    string
	Sections []htmlSection
	// The explorer, when the run directory holds conversations.
	Convs     []*viewer.Conv
	Pages     map[string]string // item id -> its viewer page, when written
	Events    []exploreEvent
	EventRows template.HTML // the rows of Events, rendered by eventRows
	Models    []string
	Conds     []string
	Labels    []string
	Outcomes  []string
	Measures  [][2]string
	NoSpeech  []NoSpeech
	JS        template.JS
}

// htmlPage renders report.html: one file (inline CSS, SVG and script; no external
// references), readable without a network. With the run's conversations it adds the
// explorer, links every table cell to the events behind it, and links each
// conversation to its page in the viewer directory.
func htmlPage(s score.Summary, m Meta, ref *reference.Result, convs []*viewer.Conv, audio map[string]viewer.AudioInfo, pages map[string]string) ([]byte, error) {
	d := htmlData{Title: Title(m), Convs: convs, Pages: pages, JS: template.JS(exploreJS)}
	linked := len(convs) > 0
	for _, sec := range sections(s, m, ref) {
		hs := htmlSection{ID: sec.ID, Title: sec.Title, Intro: sec.Intro}
		for _, t := range sec.Tables {
			ht := htmlTable{Title: t.Title, Header: t.Header}
			for _, row := range t.Rows {
				cells := make([]htmlCell, len(row))
				for i, c := range row {
					cells[i].Text = c
					if f, ok := cellFilter(sec.ID, t.Header, row, i); ok && linked {
						cells[i].Href = "#" + f.Fragment()
					}
				}
				ht.Rows = append(ht.Rows, cells)
			}
			hs.Tables = append(hs.Tables, ht)
		}
		for _, kind := range sec.Charts {
			hs.Rendered = append(hs.Rendered, charts(kind, s)...)
		}
		d.Sections = append(d.Sections, hs)
	}
	if linked {
		d.explorer(convs)
		d.NoSpeech = noSpeechDiagnostic(convs, audio)
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (d *htmlData) explorer(convs []*viewer.Conv) {
	seen := map[string]map[string]bool{"m": {}, "c": {}, "l": {}, "o": {}}
	add := func(kind, v string, list *[]string) {
		if v != "" && !seen[kind][v] {
			seen[kind][v] = true
			*list = append(*list, v)
		}
	}
	pairs := viewer.Pairings(convs)
	for _, c := range convs {
		add("m", c.Row.Model, &d.Models)
		add("c", c.Row.Condition, &d.Conds)
		if c.Scored == nil {
			continue
		}
		for _, v := range viewer.EventsOf(c.Scored) {
			add("l", v.Label, &d.Labels)
			for _, o := range v.Outcomes {
				add("o", o, &d.Outcomes)
			}
			said := ""
			if c.Timeline != nil && v.Ev.Turn < len(c.Timeline.Turns) {
				said = viewer.Shorten(c.Timeline.Turns[v.Ev.Turn].Text, 70)
			}
			d.Events = append(d.Events, exploreEvent{
				Conv: c, Page: d.Pages[c.Row.ID], V: v, Label: v.Label,
				Outcomes: strings.Join(v.Outcomes, " "), Members: v.MembersAttr(),
				Third: strconv.Itoa(v.Ev.Third), Address: v.Addressee(), Said: said, Pairing: pairs[c],
			})
		}
	}
	d.EventRows = eventRows(d.Events)
	sort.Strings(d.Outcomes)
	labelOrder := map[string]int{"T": 0, "N1": 1, "N2": 2, "N3": 3, "N4": 4}
	sort.SliceStable(d.Labels, func(i, j int) bool { return labelOrder[d.Labels[i]] < labelOrder[d.Labels[j]] })
	d.Outcomes = append(d.Outcomes, "failed", "not finished")
	d.Measures = measureNames()
}

// eventRows renders the explorer's event table. A paper-scale run has tens of thousands
// of events: written directly, with every value escaped, this takes a fraction of what
// html/template's reflection does.
func eventRows(events []exploreEvent) template.HTML {
	var b strings.Builder
	e := template.HTMLEscapeString
	for _, ev := range events {
		r := ev.Conv.Row
		result := "fail"
		switch {
		case ev.V.Pass:
			result = "pass"
		case ev.V.Excluded:
			result = "excluded"
		}
		fmt.Fprintf(&b, `<tr data-model="%s" data-condition="%s" data-position="%s" data-conv="%s" data-label="%s" data-o="%s" data-u="%s" data-third="%s" data-addressee="%s" data-pass="%t" data-x="%t" data-r="%s" data-both="%t" data-shared="%s">`,
			e(r.Model), e(r.Condition), e(r.TPosition), e(r.ID), e(ev.Label), e(ev.Outcomes), e(ev.Members), ev.Third, e(ev.Address), ev.V.Pass, ev.V.Excluded, result,
			ev.Pairing.Both, e(strings.Join(ev.Pairing.Shared, " ")))
		scenario := e(r.Scenario)
		if ev.Page != "" {
			scenario = fmt.Sprintf(`<a href="%s#ev-%d">%s</a>`, e(ev.Page), ev.V.Index, scenario)
		}
		fmt.Fprintf(&b, `<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="said">%s</td><td class="verdict">%s</td><td class="mem">%s</td></tr>`+"\n",
			e(r.Model), e(r.Condition), scenario, e(ev.Label), e(ev.Said), e(ev.V.Verdict), e(membersText(ev.V)))
	}
	return template.HTML(b.String())
}

// membersText is an event's memberships for people: "fresh onset ✓, presence ✓,
// accuracy ✗".
func membersText(v viewer.Event) string {
	parts := make([]string, len(v.Members))
	for i, m := range v.Members {
		mark := "✗"
		if m.Success {
			mark = "✓"
		}
		parts[i] = measureShortName(m.Measure) + " " + mark
	}
	return strings.Join(parts, ", ")
}

// noSpeechDiagnostic finds the models that emitted audio the VAD never called speech:
// a plugin answering with tones or noise scores exactly like a silent one, and without
// this it is not obvious why.
func noSpeechDiagnostic(convs []*viewer.Conv, audio map[string]viewer.AudioInfo) []NoSpeech {
	byModel := map[string]*NoSpeech{}
	var order []string
	speech := map[string]bool{}
	for _, c := range convs {
		if c.Scored == nil {
			continue
		}
		m := c.Row.Model
		ns := byModel[m]
		if ns == nil {
			ns = &NoSpeech{Model: m}
			byModel[m] = ns
			order = append(order, m)
		}
		ns.Conversations++
		if len(c.Episodes) > 0 {
			speech[m] = true
		}
		a := audio[c.Row.ID]
		if !a.Emitted() {
			continue
		}
		ns.WithAudio++
		if len(c.Episodes) == 0 {
			ns.WithoutSpeech++
			if ns.Example == "" {
				ns.Example, ns.Peak = c.Row.ID, fmt.Sprintf("%.1f", a.PeakDBFS)
				ns.ExampleFileHref = viewer.ItemsDir + "/" + c.Row.ID + "/" + a.File
			}
		}
	}
	var out []NoSpeech
	for _, m := range order {
		ns := byModel[m]
		if ns.WithoutSpeech == 0 {
			continue
		}
		ns.NoSpeechAtAll = !speech[m]
		out = append(out, *ns)
	}
	return out
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
	"baseCSS": func() template.CSS { return template.CSS(viewer.BaseCSS) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>{{baseCSS}}
.page { max-width: 1280px; margin: 0 auto; padding: 24px 32px 64px; }
h1 { font-size: 24px; margin: 0 0 12px; overflow-wrap: anywhere; }
h3 { font-size: 15px; margin: 14px 0 4px; }
h2 { font-size: 19px; margin: 36px 0 6px; padding-top: 8px; border-top: 2px solid var(--line); }
p.intro { color: var(--muted); max-width: 900px; margin: 4px 0 12px; }
td a.c { color: inherit; display: block; }
td a.c:hover { background: #eef6ff; text-decoration: none; }
nav ol { columns: 2; max-width: 760px; padding-left: 22px; margin: 6px 0; }
th { background: var(--head); font-weight: 600; min-width: 5em; max-width: 11em; }
td { white-space: nowrap; }
tbody tr:nth-child(even) td { background: #fafbfc; }
table.meta td:first-child { font-weight: 600; background: var(--head); white-space: nowrap; }
table.meta td { white-space: normal; max-width: 1000px; overflow-wrap: anywhere; }
table.meta thead { display: none; }
.kn { color: var(--muted); }
.ci { color: var(--muted); font-size: 12px; display: block; }
.na { color: #a15c00; }
.charts { display: flex; flex-wrap: wrap; gap: 12px 20px; }
figure { margin: 0; max-width: 100%; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 12px; max-width: 520px; }
td.files { white-space: normal; min-width: 13em; }
td.files a { margin-right: 8px; }
td.heard, td.said, td.mem { white-space: normal; min-width: 12em; max-width: 20em; }
td.heard { font-style: italic; }
form.filters { display: flex; flex-wrap: wrap; gap: 6px 14px; align-items: end; margin: 8px 0; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
form.filters select { font: inherit; max-width: 15em; }
.chips span { display: inline-block; background: #eef6ff; border: 1px solid #b7d4ee; border-radius: 10px; padding: 0 8px; margin: 2px 4px 2px 0; font-size: 12px; }
#explore-count { font-weight: 600; }
tr[data-r=pass] td.verdict { color: var(--pass); font-weight: 600; }
tr[data-r=fail] td.verdict { color: var(--fail); font-weight: 600; }
tr[data-r=excluded] td.verdict { color: var(--muted); font-style: italic; }
footer { color: var(--muted); margin-top: 40px; font-size: 12px; }
@media (max-width: 600px) { .page { padding: 12px 10px 48px; } nav ol { columns: 1; } th, td { padding: 3px 5px; } }
</style>
</head>
<body>
<div class="page">
<header>
<h1>{{.Title}}</h1>
</header>
<main>
{{template "section" index .Sections 0}}
<nav>
<h2 id="contents">Contents</h2>
<ol>
{{if .NoSpeech}}<li><a href="#no-speech">Audio but no speech</a></li>
{{end}}{{range .Sections}}<li><a href="#{{.ID}}">{{.Title}}</a></li>
{{end}}{{if .Convs}}<li><a href="#explore">Conversations ({{len .Convs}}) and their events</a></li>
{{end}}</ol>
</nav>
{{if .NoSpeech}}<section id="no-speech">
<h2>Audio but no speech</h2>
<p class="intro">Conversations in which the model emitted audio (a peak above -40 dBFS) that Silero VAD never called speech: every measure treats that audio as silence. Tones, noise or very quiet output do this, and a model that only ever answers with them scores exactly like a silent one. Listen to one, and see what the VAD hears with <code>duplexmpe vad FILE.wav</code> (add <code>--probs</code> for its speech probabilities).</p>
<div class="scroll"><table><thead><tr><th>model</th><th>scored conversations</th><th>with audio</th><th>audio, no speech</th><th>example</th></tr></thead><tbody>
{{range .NoSpeech}}<tr><td>{{.Model}}{{if .NoSpeechAtAll}} <b>(no speech in any conversation)</b>{{end}}</td><td>{{.Conversations}}</td><td>{{.WithAudio}}</td><td>{{.WithoutSpeech}}</td><td class="said">{{with index $.Pages .Example}}<a href="{{.}}">listen</a>, {{end}}<code>duplexmpe vad <a href="{{.ExampleFileHref}}">{{.ExampleFileHref}}</a></code> (peak {{.Peak}} dBFS)</td></tr>
{{end}}</tbody></table></div>
</section>
{{end}}{{range slice .Sections 1}}{{template "section" .}}{{end}}{{if .Convs}}<section id="explore">
<h2>Conversations and their events</h2>
<p class="intro">Every scored event of every conversation in the run directory: a table cell above opens this list filtered to the events it counts (its denominator; a success is marked pass). Each conversation has a page with its timeline, a stereo recording (the room left, the model right), and the evidence and rule behind every verdict. Links are relative to this report, which sits in the run directory.</p>
<noscript><p class="note">Filtering needs JavaScript; without it every event and conversation is listed.</p></noscript>
<form class="filters" id="filters">
<label>model<select name="model"><option value="">all</option>{{range .Models}}<option>{{.}}</option>{{end}}</select></label>
<label>condition<select name="condition"><option value="">all</option>{{range .Conds}}<option>{{.}}</option>{{end}}</select></label>
<label>label<select name="label"><option value="">all</option>{{range .Labels}}<option>{{.}}</option>{{end}}</select></label>
<label>outcome<select name="outcome"><option value="">all</option>{{range .Outcomes}}<option>{{.}}</option>{{end}}</select></label>
<label>measure<select name="measure"><option value="">any</option>{{range .Measures}}<option value="{{index . 0}}">{{index . 1}}</option>{{end}}</select></label>
<label>result<select name="result"><option value="">any</option><option>pass</option><option>fail</option><option>excluded</option></select></label>
<button type="button" id="clear">show all</button>
</form>
<p class="chips" id="chips"></p>
<p><span id="explore-count">{{len .Events}} events in {{len .Convs}} conversations</span></p>
<h3>Events</h3>
<div class="scroll"><table id="events-table">
<thead><tr><th>model</th><th>condition</th><th>scenario</th><th>label</th><th>said</th><th>verdict</th><th>in measures</th></tr></thead>
<tbody>
{{.EventRows}}</tbody></table></div>
<h3 id="items">Conversations</h3>
<div class="scroll"><table class="items" id="convs-table">
<thead><tr><th>model</th><th>condition</th><th>scenario</th><th>T position</th><th>status</th><th>T outcome</th><th>answer</th><th>answer heard</th><th>silence windows</th><th>N4 events</th><th>files</th></tr></thead>
<tbody>
{{range .Convs}}{{with .Row}}<tr id="item-{{.ID}}" data-model="{{.Model}}" data-condition="{{.Condition}}" data-position="{{.TPosition}}" data-id="{{.ID}}" data-status="{{.Status}}"><td>{{if .Model}}{{.Model}}{{else}}(unreadable){{end}}</td><td>{{.Condition}}</td><td>{{with index $.Pages .ID}}<a class="conv" href="{{.}}">{{end}}{{if .Scenario}}{{.Scenario}}{{else}}{{.ID}}{{end}}{{with index $.Pages .ID}}</a>{{end}}</td><td>{{.TPosition}}</td><td>{{.Status}}</td><td>{{.TOutcome}}</td><td>{{.Answer}}</td><td class="heard">{{.Heard}}</td><td>{{.Silence}}</td><td>{{.N4}}</td><td class="files">{{range .Files}}<a href="{{.}}">{{base .}}</a> {{end}}</td></tr>
{{end}}{{end}}</tbody></table></div>
</section>
{{end}}</main>
<footer>Generated by duplexmpe. Every rate: successes/denominator and a Wilson 95% interval; no aggregate across measures (protocol sections 5 and 6).</footer>
</div>
{{if .Convs}}<script>{{.JS}}</script>
{{end}}</body>
</html>
{{define "section"}}<section id="{{.ID}}">
<h2>{{.Title}}</h2>
<p class="intro">{{.Intro}}</p>
{{range .Tables}}{{if .Title}}<h3>{{.Title}}</h3>
{{end}}<div class="scroll"><table{{if eq $.ID "provenance"}} class="meta"{{end}}>
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td>{{if .Href}}<a class="c" href="{{.Href}}">{{cell .Text}}</a>{{else}}{{cell .Text}}{{end}}</td>{{end}}</tr>
{{else}}<tr><td colspan="{{len .Header}}">(none)</td></tr>
{{end}}</tbody>
</table></div>
{{end}}{{if .Rendered}}<div class="charts">
{{range .Rendered}}<figure>{{svg .SVG}}<figcaption>{{.Title}}</figcaption></figure>
{{end}}</div>
{{end}}</section>
{{end}}`))

// exploreJS filters the explorer from the page's fragment (#explore?model=...&measure=...),
// which every table cell links to; the selects write the fragment back, so the browser's
// back button and copied links work.
const exploreJS = `
(function () {
  var form = document.getElementById('filters');
  if (!form) return;
  var keys = ['model', 'condition', 'label', 'outcome', 'measure', 'result', 'position', 'third', 'addressee', 'paired', 'with'];
  var evRows = Array.prototype.slice.call(document.querySelectorAll('#events-table tbody tr'));
  var cvRows = Array.prototype.slice.call(document.querySelectorAll('#convs-table tbody tr'));
  var count = document.getElementById('explore-count'), chips = document.getElementById('chips');
  var thirds = ['first third', 'second third', 'last third'];
  function parse() {
    var h = location.hash.slice(1), i = h.indexOf('?'), f = {};
    if ((i < 0 ? h : h.slice(0, i)) !== 'explore') return null;
    if (i >= 0) new URLSearchParams(h.slice(i + 1)).forEach(function (v, k) { f[k] = v; });
    return f;
  }
  function tokens(r, a) { return (r.getAttribute(a) || '').split(' '); }
  // result is pass, fail or excluded as the measure behind the link counts the event:
  // an event in no rate (an N4 event not eligible) is excluded, except under a measure
  // it is a member of with a success of its own (the window response diagnostic).
  function result(r, f) {
    if (f.measure && f.measure !== 'n4_events') return tokens(r, 'data-u').indexOf(f.measure + ':1') >= 0 ? 'pass' : 'fail';
    if (r.getAttribute('data-x') === 'true') return 'excluded';
    if (f.measure) return tokens(r, 'data-u').indexOf(f.measure + ':1') >= 0 ? 'pass' : 'fail';
    return r.getAttribute('data-pass') === 'true' ? 'pass' : 'fail';
  }
  function matchEvent(r, f) {
    if (f.model && f.model.split(',').indexOf(r.getAttribute('data-model')) < 0) return false;
    if (f.condition && r.getAttribute('data-condition') !== f.condition) return false;
    if (f.position && (r.getAttribute('data-position') || 'unspecified') !== f.position) return false;
    if (f.label && r.getAttribute('data-label') !== f.label) return false;
    if (f.third && r.getAttribute('data-third') !== f.third) return false;
    if (f.addressee && r.getAttribute('data-addressee') !== f.addressee) return false;
    if (f.outcome && tokens(r, 'data-o').indexOf(f.outcome) < 0) return false;
    // The paired statistics count only the pairs both sides have.
    if (f.paired && r.getAttribute('data-both') !== 'true') return false;
    if (f.with && f.with.split(',').some(function (m) { return m !== r.getAttribute('data-model') && tokens(r, 'data-shared').indexOf(m) < 0; })) return false;
    if (f.measure) {
      var u = tokens(r, 'data-u'), pass = u.indexOf(f.measure + ':1') >= 0, fail = u.indexOf(f.measure + ':0') >= 0;
      if (!pass && !fail) return false;
      if (f.result === 'pass' && !pass) return false;
      if (f.result === 'fail' && !fail) return false;
    } else if (f.result && result(r, f) !== f.result) return false;
    return true;
  }
  function apply(f, scroll) {
    keys.forEach(function (k) { if (form.elements[k]) form.elements[k].value = f[k] || ''; });
    var n = 0, k = 0, convs = {};
    evRows.forEach(function (r) {
      var ok = matchEvent(r, f);
      r.hidden = !ok;
      if (ok) {
        n++; convs[r.getAttribute('data-conv')] = true;
        // Pass and fail as the measure behind the link counts them.
        var res = result(r, f);
        r.setAttribute('data-r', res);
        if (res === 'pass') k++;
      }
    });
    var eventLevel = f.label || f.outcome || f.measure || f.result || f.third || f.addressee || f.paired || f.with;
    var status = f.outcome === 'failed' || f.outcome === 'not finished';
    var nc = 0;
    cvRows.forEach(function (r) {
      var ok = (!f.model || f.model.split(',').indexOf(r.getAttribute('data-model')) >= 0) &&
        (!f.condition || r.getAttribute('data-condition') === f.condition) &&
        (!f.position || (r.getAttribute('data-position') || 'unspecified') === f.position);
      if (ok && status) ok = r.getAttribute('data-status') === f.outcome;
      else if (ok && eventLevel) ok = !!convs[r.getAttribute('data-id')];
      r.hidden = !ok;
      if (ok) nc++;
    });
    count.textContent = n + (n === 1 ? ' event (' : ' events (') + k + ' pass, ' + (n - k) + ' fail' + (f.measure ? ' on ' + f.measure : '') + ') in ' + nc + (nc === 1 ? ' conversation' : ' conversations');
    count.setAttribute('data-n', n); count.setAttribute('data-k', k); count.setAttribute('data-conversations', nc);
    chips.textContent = '';
    ['position', 'third', 'addressee', 'paired', 'with'].forEach(function (key) {
      if (!f[key]) return;
      var s = document.createElement('span');
      s.textContent = key === 'paired' ? 'pairs with both versions' : key === 'with' ? 'pairs also scored for ' + f[key] :
        key + ': ' + (key === 'third' ? thirds[+f[key]] || f[key] : f[key]);
      chips.appendChild(s);
    });
    if (scroll) document.getElementById('explore').scrollIntoView();
  }
  function write() {
    var q = new URLSearchParams(), cur = parse() || {};
    keys.forEach(function (k) {
      var v = form.elements[k] ? form.elements[k].value : cur[k];
      if (v) q.set(k, v);
    });
    var s = q.toString();
    location.hash = 'explore' + (s ? '?' + s : '');
  }
  Array.prototype.forEach.call(form.querySelectorAll('select'), function (s) { s.addEventListener('change', write); });
  document.getElementById('clear').addEventListener('click', function () { location.hash = 'explore'; });
  window.addEventListener('hashchange', function () { var f = parse(); if (f) apply(f, true); });
  var f = parse();
  apply(f || {}, !!f);
})();
`
