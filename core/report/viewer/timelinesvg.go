package viewer

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
)

// Geometry of the timeline figure, in SVG user units (the figure scales to its box and
// scrolls inside it on narrow screens; see the page's CSS).
const (
	tlWidth  = 1200.0
	tlLeft   = 104.0 // lane labels
	tlRight  = 14.0
	tlLane   = 22.0
	tlGap    = 5.0
	tlTop    = 8.0
	tlAxis   = 26.0 // the time axis under the lanes
	tlLabelX = 6.0
)

// Colours (Okabe-Ito, as the charts) of the human labels, the model and verdicts.
var labelColour = map[string]string{
	protocol.LabelT: "#0072b2", protocol.LabelN1: "#8a8f96", protocol.LabelN2: "#cc79a7",
	protocol.LabelN3: "#e69f00", protocol.LabelN4Q: "#009e73", protocol.LabelN4R: "#56b4e9",
	"N4": "#009e73", // an N4 event, as the explorer labels it
}

// light fills get dark text.
var lightFill = map[string]bool{"#d8dde3": true, "#e3e7eb": true, "#cfd6dd": true, "#fff2a8": true, colourWait: true, colourNeutral: true}

const (
	colourModel   = "#1b1f24"
	colourPass    = "#2e8b57"
	colourFail    = "#d55e00"
	colourNeutral = "#b9c0c8"
	colourWait    = "#f0e442"
)

// timelineFigure draws one conversation: the preamble and every human turn on a lane per
// speaker, the model's speech episodes, the scheduler's waits, and the scoring windows
// of every event (coloured by verdict, each a link to its row). The cursor line is moved
// by the page's script as the recording plays; x = tlLeft + t * pps.
type timelineFigure struct {
	SVG      string
	Duration float64
	PPS      float64 // user units per second
}

type svgBuf struct{ strings.Builder }

func (b *svgBuf) f(format string, a ...any) { fmt.Fprintf(&b.Builder, format, a...) }

func esc(s string) string { return html.EscapeString(s) }

