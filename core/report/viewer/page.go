package viewer

import (
	"bytes"
	"fmt"
	"html/template"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
)

// The conversation page: viewer/<id>.html. Everything it needs is inline (CSS, script,
// the timeline SVG); it links only to its recording beside it, the item's stored files
// and report.html one folder up.

type pageLink struct{ Text, Href string }

type pageEvent struct {
	ID, Label, Speaker, When string
	Start, End               float64
	Said                     []string
	Verdict                  string
	Pass, Excluded           bool
	Gold, Transcript         string
	HasTranscript            bool
	Judge, Raw               string
	Rules                    []string
}

type convPageData struct {
	Title, ID, Model, Condition, Scenario string
	Back                                  string
	Nav                                   []pageLink
	Facts                                 [][2]string
	Files                                 []pageLink
	Wav                                   string
	Audio                                 AudioInfo
	Figure                                template.HTML
	Legend                                []swatch
	Labels                                []protocol.LabelMeaning
	Events                                []pageEvent
	// Words are the model's words per speech episode (Scored.Words); WordsNote says why
	// there are none when the model spoke.
	Words             []score.Words
	WordsNote         string
	Text              []TextPiece
	Failure, Unscored string
	Problems          []string
	GoldNote          string
	NoSpeech          bool
	// Audible is the item's stored audible output, played when the recording was left
	// out to stay within the budget; Budget says the budget, for raising it.
	Audible, Budget string
}

// explorerHref links report.html's conversation explorer filtered as given.
func explorerHref(prefix string, f Filter) string { return prefix + "#" + f.Fragment() }

// conversationPage renders one conversation's page. peers are the other conversations
// of the run, for the links to the same scenario with other models and to the other
// version of the pair.
func conversationPage(c *Conv, info AudioInfo, room *roomSource, o Options, nav []pageLink) ([]byte, error) {
	p := o.Protocol
	events := EventsOf(c.Scored)
	r := c.Row
	d := convPageData{
		Title: fmt.Sprintf("%s: %s (%s)", orDash(r.Model), orDash(r.Scenario), orDash(r.Condition)),
		ID:    r.ID, Model: r.Model, Condition: r.Condition, Scenario: r.Scenario,
		Back:     explorerHref("../"+o.Report, Filter{Model: r.Model, Condition: r.Condition}),
		Nav:      nav,
		Audio:    info,
		Failure:  c.Failure,
		Problems: c.Problems,
		Text:     c.Text,
		NoSpeech: c.Scored != nil && info.Emitted() && len(c.Episodes) == 0,
		Legend:   legend(),
		Labels:   protocol.LabelMeanings,
	}
	if c.Scored != nil {
		d.Unscored = c.Scored.Unscored
		d.Words = c.Scored.Words
	}
	if len(d.Words) == 0 && len(c.Episodes) > 0 && c.Scored != nil && c.Scored.Counted() {
		d.WordsNote = "The model spoke, but its words are not in these verdicts: they were scored without an ASR, or by a harness older than scoring revision 4. Score the run again (duplexmpe score) to transcribe the model's speech."
	}
	if info.Recording {
		d.Wav = wavName(r.ID)
	}
	if info.LeftOut {
		d.Budget = budgetText(info.Budget)
		if info.Audible {
			d.Audible = "../" + ItemsDir + "/" + r.ID + "/" + info.File
		}
	}
	for _, f := range r.Files {
		d.Files = append(d.Files, pageLink{Text: filepath.Base(f), Href: "../" + f})
	}
	d.Facts = append(d.Facts, [2]string{"status", r.Status}, [2]string{"pair", orDash(r.Pair)}, [2]string{"T position", orDash(r.TPosition)})
	if s := c.Session; s != nil {
		f := s.Format
		d.Facts = append(d.Facts, [2]string{"model format", fmt.Sprintf("input %d Hz, output %d Hz, frames of %d samples (%s); %d frames played",
			f.InputRate, f.OutputRate, f.FrameSize, frameMS(f.FrameSize, f.InputRate), s.Frames)})
		if w := s.TWait; w != nil {
			d.Facts = append(d.Facts, [2]string{"wait after T", fmt.Sprintf("%s to %s (%s), ended by %s", tsec(w.Start), tsec(w.End), tsec(w.End-w.Start), w.Ending)})
		}
		d.Facts = append(d.Facts, [2]string{"step latency (wall clock)", fmt.Sprintf("mean %.1f ms, p95 %.1f ms, max %.1f ms", 1000*s.Latency.Mean, 1000*s.Latency.P95, 1000*s.Latency.Max)})
	}
	if c.Timeline != nil {
		d.Facts = append(d.Facts, [2]string{"duration", tsec(c.Timeline.Duration)})
	}
	if info.Audible {
		d.Facts = append(d.Facts, [2]string{"model audio", fmt.Sprintf("peak %.1f dBFS, %d speech episodes", info.PeakDBFS, len(c.Episodes))})
	}
	sc := datasetScenario(room, c)
	if sc == nil {
		_, err := room.scenario(c)
		d.GoldNote = fmt.Sprintf("The gold answer and the room channel are not shown: %v.", err)
	}
	if c.Timeline != nil {
		fig := drawTimeline(c, events, p)
		d.Figure = template.HTML(fig.SVG) // built from numbers and escaped text only
	}
	for _, v := range events {
		d.Events = append(d.Events, pageEventOf(c, v, sc, p))
	}
	var b bytes.Buffer
	if err := convTemplate.Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// eventEnd is where an event's scoring ends on the clock: the row is highlighted while
// the recording plays through it.
func eventEnd(ev score.Event) float64 {
	switch {
	case ev.T != nil:
		return ev.T.AnswerSpan.End
	case ev.Silence != nil:
		return ev.Silence.Window.End
	case ev.N4 != nil:
		return ev.N4.ObserveEnd
	}
	return ev.End
}

// budgetText writes a byte budget the way --recordings-budget reads it.
func budgetText(b int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b >= u.size && b%u.size == 0 {
			return fmt.Sprintf("%d %s", b/u.size, u.name)
		}
	}
	if b >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	if b == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", b)
}

