package report

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"math"
	"regexp"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/stats"
)

// Chart kinds a section can ask for.
const (
	chartMeasures      = "measures"
	chartTOutcomes     = "t-outcomes"
	chartSilenceLabels = "silence-labels"
	chartSweep         = "sweep"
	chartSpearman      = "spearman"
)

// palette is colour-blind safe (Okabe-Ito).
var palette = []color.RGBA{
	{0, 114, 178, 255}, {230, 159, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{86, 180, 233, 255}, {213, 94, 0, 255}, {240, 228, 66, 255}, {0, 0, 0, 255},
}

func colour(i int) color.RGBA { return palette[i%len(palette)] }

// chart is one rendered SVG with its caption.
type chart struct {
	Title string
	SVG   string
}

// charts renders the charts of one kind. A chart that cannot be drawn is left out: the
// tables carry every number.
func charts(kind string, s score.Summary) []chart {
	if len(s.Entries) == 0 {
		return nil
	}
	var out []chart
	add := func(title string, p *plot.Plot, w, h vg.Length, fix func(*plot.Plot, draw.Canvas)) {
		if svg, err := renderSVG(p, w, h, fix); err == nil {
			out = append(out, chart{Title: title, SVG: svg})
		}
	}
	switch kind {
	case chartMeasures:
		models, conds := modelsAndConditions(s)
		for _, mi := range score.MeasureTable {
			rates := make([][]score.Rate, len(conds))
			for ci, c := range conds {
				rates[ci] = make([]score.Rate, len(models))
				for mj, m := range models {
					if e, ok := findEntry(s, m, c); ok {
						rates[ci][mj] = e.Rate(mi.Key)
					}
				}
			}
			p, fix := barChart(mi.Title, "rate", models, conds, rates)
			add("Denominator: "+mi.Denominator+". Whiskers: Wilson 95% interval; n/a: no events, or yield below min_eligible.", p, 380, 250, fix)
		}
	case chartTOutcomes:
		outcomes := []string{score.OutcomeFreshOnset, score.OutcomeAlreadySpeaking, score.OutcomeSilent}
		rates := make([][]score.Rate, len(outcomes))
		for oi, o := range outcomes {
			for _, e := range s.Entries {
				rates[oi] = append(rates[oi], shareRate(e.TOutcomes[o], sum(e.TOutcomes)))
			}
		}
		p, fix := barChart("T outcomes", "share of T turns", entryNames(s), outcomes, rates)
		add("T outcome shares with Wilson 95% intervals", p, vg.Length(max(380, 110*len(s.Entries))), 260, fix)
	case chartSilenceLabels:
		labels := []string{protocol.LabelN1, protocol.LabelN2, protocol.LabelN3}
		rates := make([][]score.Rate, len(labels))
		for li, l := range labels {
			for _, e := range s.Entries {
				rates[li] = append(rates[li], e.SilenceByLabel[l])
			}
		}
		p, fix := barChart("Silence preservation by label", "windows of each label", entryNames(s), labels, rates)
		add("Silence preservation by label with Wilson 95% intervals", p, vg.Length(max(380, 110*len(s.Entries))), 260, fix)
	case chartSweep:
		if p, err := sweepChart(s); err == nil {
			add("One line per model and condition: the rate when speech totalling more than the threshold fails a window (no judge).", p, 420, 270, nil)
		}
	case chartSpearman:
		if p, err := spearmanChart(s); err == nil {
			add("Response presence vs fresh-onset rate, one point per model x condition", p, 360, 300, nil)
		}
	}
	return out
}

// shareRate is a count out of a total as a Rate with its Wilson interval.
func shareRate(k, n int) score.Rate {
	r := score.Rate{K: k, N: n, Text: fmt.Sprintf("n/a (n=%d)", n)}
	if n > 0 {
		r.Available, r.Rate = true, float64(k)/float64(n)
		r.Lo, r.Hi = stats.Wilson(k, n, score.Confidence)
	}
	return r
}

func modelsAndConditions(s score.Summary) (models, conds []string) {
	seenM, seenC := map[string]bool{}, map[string]bool{}
	for _, e := range s.Entries {
		if !seenM[e.Model] {
			seenM[e.Model] = true
			models = append(models, e.Model)
		}
		if !seenC[e.Condition] {
			seenC[e.Condition] = true
			conds = append(conds, e.Condition)
		}
	}
	return models, conds
}

func findEntry(s score.Summary, model, cond string) (score.Entry, bool) {
	for _, e := range s.Entries {
		if e.Model == model && e.Condition == cond {
			return e, true
		}
	}
	return score.Entry{}, false
}

func entryNames(s score.Summary) []string {
	var out []string
	for _, e := range s.Entries {
		out = append(out, e.Model+"\n"+e.Condition)
	}
	return out
}

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	sans := func(f *font.Font) { f.Variant = "Sans" }
	sans(&p.Title.TextStyle.Font)
	sans(&p.X.Label.TextStyle.Font)
	sans(&p.Y.Label.TextStyle.Font)
	sans(&p.X.Tick.Label.Font)
	sans(&p.Y.Tick.Label.Font)
	sans(&p.Legend.TextStyle.Font)
	p.Title.TextStyle.Font.Size = 11
	p.Legend.TextStyle.Font.Size = 9
	p.X.Tick.Label.Font.Size = 9
	p.Y.Tick.Label.Font.Size = 9
	p.Y.Label.TextStyle.Font.Size = 9
	p.X.Label.TextStyle.Font.Size = 9
	return p
}