func drawTimeline(c *Conv, events []Event, p protocol.Params) timelineFigure {
	tl := c.Timeline
	dur := tl.Duration
	for _, e := range c.Episodes {
		dur = math.Max(dur, e.End)
	}
	if dur <= 0 {
		dur = 1
	}
	pps := (tlWidth - tlLeft - tlRight) / dur
	x := func(t float64) float64 { return tlLeft + math.Max(0, t)*pps }
	w := func(a, b float64) float64 { return math.Max(1, (b-a)*pps) }

	// Lanes: preamble, each speaker in order of first turn, model, scheduler, then one
	// scoring lane per kind of event present.
	type lane struct{ key, title string }
	lanes := []lane{{"preamble", "preamble"}}
	seen := map[string]bool{}
	for _, t := range tl.Turns {
		if !seen[t.Speaker] {
			seen[t.Speaker] = true
			lanes = append(lanes, lane{"spk:" + t.Speaker, "speaker " + orDash(t.Speaker)})
		}
	}
	lanes = append(lanes, lane{"model", "model speech"}, lane{"sched", "scheduler"})
	var hasT, hasSil, hasN4 bool
	for _, v := range events {
		hasT = hasT || v.Ev.T != nil
		hasSil = hasSil || v.Ev.Silence != nil
		hasN4 = hasN4 || v.Ev.N4 != nil
	}
	if hasT {
		lanes = append(lanes, lane{"T", "T: onset, answer"})
	}
	if hasSil {
		lanes = append(lanes, lane{"sil", "N1-N3 windows"})
	}
	if hasN4 {
		lanes = append(lanes, lane{"N4", "N4: gap, yield"})
	}
	y := map[string]float64{}
	for i, l := range lanes {
		y[l.key] = tlTop + float64(i)*(tlLane+tlGap)
	}
	height := tlTop + float64(len(lanes))*(tlLane+tlGap) + tlAxis

	var b svgBuf
	b.f(`<svg class="timeline" id="timeline" viewBox="0 0 %.0f %.0f" role="img" aria-label="Timeline of the conversation" data-left="%.3f" data-pps="%.6f" data-duration="%.3f">`,
		tlWidth, height, tlLeft, pps, dur)
	for i, l := range lanes {
		ly := y[l.key]
		if i%2 == 0 {
			b.f(`<rect x="0" y="%.1f" width="%.0f" height="%.1f" fill="#f6f8fa"/>`, ly-tlGap/2, tlWidth, tlLane+tlGap)
		}
		b.f(`<text x="%.0f" y="%.1f" class="lane">%s</text>`, tlLabelX, ly+tlLane/2+4, esc(l.title))
	}
	// Time axis.
	axisY := height - tlAxis + 4
	b.f(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#8a8f96"/>`, tlLeft, x(dur), axisY, axisY)
	step := 5.0
	for dur/step > 24 {
		step *= 2
	}
	for t := 0.0; t <= dur+1e-9; t += step {
		b.f(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#8a8f96"/><line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#e3e7eb"/><text x="%.1f" y="%.1f" class="tick">%g s</text>`,
			x(t), x(t), axisY, axisY+4, x(t), x(t), tlTop, axisY, x(t), axisY+16, t)
	}
	box := func(lk string, a, e float64, fill, label, title, href string, opts ...string) {
		ly := y[lk]
		extra := strings.Join(opts, " ")
		if href != "" {
			b.f(`<a href="%s">`, esc(href))
		}
		b.f(`<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s" %s><title>%s</title></rect>`, x(a), ly, w(a, e), tlLane, fill, extra, esc(title))
		if label != "" && w(a, e) >= 7*float64(len(label))+4 {
			class := "in"
			if lightFill[fill] {
				class = "in dark"
			}
			b.f(`<text x="%.2f" y="%.1f" class="%s">%s</text>`, x(a)+3, ly+tlLane/2+4, class, esc(label))
		}
		if href != "" {
			b.f(`</a>`)
		}
	}
	// The room.
	if tl.PreambleEnd > tl.PreambleStart {
		box("preamble", tl.PreambleStart, tl.PreambleEnd, "#d8dde3", "spoken duty preamble",
			fmt.Sprintf("preamble %s - %s", tsec(tl.PreambleStart), tsec(tl.PreambleEnd)), "")
	}
	byTurn := map[int]int{}
	for _, v := range events {
		byTurn[v.Ev.Turn] = v.Index
	}
	for i, t := range tl.Turns {
		href := ""
		if ev, ok := byTurn[i]; ok {
			href = fmt.Sprintf("#ev-%d", ev)
		}
		col := labelColour[t.Label]
		if col == "" {
			col = colourNeutral
		}
		title := fmt.Sprintf("%s, speaker %s, %s - %s: %s", t.Label, t.Speaker, tsec(t.Start), tsec(t.End), t.Text)
		box("spk:"+t.Speaker, t.Start, t.End, col, t.Label, title, href, `class="turn"`)
	}
	// The model.
	for _, e := range c.Episodes {
		box("model", e.Start, e.End, colourModel, "", fmt.Sprintf("model speech %s - %s", tsec(e.Start), tsec(e.End)), "", `class="episode"`)
	}
	for _, tp := range c.Text {
		ly := y["model"]
		b.f(`<line x1="%.2f" x2="%.2f" y1="%.1f" y2="%.1f" stroke="#0072b2" stroke-width="2"><title>%s</title></line>`,
			x(tp.Time), x(tp.Time), ly+tlLane-5, ly+tlLane, esc(fmt.Sprintf("text at %s: %s", tsec(tp.Time), tp.Text)))
	}
	// The scheduler: the closed-loop wait after T and the fixed N4 gaps.
	if s := c.Session; s != nil && s.TWait != nil {
		wt := s.TWait
		box("sched", wt.Start, math.Max(wt.End, wt.Start), colourWait, "wait: "+wt.Ending,
			fmt.Sprintf("closed-loop wait after T %s - %s, ended by %s (model spoke: %v)", tsec(wt.Start), tsec(wt.End), wt.Ending, wt.Onset), "", `class="wait"`)
	}
	// The scoring windows.
	for _, v := range events {
		href := fmt.Sprintf("#ev-%d", v.Index)
		ev := v.Ev
		switch {
		case ev.T != nil:
			t := ev.T
			col := colourNeutral
			if t.Presence {
				if in, ok := v.Member(score.MeasureAccuracy); in && ok {
					col = colourPass
				} else {
					col = colourFail
				}
			}
			box("T", t.AnswerSpan.Start, t.AnswerSpan.End, col, "answer", "answer audio "+span(t.AnswerSpan)+": "+v.Verdict, href, `opacity="0.55"`)
			wcol := colourFail
			if t.FreshOnset {
				wcol = colourPass
			}
			ly := y["T"]
			b.f(`<a href="%s"><rect x="%.2f" y="%.1f" width="%.2f" height="6" fill="%s"><title>%s</title></rect></a>`, href, x(ev.End), ly, w(ev.End, ev.End+p.TOnsetWindow), wcol,
				esc(fmt.Sprintf("onset window (%s, %s]: %s", tsec(ev.End), tsec(ev.End+p.TOnsetWindow), t.Outcome)))
			if t.Onset != nil {
				b.f(`<path d="M%.2f %.1f l-5 -7 h10 z" fill="%s"><title>onset at %s</title></path>`, x(*t.Onset), ly+tlLane, colourModel, tsec(*t.Onset))
			}
		case ev.Silence != nil:
			col := colourPass
			if !v.Pass {
				col = colourFail
			}
			s := ev.Silence
			box("sil", s.Window.Start, s.Window.End, col, ev.Label, fmt.Sprintf("%s window %s: %s", ev.Label, span(s.Window), v.Verdict), href, `opacity="0.75"`, `stroke="#fff"`)
			for _, sp := range s.Speech {
				ly := y["sil"]
				b.f(`<rect x="%.2f" y="%.1f" width="%.2f" height="5" fill="%s"/>`, x(sp.Start), ly+tlLane-5, w(sp.Start, sp.End), colourModel)
			}
		case ev.N4 != nil:
			n := ev.N4
			box("sched", n.Question.End, n.Resolution, "#e3e7eb", "n4_gap", fmt.Sprintf("n4_gap (%s, %s]", tsec(n.Question.End), tsec(n.Resolution)), "", `stroke="#8a8f96"`)
			col := colourNeutral
			switch {
			case n.Eligible && n.Yield == score.YieldPass:
				col = colourPass
			case n.Eligible:
				col = colourFail
			}
			box("N4", n.Question.Start, n.Question.End, "#e3e7eb", "Q", "N4 question "+span(n.Question), href)
			box("N4", n.Question.End, n.Resolution, "#cfd6dd", "gap", fmt.Sprintf("gap: an onset here makes the event eligible (%s)", v.Verdict), href)
			box("N4", n.Resolution, n.Deadline, "#fff2a8", "", fmt.Sprintf("r = %s to r + yield_deadline = %s", tsec(n.Resolution), tsec(n.Deadline)), href)
			box("N4", n.Deadline, n.ObserveEnd, col, "observe", fmt.Sprintf("must stay silent %s - %s: %s", tsec(n.Deadline), tsec(n.ObserveEnd), v.Verdict), href, `opacity="0.8"`)
		}
	}
	bottom := height - tlAxis + 4
	b.f(`<line id="cursor" x1="%.2f" x2="%.2f" y1="%.1f" y2="%.1f" stroke="#d00" stroke-width="2"/>`, tlLeft, tlLeft, 2.0, bottom)
	b.f(`</svg>`)
	return timelineFigure{SVG: b.String(), Duration: dur, PPS: pps}
}