func frameMS(frame, rate int) string {
	if rate <= 0 {
		return "-"
	}
	return fmt.Sprintf("%g ms", float64(frame)*1000/float64(rate))
}

func pageEventOf(c *Conv, v Event, sc *dataset.Scenario, p protocol.Params) pageEvent {
	ev := v.Ev
	e := pageEvent{ID: fmt.Sprintf("ev-%d", v.Index), Label: v.Label, Start: ev.Start, End: eventEnd(ev),
		When: fmt.Sprintf("%.3f - %s", ev.Start, tsec(ev.End)), Verdict: v.Verdict, Pass: v.Pass, Excluded: v.Excluded, Rules: rule(v, p)}
	turn := func(i int) (speaker, text string) {
		if c.Timeline != nil && i >= 0 && i < len(c.Timeline.Turns) {
			t := c.Timeline.Turns[i]
			return t.Speaker, t.Text
		}
		return "", ""
	}
	spk, text := turn(ev.Turn)
	e.Speaker = spk
	e.Said = []string{text}
	if ev.N4 != nil && c.Timeline != nil && ev.Turn+1 < len(c.Timeline.Turns) && c.Timeline.Turns[ev.Turn+1].Label == protocol.LabelN4R {
		rs, rt := turn(ev.Turn + 1)
		e.Said = []string{"Q (" + spk + "): " + text, "R (" + rs + "): " + rt}
	}
	var j *score.Judgement
	switch {
	case ev.T != nil:
		j = ev.T.Answer
		if sc != nil {
			e.Gold = sc.GoldAnswer
		} else {
			e.Gold = "(not available: see the note above)"
		}
	case ev.Silence != nil:
		j = ev.Silence.Judgement
	}
	if j != nil {
		e.Transcript, e.HasTranscript = j.Transcript, true
		parts := []string{}
		if j.Label != "" {
			parts = append(parts, "label "+j.Label)
		}
		if !j.Parsed && j.Failure == score.FailUnparseable {
			parts = append(parts, "unparseable")
		}
		if j.Rationale != "" {
			parts = append(parts, "rationale: "+j.Rationale)
		}
		if j.JudgeError != "" {
			parts = append(parts, "judge error: "+j.JudgeError)
		}
		e.Judge = strings.Join(parts, "; ")
		e.Raw = j.Raw
	}
	return e
}