var unitTicks = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.2, Label: "0.2"}, {Value: 0.4, Label: "0.4"},
	{Value: 0.6, Label: "0.6"}, {Value: 0.8, Label: "0.8"}, {Value: 1, Label: "1"}})

// barChart draws one bar per (series, group) with its Wilson interval; groups along x.
// Unavailable rates draw no bar and read "n/a". The returned fix sets the bar width
// once the data area is known.
func barChart(title, ylabel string, groups, series []string, rates [][]score.Rate) (*plot.Plot, func(*plot.Plot, draw.Canvas)) {
	p := newPlot(title)
	p.Y.Label.Text = ylabel
	// Room above 1 for the legend, one row per series, so it never covers a bar or a
	// whisker at 1.
	p.Y.Min, p.Y.Max = 0, 1.08+0.085*float64(len(series))
	p.Y.Tick.Marker = unitTicks
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	p.NominalX(groups...)
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.Padding = vg.Points(2)
	nS := float64(len(series))
	slot := 0.8 / nS // data units per bar
	var bars []*plotter.BarChart
	for si, name := range series {
		off := -0.4 + slot*(float64(si)+0.5)
		vals := make(plotter.Values, len(groups))
		var errs plotter.YErrors
		var pts plotter.XYs
		var naPts plotter.XYs
		var naText []string
		for gi := range groups {
			r := rates[si][gi]
			x := float64(gi) + off
			if !r.Available {
				naPts = append(naPts, plotter.XY{X: x, Y: 0.02})
				naText = append(naText, "n/a")
				continue
			}
			vals[gi] = r.Rate
			pts = append(pts, plotter.XY{X: x, Y: r.Rate})
			errs = append(errs, struct{ Low, High float64 }{r.Rate - r.Lo, r.Hi - r.Rate})
		}
		b, err := plotter.NewBarChart(vals, vg.Points(10))
		if err != nil {
			continue
		}
		b.XMin = off
		b.Color = colour(si)
		b.LineStyle.Width = 0
		p.Add(b)
		p.Legend.Add(name, b)
		bars = append(bars, b)
		if len(pts) > 0 {
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{pts, errs})
			if err == nil {
				eb.LineStyle.Width = vg.Points(1)
				eb.CapWidth = vg.Points(5)
				p.Add(eb)
			}
		}
		if len(naPts) > 0 {
			if l, err := plotter.NewLabels(plotter.XYLabels{XYs: naPts, Labels: naText}); err == nil {
				for i := range l.TextStyle {
					l.TextStyle[i].Font.Variant = "Sans"
					l.TextStyle[i].Font.Size = 8
					l.TextStyle[i].XAlign = draw.XCenter
				}
				p.Add(l)
			}
		}
	}
	fix := func(p *plot.Plot, c draw.Canvas) {
		da := p.DataCanvas(c)
		unit := (da.Max.X - da.Min.X) / vg.Length(p.X.Max-p.X.Min)
		for _, b := range bars {
			b.Width = unit * vg.Length(slot*0.9)
		}
	}
	return p, fix
}

