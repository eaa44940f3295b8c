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

// Colours of the timeline: each means one thing, and the page's legend (legend) names
// every one the figure draws. The six turn labels and the model have their own; a
// verdict is pass, fail, or excluded (in no rate: hatched); the scheduler's wait after T
// is the only yellow; the N4 gap and the grace after r are outlines.
var labelColour = map[string]string{
	protocol.LabelT: "#0072b2", protocol.LabelN1: "#8a8f96", protocol.LabelN2: "#cc79a7",
	protocol.LabelN3: "#a6761d", protocol.LabelN4Q: "#56b4e9", protocol.LabelN4R: "#6a51a3",
	"N4": "#56b4e9", // an N4 event, as the explorer labels it, is its question's
}

// light fills get dark text.
var lightFill = map[string]bool{colourPreamble: true, colourWait: true, colourWords: true, colourOutline: true, colourExcluded: true, colourNeutral: true, labelColour[protocol.LabelN4Q]: true}

const (
	colourPreamble = "#d8dde3"
	colourModel    = "#1b1f24"
	colourWords    = "#ffffff"
	colourPass     = "#2e8b57"
	colourFail     = "#d55e00"
	colourExcluded = "url(#excluded)" // grey hatching on white
	colourWait     = "#f0e442"
	colourOutline  = "#fcfcfd" // the N4 gap and the grace after r: outlined, not filled
	colourNeutral  = "#e3e7eb" // a turn with a label the protocol does not have
	colourCursor   = "#000000"
	colourAxis     = "#aab1b9" // the time axis and its ticks
	colourGrid     = "#eef0f2" // the vertical lines at each tick
	hatchLine      = "#5b6470"
)

// swatch is one entry of the timeline's legend: how it is drawn (CSS) and what it means.
type swatch struct {
	Key, Style, Text string
}

