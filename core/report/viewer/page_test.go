package viewer

import (
	"regexp"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// pageConv is a scored conversation with every kind of event and drawing: a T turn
// answered, an N1 window the model spoke in, an N2 and an N3 window, one N4 event
// eligible and yielded and one excluded (the model spoke during the question), the wait
// after T, and the model's words; one episode, after the second N4 question, is in no
// scoring window at all. Seconds:
//
//	N1 [0, 2)  T [2.5, 5)  N2 [8.5, 10)  N4_Q [14.5, 16)  N4_R [19, 20)  N3 [20.5, 22)  N4_Q [23, 24)  N4_R [27, 28)
func pageConv(t *testing.T) *Conv {
	t.Helper()
	tl := timeline.Timeline{Turns: []timeline.Turn{
		{Label: protocol.LabelN1, Speaker: "A", Text: "Aria is new here.", Start: 0, End: 2},
		{Label: protocol.LabelT, Speaker: "B", Text: "Aria, what time is it?", Start: 2.5, End: 5},
		{Label: protocol.LabelN2, Addressee: protocol.AddresseeHuman, Speaker: "C", Text: "Bob, pass the salt.", Start: 8.5, End: 10},
		{Label: protocol.LabelN4Q, Speaker: "B", Text: "Aria, how far is it?", Start: 14.5, End: 16},
		{Label: protocol.LabelN4R, Speaker: "C", Text: "Never mind, I know.", Start: 19, End: 20},
		{Label: protocol.LabelN3, Speaker: "A", Text: "Hmm, where was I.", Start: 20.5, End: 22},
		{Label: protocol.LabelN4Q, Speaker: "B", Text: "Aria, is it raining?", Start: 23, End: 24},
		{Label: protocol.LabelN4R, Speaker: "A", Text: "No, it stopped.", Start: 27, End: 28},
	}, Duration: 30}
	eps := []timeline.Episode{{Start: 1, End: 1.6}, {Start: 5.5, End: 8}, {Start: 16.5, End: 19.5}, {Start: 23.2, End: 23.8}}
	sc := score.Score(score.Item{Model: "m", Condition: protocol.Explicit, PairID: "p", ScenarioID: "s", Timeline: tl, Episodes: eps}, protocol.Defaults())
	for i := range sc.Events {
		switch ev := &sc.Events[i]; {
		case ev.T != nil && ev.T.Presence:
			ev.T.Answer = &score.Judgement{Transcript: "it is noon", Label: "correct", Parsed: true, OK: true}
		case ev.Silence != nil && !ev.Silence.Silent():
			ev.Silence.Judgement = &score.Judgement{Transcript: "mm hm", Label: "acknowledgement", Parsed: true, OK: true}
		}
	}
	sc.Words = []score.Words{{Span: score.Span(eps[0]), Transcript: "mm hm"}, {Span: score.Span(eps[1]), Transcript: "it is noon"},
		{Span: score.Span(eps[2]), Transcript: "about ten miles from here"}, {Span: score.Span(eps[3]), Transcript: ""}}
	var n4 []score.N4Verdict
	for _, ev := range sc.Events {
		if ev.N4 != nil {
			n4 = append(n4, *ev.N4)
		}
	}
	if len(n4) != 2 || !n4[0].Eligible || n4[0].Yield != score.YieldPass || n4[1].Eligible {
		t.Fatalf("the fixture's N4 events are not one yielded and one excluded: %+v", n4)
	}
	c := &Conv{Row: ItemRow{ID: "00000000000000c1", Model: "m", Condition: protocol.Explicit, Scenario: "s", Status: "done"},
		Timeline: &tl, Episodes: eps, Scored: &sc, Session: &store.SessionInfo{}}
	c.Session.TWait = &record.TWait{Start: 5, End: 10, Onset: true, Ending: "silence"}
	return c
}

func renderPage(t *testing.T, c *Conv) string {
	t.Helper()
	page, err := conversationPage(c, AudioInfo{}, openRoom(""), Options{Protocol: protocol.Defaults(), Report: "report.html"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(page)
}

// Issue 23: every colour the timeline draws is in the page's legend, and each legend
// entry is one colour: nothing drawn goes unexplained, and no two meanings share one.
func TestTimelineColoursAreAllInTheLegend(t *testing.T) {
	c := pageConv(t)
	svg := drawTimeline(c, EventsOf(c.Scored), protocol.Defaults()).SVG
	hex := regexp.MustCompile(`#[0-9a-f]{6}`)
	inLegend := map[string]string{}
	styles := map[string]string{}
	for _, sw := range legend() {
		if other, ok := styles[sw.Style]; ok {
			t.Errorf("%q and %q are drawn alike (%s)", other, sw.Text, sw.Style)
		}
		styles[sw.Style] = sw.Text
		for _, c := range hex.FindAllString(sw.Style, -1) {
			inLegend[c] = sw.Text
		}
		if strings.Contains(sw.Style, "repeating-linear-gradient") {
			inLegend[colourExcluded] = sw.Text
		}
	}
	// The colours of the labels, the model's speech, the wait and the verdicts are
	// solid fills, each its own.
	solid := map[string]string{}
	for _, sw := range legend() {
		if c, ok := strings.CutPrefix(sw.Style, "background:"); ok && !strings.Contains(c, ";") {
			if other, dup := solid[c]; dup {
				t.Errorf("the colour %s means two things: %q and %q", c, other, sw.Text)
			}
			solid[c] = sw.Text
		}
	}
	structure := map[string]bool{"#f6f8fa": true, colourAxis: true, colourGrid: true, "#fff": true}
	drawn := regexp.MustCompile(`(?:fill|stroke)="([^"]+)"`)
	for _, m := range drawn.FindAllStringSubmatch(svg, -1) {
		if _, ok := inLegend[m[1]]; !ok && !structure[m[1]] {
			t.Errorf("the timeline draws %s, which the legend does not name", m[1])
		}
	}
	for _, want := range []string{colourExcluded, colourPass, colourWait, colourWords, labelColour[protocol.LabelN4R]} {
		if !strings.Contains(svg, `"`+want+`"`) {
			t.Errorf("the fixture draws no %s (%s)", want, inLegend[want])
		}
	}
}

// Issue 23: the page defines the six labels as docs/protocol.md does, shows the model's
// words on the timeline and in a list for every episode (the one after the second N4
// question too, which no verdict transcribes), and draws the excluded N4 event as
// excluded, not as a failure.
func TestPageDefinesLabelsShowsWordsAndExcludedEvents(t *testing.T) {
	c := pageConv(t)
	page := renderPage(t, c)
	for _, l := range protocol.LabelMeanings {
		if !strings.Contains(page, "<dt>"+l.Label+"</dt><dd>") || !strings.Contains(page, `data-key="label-`+l.Label+`"`) {
			t.Errorf("the page does not define %s or has no legend entry for it", l.Label)
		}
	}
	_, fig, _ := strings.Cut(page, `<svg class="timeline"`)
	fig, _, _ = strings.Cut(fig, "</svg>")
	words := regexp.MustCompile(`<text[^>]*class="words" data-i="\d+">([^<]*)</text>`).FindAllStringSubmatch(fig, -1)
	if len(words) != len(c.Scored.Words) {
		t.Fatalf("the timeline writes %d episodes' words, want %d: %v", len(words), len(c.Scored.Words), words)
	}
	for i, w := range c.Scored.Words {
		said := strings.TrimSuffix(words[i][1], "…")
		if w.Transcript == "" && said != "(no words heard)" || w.Transcript != "" && !strings.HasPrefix(w.Transcript, said) {
			t.Errorf("episode %d: the timeline writes %q for %q", i, words[i][1], w.Transcript)
		}
	}
	_, list, _ := strings.Cut(page, `<table class="words">`)
	if !strings.Contains(list, "about ten miles from here") || strings.Count(list, "<tr data-start=") != len(c.Scored.Words) {
		t.Errorf("the words list does not hold every episode:\n%s", list)
	}
	var excluded, failed int
	for _, row := range strings.Split(page, `<tr id="ev-`)[1:] {
		if strings.Contains(row, `data-label="N4"`) && strings.Contains(row, "Excluded:") {
			excluded++
			if !strings.Contains(row, `class="v-excluded"`) || strings.Contains(row, `class="v-fail"`) {
				t.Errorf("the excluded N4 event is not drawn as excluded: %s", row)
			}
		}
		if strings.Contains(row, `class="v-fail"`) {
			failed++
		}
	}
	if excluded != 1 || failed != 0 {
		t.Errorf("%d excluded N4 rows, %d failed rows; want 1 and 0", excluded, failed)
	}
	if !strings.Contains(fig, `fill="`+colourExcluded+`" opacity="0.8"`) {
		t.Error("the excluded N4 event's observation window is not hatched")
	}
	// A conversation the model spoke in whose verdicts have no words says how to get them.
	c.Scored.Words = nil
	if page := renderPage(t, c); !strings.Contains(page, `id="words-note"`) {
		t.Error("a page without the model's words does not say why")
	}
}