// filter is one view of report.html's conversation explorer; its fragment is how table
// cells and conversation pages link to it.
type Filter struct {
	Model, Condition, Label, Outcome, Measure, Result, Position, Third, Addressee string
	// Paired ("1") keeps the pairs the model has both versions of; With, the pairs these
	// models (other than the row's own) also have in the condition.
	Paired, With string
}

func (f Filter) Fragment() string {
	q := url.Values{}
	for _, kv := range [][2]string{{"model", f.Model}, {"condition", f.Condition}, {"label", f.Label}, {"outcome", f.Outcome},
		{"measure", f.Measure}, {"result", f.Result}, {"position", f.Position}, {"third", f.Third}, {"addressee", f.Addressee},
		{"paired", f.Paired}, {"with", f.With}} {
		if kv[1] != "" {
			q.Set(kv[0], kv[1])
		}
	}
	if len(q) == 0 {
		return "explore"
	}
	return "explore?" + q.Encode()
}

// baseCSS is what report.html and the conversation pages share: colours, type, links,
// tables, the scroll box that keeps wide tables inside the window, verdict colours.
const BaseCSS = `
:root { --fg: #1b1f24; --muted: #5b6470; --line: #d8dde3; --head: #f3f5f7; --accent: #0072b2; --pass: #2e8b57; --fail: #d55e00; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "Liberation Sans", Arial, sans-serif; color: var(--fg); margin: 0; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
.scroll { overflow-x: auto; margin: 8px 0 14px; max-width: 100%; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
tr:target td { background: #fff6cc; }
.note { background: #fff6cc; border: 1px solid #e6d27a; padding: 6px 10px; margin: 8px 0; max-width: 900px; }
.v-pass { color: var(--pass); font-weight: 600; }
.v-fail { color: var(--fail); font-weight: 600; }
.v-excluded { color: var(--muted); font-style: italic; }
`