// legend is every colour the timeline draws, in the order the legend lists them; the
// labels are defined in words beside it (protocol.LabelMeanings).
func legend() []swatch {
	var out []swatch
	for _, l := range protocol.Labels {
		out = append(out, swatch{"label-" + l, "background:" + labelColour[l], l + " turn"})
	}
	return append(out,
		swatch{"preamble", "background:" + colourPreamble, "spoken duty preamble"},
		swatch{"model", "background:" + colourModel, "the model's speech (episodes, onset, speech in a window)"},
		swatch{"words", "background:" + colourWords + ";border:1px solid " + colourModel, "the model's words: what the ASR heard in each stretch of its speech"},
		swatch{"wait", "background:" + colourWait, "the scheduler's wait after T"},
		swatch{"gap", "background:" + colourOutline + ";border:1px dashed " + hatchLine, "n4_gap: the silence after N4_Q, and an onset there"},
		swatch{"grace", "background:" + colourOutline + ";border:1px solid " + hatchLine, "r to r + yield_deadline: the model may still be speaking"},
		swatch{"pass", "background:" + colourPass, "pass"},
		swatch{"fail", "background:" + colourFail, "fail"},
		swatch{"excluded", "background:repeating-linear-gradient(45deg," + hatchLine + " 0 1.5px,#fff 1.5px 4px)", "excluded: in no rate (an N4 event that is not eligible; the answer window of a T turn with no response)"},
		swatch{"cursor", "background:" + colourCursor + ";width:2px", "where the recording is"},
	)
}

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
	var words []score.Words
	if c.Scored != nil {
		words = c.Scored.Words
	}
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
	lanes = append(lanes, lane{"model", "model speech"})
	if words != nil {
		lanes = append(lanes, lane{"words", "model's words"})
	}
	lanes = append(lanes, lane{"sched", "scheduler"})
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
	b.f(`<defs><pattern id="excluded" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="5" height="5" fill="#fff"/><line x1="0" y1="0" x2="0" y2="5" stroke="%s" stroke-width="1.5"/></pattern></defs>`, hatchLine)
	for i, l := range lanes {
		ly := y[l.key]
		if i%2 == 0 {
			b.f(`<rect x="0" y="%.1f" width="%.0f" height="%.1f" fill="#f6f8fa"/>`, ly-tlGap/2, tlWidth, tlLane+tlGap)
		}
		b.f(`<text x="%.0f" y="%.1f" class="lane">%s</text>`, tlLabelX, ly+tlLane/2+4, esc(l.title))
	}
	// Time axis.
	axisY := height - tlAxis + 4
	b.f(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>`, tlLeft, x(dur), axisY, axisY, colourAxis)
	step := 5.0
	for dur/step > 24 {
		step *= 2
	}
	for t := 0.0; t <= dur+1e-9; t += step {
		b.f(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/><line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/><text x="%.1f" y="%.1f" class="tick">%g s</text>`,
			x(t), x(t), axisY, axisY+4, colourAxis, x(t), x(t), tlTop, axisY, colourGrid, x(t), axisY+16, t)
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
		box("preamble", tl.PreambleStart, tl.PreambleEnd, colourPreamble, "spoken duty preamble",
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
		b.f(`<line x1="%.2f" x2="%.2f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"><title>%s</title></line>`,
			x(tp.Time), x(tp.Time), ly+tlLane-5, ly+tlLane, colourModel, esc(fmt.Sprintf("text at %s: %s", tsec(tp.Time), tp.Text)))
	}
	// The model's words: each stretch's transcript, from its start up to the next one
	// (the lane holds nothing else), cut to fit; the whole of it in the tooltip.
	for i, wd := range words {
		ly := y["words"]
		room := tlWidth - tlRight - x(wd.Span.Start)
		if i+1 < len(words) {
			room = x(words[i+1].Span.Start) - x(wd.Span.Start)
		}
		said := wd.Transcript
		if said == "" {
			said = "(no words heard)"
		}
		b.f(`<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s" stroke="%s" class="words-box"><title>%s</title></rect>`,
			x(wd.Span.Start), ly, w(wd.Span.Start, wd.Span.End), tlLane, colourWords, colourModel,
			esc(fmt.Sprintf("the model said, %s - %s: %s", tsec(wd.Span.Start), tsec(wd.Span.End), said)))
		if fit := int((room - 6) / 6); fit >= 2 {
			b.f(`<text x="%.2f" y="%.1f" class="words" data-i="%d">%s</text>`, x(wd.Span.Start)+3, ly+tlLane/2+4, i, esc(Shorten(said, fit)))
		}
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
			col := colourExcluded // no response: not in the accuracy denominator
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
			lo, hi := score.OnsetWindow(ev.End, p)
			b.f(`<a href="%s"><rect x="%.2f" y="%.1f" width="%.2f" height="6" fill="%s"><title>%s</title></rect></a>`, href, x(lo), ly, w(lo, hi), wcol,
				esc(fmt.Sprintf("onset window %s: %s", onsetWindow(ev.End, p), t.Outcome)))
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
			gap := `stroke="` + hatchLine + `" stroke-dasharray="4 2"`
			box("sched", n.Question.End, n.Resolution, colourOutline, "n4_gap", "n4_gap "+score.OpenClosed(n.Question.End, n.Resolution, tsec), "", gap)
			col := colourExcluded
			switch {
			case n.Eligible && n.Yield == score.YieldPass:
				col = colourPass
			case n.Eligible:
				col = colourFail
			}
			box("N4", n.Question.Start, n.Question.End, labelColour[protocol.LabelN4Q], "Q", "N4 question "+span(n.Question), href)
			box("N4", n.Question.End, n.Resolution, colourOutline, "gap", fmt.Sprintf("gap: an onset here makes the event eligible (%s)", v.Verdict), href, gap)
			box("N4", n.Resolution, n.Deadline, colourOutline, "", fmt.Sprintf("r = %s to r + yield_deadline = %s", tsec(n.Resolution), tsec(n.Deadline)), href, `stroke="`+hatchLine+`"`)
			box("N4", n.Deadline, n.ObserveEnd, col, "observe", fmt.Sprintf("must stay silent %s - %s: %s", tsec(n.Deadline), tsec(n.ObserveEnd), v.Verdict), href, `opacity="0.8"`)
		}
	}
	bottom := height - tlAxis + 4
	b.f(`<line id="cursor" x1="%.2f" x2="%.2f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="6 3"/>`, tlLeft, tlLeft, 2.0, bottom, colourCursor)
	b.f(`</svg>`)
	return timelineFigure{SVG: b.String(), Duration: dur, PPS: pps}
}