func sweepChart(s score.Summary) (*plot.Plot, error) {
	p := newPlot("Silence preservation by duration threshold")
	p.X.Label.Text = "a window fails when its speech totals more than (ms)"
	p.Y.Label.Text = "rate"
	p.Y.Min, p.Y.Max = 0, 1.05
	p.Y.Tick.Marker = unitTicks
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.YOffs = vg.Points(20)
	var ticks []plot.Tick
	for _, thr := range score.SweepThresholdsMS {
		ticks = append(ticks, plot.Tick{Value: thr, Label: fmt.Sprintf("%g", thr)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	drawn := 0
	for i, e := range s.Entries {
		var pts plotter.XYs
		for _, tr := range e.SilenceSweep {
			if tr.Rate.Available {
				pts = append(pts, plotter.XY{X: tr.ThresholdMS, Y: tr.Rate.Rate})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		l.Color, sc.Color = colour(i), colour(i)
		l.Width = vg.Points(1.5)
		p.Add(l, sc)
		p.Legend.Add(e.Model+" "+e.Condition, l, sc)
		drawn++
	}
	if drawn == 0 {
		return nil, fmt.Errorf("no silence windows")
	}
	return p, nil
}

func spearmanChart(s score.Summary) (*plot.Plot, error) {
	p := newPlot("Presence vs fresh onset")
	p.X.Label.Text = "response presence"
	p.Y.Label.Text = "fresh-onset rate"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1.05, 0, 1.05
	p.X.Tick.Marker, p.Y.Tick.Marker = unitTicks, unitTicks
	var pts plotter.XYs
	for _, e := range s.Entries {
		if e.Presence.Available && e.FreshOnset.Available {
			pts = append(pts, plotter.XY{X: e.Presence.Rate, Y: e.FreshOnset.Rate})
		}
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("no entries with T turns")
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	sc.Color = colour(0)
	sc.Radius = vg.Points(3)
	p.Add(sc)
	for _, l := range pointLabels(s) {
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{l.at}, Labels: []string{l.text}})
		if err != nil {
			continue
		}
		st := &lab.TextStyle[0]
		st.Font.Variant, st.Font.Size = "Sans", 8
		if l.at.X > 0.55 { // near the right edge the label goes to the left of its point
			st.XAlign = draw.XRight
			lab.Offset.X = -vg.Points(4)
		} else {
			lab.Offset.X = vg.Points(4)
		}
		lab.Offset.Y = vg.Points(-10 * float64(l.row))
		p.Add(lab)
	}
	if s.Spearman.Available {
		p.Title.Text += fmt.Sprintf(" (Spearman over the models under test: rho = %.3f, n = %d)", s.Spearman.Rho, s.Spearman.N)
	}
	return p, nil
}

// pointLabel is one label of the Spearman scatter: the entries at one point, joined,
// and its row among labels that would otherwise overlap.
type pointLabel struct {
	at   plotter.XY
	text string
	row  int
}

// pointLabels names the scatter's points so that no two labels overlap: entries at the
// same point share one label, and labels of nearby points are stacked.
func pointLabels(s score.Summary) []pointLabel {
	var out []pointLabel
	for _, e := range s.Entries {
		if !e.Presence.Available || !e.FreshOnset.Available {
			continue
		}
		at := plotter.XY{X: e.Presence.Rate, Y: e.FreshOnset.Rate}
		name := e.Model + " " + e.Condition
		merged := false
		for i := range out {
			if math.Abs(out[i].at.X-at.X) < 1e-9 && math.Abs(out[i].at.Y-at.Y) < 1e-9 {
				out[i].text += ", " + name
				merged = true
			}
		}
		if !merged {
			out = append(out, pointLabel{at: at, text: name})
		}
	}
	for i := range out {
		for j := range i {
			if math.Abs(out[j].at.X-out[i].at.X) < 0.3 && math.Abs(out[j].at.Y-out[i].at.Y) < 0.08 && out[j].row >= out[i].row {
				out[i].row = out[j].row + 1
			}
		}
	}
	return out
}

var (
	svgPrelude = regexp.MustCompile(`(?s)^.*?<svg `)
	svgXMLNS   = regexp.MustCompile(`\s+xmlns(:xlink)?="[^"]*"`)
)

// renderSVG draws the plot and returns an <svg> element for inline use in HTML: without
// the XML prelude and namespace attributes (HTML needs neither), so the page carries no
// URL at all.
func renderSVG(p *plot.Plot, w, h vg.Length, fix func(*plot.Plot, draw.Canvas)) (svg string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot %q: %v", p.Title.Text, r)
		}
	}()
	c := vgsvg.New(vg.Points(float64(w)), vg.Points(float64(h)))
	dc := draw.New(c)
	if fix != nil {
		fix(p, dc)
	}
	p.Draw(dc)
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	label := html.EscapeString(p.Title.Text)
	out := svgPrelude.ReplaceAllLiteralString(b.String(), `<svg role="img" aria-label="`+label+`" `)
	return svgXMLNS.ReplaceAllString(out, ""), nil
}