const viewerCSS = `
.page { max-width: 1280px; margin: 0 auto; padding: 16px 24px 64px; }
h1 { font-size: 21px; margin: 4px 0 8px; overflow-wrap: anywhere; }
h2 { font-size: 17px; margin: 26px 0 6px; padding-top: 6px; border-top: 2px solid var(--line); }
nav.links a { margin-right: 12px; display: inline-block; }
th { background: var(--head); font-weight: 600; }
table.facts td:first-child { font-weight: 600; background: var(--head); white-space: nowrap; }
table.facts td { overflow-wrap: anywhere; }
.bad { background: #fde8e0; border-color: #e0a58c; }
.player { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; margin: 8px 0; }
.player audio { width: min(520px, 100%); }
.muted { color: var(--muted); font-size: 12px; }
#tl-box { overflow-x: auto; border: 1px solid var(--line); max-width: 100%; }
svg.timeline { display: block; width: 100%; min-width: 760px; height: auto; cursor: crosshair; }
svg.timeline text { font: 11px system-ui, "Liberation Sans", Arial, sans-serif; fill: var(--fg); }
svg.timeline text.in { fill: #fff; pointer-events: none; }
svg.timeline text.in.dark { fill: var(--fg); }
svg.timeline text.tick { fill: var(--muted); text-anchor: middle; font-size: 10px; }
.legend span { display: inline-block; margin-right: 12px; font-size: 12px; }
.legend i { display: inline-block; width: 12px; height: 10px; margin-right: 4px; vertical-align: baseline; box-sizing: border-box; }
dl.labels { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 6px 0 10px; max-width: 900px; }
dl.labels dt { font-weight: 600; } dl.labels dd { margin: 0; }
svg.timeline text.words { fill: var(--fg); font-style: italic; pointer-events: none; }
table.words td.said { min-width: 14em; max-width: 50em; overflow-wrap: anywhere; font-style: italic; }
table.events { width: 100%; }
table.events td { min-width: 5em; }
table.events td.said, table.events td.evidence { min-width: 14em; max-width: 34em; overflow-wrap: anywhere; }
table.events tr.now td, table.words tr.now td { background: #eef6ff; }
.rule { margin: 0 0 3px; }
.quote { font-style: italic; }
.raw { font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap; color: var(--muted); }
button.play { font: inherit; font-size: 12px; padding: 1px 6px; cursor: pointer; }
@media (max-width: 600px) {
  .page { padding: 10px 10px 48px; } th, td { padding: 3px 5px; }
  table.facts td:first-child { white-space: normal; }
  /* On a phone each event is a card: one cell under the other, each with its heading. */
  table.events, table.events tbody, table.events tr, table.events td { display: block; width: 100%; max-width: none; min-width: 0; }
  table.events thead { display: none; }
  table.events tr { border: 1px solid var(--line); margin-bottom: 10px; }
  table.events td { border: none; border-top: 1px solid var(--line); }
  table.events td.evidence:empty { display: none; }
  table.events td[data-h]::before { content: attr(data-h); display: block; font-size: 11px; color: var(--muted); text-transform: uppercase; }
}
`

const viewerJS = `
(function () {
  var a = document.getElementById('player'), svg = document.getElementById('timeline');
  if (!svg) return;
  var left = +svg.getAttribute('data-left'), pps = +svg.getAttribute('data-pps');
  var cur = document.getElementById('cursor'), box = document.getElementById('tl-box'), clock = document.getElementById('clock');
  var rows = Array.prototype.slice.call(document.querySelectorAll('table.events tbody tr, table.words tbody tr'));
  function place() {
    if (!a) return;
    var t = a.currentTime || 0, x = left + t * pps;
    cur.setAttribute('x1', x); cur.setAttribute('x2', x);
    if (clock) clock.textContent = 't = ' + t.toFixed(2) + ' s';
    var scale = box.scrollWidth / svg.viewBox.baseVal.width, px = x * scale;
    if (px < box.scrollLeft + 40 || px > box.scrollLeft + box.clientWidth - 40) box.scrollLeft = Math.max(0, px - box.clientWidth / 3);
    rows.forEach(function (r) {
      var s = +r.getAttribute('data-start'), e = +r.getAttribute('data-end');
      r.classList.toggle('now', t >= s && t < e);
    });
  }
  function loop() { place(); if (a && !a.paused) requestAnimationFrame(loop); }
  if (a) {
    ['timeupdate', 'seeked', 'loadedmetadata'].forEach(function (n) { a.addEventListener(n, place); });
    a.addEventListener('play', function () { requestAnimationFrame(loop); });
  }
  svg.addEventListener('click', function (ev) {
    if (!a || ev.target.closest('a')) return;
    var pt = svg.createSVGPoint(); pt.x = ev.clientX; pt.y = ev.clientY;
    var p = pt.matrixTransform(svg.getScreenCTM().inverse()), t = (p.x - left) / pps;
    if (t >= 0) { a.currentTime = t; place(); }
  });
  Array.prototype.forEach.call(document.querySelectorAll('button.play'), function (b) {
    b.addEventListener('click', function () { if (!a) return; a.currentTime = Math.max(0, +b.getAttribute('data-t') - 0.5); a.play(); });
  });
  place();
})();
`

var convTemplate = template.Must(template.New("conversation").Funcs(template.FuncMap{
	"css":    func() template.CSS { return template.CSS(BaseCSS + viewerCSS) },
	"js":     func() template.JS { return template.JS(viewerJS) },
	"swatch": func(s string) template.CSS { return template.CSS(s) }, // from legend(): constants only
	"colour": func(l string) template.CSS {
		if c, ok := labelColour[l]; ok {
			return template.CSS(c)
		}
		return template.CSS(colourNeutral)
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>{{css}}</style>
</head>
<body>
<div class="page">
<nav class="links"><a id="back" href="{{.Back}}">&larr; all {{.Model}} {{.Condition}} conversations in the report</a>{{range .Nav}}<a href="{{.Href}}">{{.Text}}</a>{{end}}</nav>
<h1>{{.Title}}</h1>
{{if .Failure}}<p class="note bad"><b>The conversation failed:</b> {{.Failure}}. It is in no denominator; a resumed run plays it again.</p>
{{end}}{{if .Unscored}}<p class="note bad"><b>Not scored:</b> {{.Unscored}}. A scoring service failed, so the conversation is in no denominator; <code>duplexmpe score</code> tries it again.</p>
{{end}}{{range .Problems}}<p class="note bad">Could not read {{.}}</p>
{{end}}{{if .NoSpeech}}<p class="note" id="no-speech">The model emitted audio (peak {{printf "%.1f" .Audio.PeakDBFS}} dBFS) but the VAD found no speech in it, so every measure treats it as silent. Listen to the right channel, and check what Silero hears with <code>duplexmpe vad</code> on <a href="../items/{{.ID}}/{{.Audio.File}}">items/{{.ID}}/{{.Audio.File}}</a> (tones and noise are not speech to Silero).</p>
{{end}}<div class="scroll"><table class="facts"><tbody>
{{range .Facts}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>
{{end}}<tr><td>stored files</td><td>{{range .Files}}<a href="{{.Href}}">{{.Text}}</a> {{end}}</td></tr>
</tbody></table></div>
<h2 id="listen">Listen</h2>
{{if .Wav}}<div class="player"><audio id="player" controls preload="metadata" src="{{.Wav}}"></audio><span id="clock" class="muted">t = 0.00 s</span></div>
<p class="muted">Stereo, 16 kHz: left, the room (the preamble and the human turns{{if .Audio.Room}}: not available, see below{{else}}, rebuilt from the dataset's clips at the recorded times{{end}}); right, the model's audible output ({{.Audio.File}}). Click the timeline to jump; the dashed black line follows the recording.</p>
{{else if .Audio.LeftOut}}{{if .Audible}}<div class="player"><audio id="player" controls preload="metadata" src="{{.Audible}}"></audio><span id="clock" class="muted">t = 0.00 s</span></div>
{{end}}<p class="note" id="left-out">{{if .Audible}}This plays the model's stored output alone ({{.Audio.File}}): the{{else}}The{{end}} stereo recording with the room was left out to stay within the report's {{.Budget}} budget for recordings (conversations with a failed decision get theirs first); raise it with <code>duplexmpe report RUN_DIR --recordings-budget 20GiB</code>.</p>
{{else}}<p class="note">No recording: {{.Audio.Problem}}{{if .Audio.Room}}; {{.Audio.Room}}{{end}}.</p>
{{end}}{{if and .Audio.Room (not .Audio.LeftOut)}}<p class="note" id="room-note">The left channel is silent: {{.Audio.Room}}.</p>
{{end}}{{if .GoldNote}}<p class="note">{{.GoldNote}}</p>
{{end}}{{if .Figure}}<div id="tl-box">{{.Figure}}</div>
<p class="legend" id="legend">{{range .Legend}}<span data-key="{{.Key}}"><i style="{{swatch .Style}}"></i>{{.Text}}</span>{{end}}</p>
{{end}}<h2 id="labels">The labels</h2>
<dl class="labels">{{range .Labels}}<dt>{{.Label}}</dt><dd>{{.Meaning}}: Aria should {{.Should}}.</dd>{{end}}</dl>
<p class="muted">An N4 event is an N4_Q with its N4_R; it is eligible for the yield rate only when the model was silent during the question, started in the gap and was speaking at r, the start of N4_R. An event that is not eligible is <i>excluded</i>: in no rate, neither a pass nor a failure (docs/protocol.md section 5.5).</p>
<h2 id="events">Events and verdicts</h2>
{{if .Events}}<div class="scroll"><table class="events">
<thead><tr><th>turn</th><th>what was said</th><th>verdict</th><th>evidence</th><th>the rule that decided it</th></tr></thead>
<tbody>
{{range .Events}}<tr id="{{.ID}}" data-start="{{.Start}}" data-end="{{.End}}" data-label="{{.Label}}"><td><b style="color:{{colour .Label}}">{{.Label}}</b> {{.Speaker}}<br><span class="muted">{{.When}}</span><br><button class="play" data-t="{{.Start}}">play</button></td>
<td class="said" data-h="what was said">{{range .Said}}<div>{{.}}</div>{{end}}</td>
<td class="{{if .Pass}}v-pass{{else if .Excluded}}v-excluded{{else}}v-fail{{end}}" data-h="verdict">{{.Verdict}}</td>
<td class="evidence" data-h="evidence">{{if .Gold}}<div><b>gold answer:</b> {{.Gold}}</div>{{end}}{{if .HasTranscript}}<div><b>transcript:</b> <span class="quote">{{if .Transcript}}{{.Transcript}}{{else}}(empty){{end}}</span></div>{{end}}{{if .Judge}}<div><b>judge:</b> {{.Judge}}</div>{{end}}{{if .Raw}}<div class="raw">{{.Raw}}</div>{{end}}</td>
<td data-h="the rule that decided it">{{range .Rules}}<p class="rule">{{.}}</p>{{end}}</td></tr>
{{end}}</tbody></table></div>
{{else}}<p>No verdicts: the conversation {{if .Failure}}failed{{else if .Unscored}}could not be scored{{else}}is not scored yet (run <code>duplexmpe score</code>){{end}}.</p>
{{end}}<h2 id="words">What the model said</h2>
{{if .Words}}<p class="muted">All of the model's speech, in the words the run's ASR heard: the transcripts the verdicts made (T's answer, the speech in a silence window, over the span they cut out), and every other stretch of an episode, transcribed once; no verdict reads this list.</p>
<div class="scroll"><table class="words"><thead><tr><th>episode</th><th>words heard</th></tr></thead><tbody>
{{range .Words}}<tr data-start="{{.Span.Start}}" data-end="{{.Span.End}}"><td>{{printf "%.3f - %.3f s" .Span.Start .Span.End}}<br><button class="play" data-t="{{.Span.Start}}">play</button></td><td class="said">{{if .Transcript}}{{.Transcript}}{{else}}(no words heard){{end}}</td></tr>
{{end}}</tbody></table></div>
{{else if .WordsNote}}<p class="note" id="words-note">{{.WordsNote}}</p>
{{else}}<p>The model did not speak{{if not .Events}}, or the conversation has no verdicts{{end}}.</p>
{{end}}{{if .Text}}<h2 id="text">The model's text channel</h2>
<div class="scroll"><table><thead><tr><th>time</th><th>text</th></tr></thead><tbody>
{{range .Text}}<tr><td>{{printf "%.3f s" .Time}}</td><td>{{.Text}}</td></tr>
{{end}}</tbody></table></div>
{{end}}</div>
<script>{{js}}</script>
</body>
</html>
`))
