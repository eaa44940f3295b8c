package report

import (
	"fmt"
	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/score"
)

// convsOf wraps scored items as the run directory's conversations.
func convsOf(items []score.Scored) []*viewer.Conv {
	out := make([]*viewer.Conv, len(items))
	for i := range items {
		it := items[i]
		out[i] = &viewer.Conv{Row: viewer.ItemRow{ID: fmt.Sprintf("%016x", i+1), Model: it.Model, Condition: it.Condition,
			Scenario: it.ScenarioID, Pair: it.PairID, TPosition: it.TPosition, Status: "done"}, Scored: &it}
	}
	return out
}

// match is the explorer's filter (exploreJS's matchEvent), written again here so that the
// links of every table can be checked without a browser; the browser tests check the
// script itself on a real run.
func match(f viewer.Filter, c *viewer.Conv, v viewer.Event, p viewer.Pairing) (in, success bool) {
	if f.Paired != "" && !p.Both {
		return false, false
	}
	for _, m := range strings.Split(f.With, ",") {
		if f.With != "" && m != c.Row.Model && !contains(p.Shared, m) {
			return false, false
		}
	}
	if f.Model != "" && !contains(strings.Split(f.Model, ","), c.Row.Model) ||
		f.Condition != "" && c.Row.Condition != f.Condition ||
		f.Position != "" && tPosition(c.Row.TPosition) != f.Position ||
		f.Label != "" && v.Label != f.Label ||
		f.Third != "" && strconv.Itoa(v.Ev.Third) != f.Third ||
		f.Addressee != "" && v.Addressee() != f.Addressee ||
		f.Outcome != "" && !contains(v.Outcomes, f.Outcome) {
		return false, false
	}
	if f.Measure == "" {
		return true, v.Pass
	}
	m, ok := v.Member(f.Measure)
	if !m || f.Result == "pass" && !ok || f.Result == "fail" && ok {
		return false, false
	}
	return true, ok
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var (
	kOfN     = regexp.MustCompile(`^-?\d\.\d{3} \((\d+)/(\d+)\)`)   // a rate: k successes of n events
	countOf  = regexp.MustCompile(`^(\d+)/(\d+)( \(\d\.\d{3}\))?$`) // a count: k events of n
	naOfN    = regexp.MustCompile(`^n/a \(n=(\d+)\)$`)
	integerC = regexp.MustCompile(`^\d+$`)
)

// Every cell of every table that names a measure links to exactly the events it counts:
// a rate cell's k/n are the successes and the events the filter selects, a count cell's
// k is the events it selects. This holds the memberships of viewEvents to
// score.Summarize's definitions, cell by cell, and cellFilter to each table's layout.
func TestEveryCellLinksToTheEventsItCounts(t *testing.T) {
	items := fixture(12)
	items[3].TPosition = ""                                           // an unspecified position has its own row
	items[6].Unscored = "the judge failed: HTTP 503 after 5 attempts" // in no denominator, and no event of it is listed
	s := score.Summarize(items, testParams(5))
	convs := convsOf(items)
	type ev struct {
		c *viewer.Conv
		v viewer.Event
	}
	var events []ev
	for _, c := range convs {
		for _, v := range viewer.EventsOf(c.Scored) {
			events = append(events, ev{c, v})
		}
	}
	pairs := viewer.Pairings(convs)
	checked := map[string]int{}
	for _, sec := range sections(s, testMeta(), nil) {
		for ti, tb := range sec.Tables {
			for ri, row := range tb.Rows {
				for col, text := range row {
					f, ok := cellFilter(sec.ID, tb.Header, row, col)
					if !ok || f.Measure == "" {
						continue
					}
					n, k := 0, 0
					for _, e := range events {
						if in, success := match(f, e.c, e.v, pairs[e.c]); in {
							n++
							if success {
								k++
							}
						}
					}
					where := fmt.Sprintf("%s table %d row %d %q = %q (%s)", sec.ID, ti, ri, tb.Header[col], text, f.Fragment())
					switch {
					case kOfN.MatchString(text):
						m := kOfN.FindStringSubmatch(text)
						if strconv.Itoa(k) != m[1] || strconv.Itoa(n) != m[2] {
							t.Errorf("%s: the link selects %d events, %d successes", where, n, k)
						}
					case naOfN.MatchString(text):
						if m := naOfN.FindStringSubmatch(text); strconv.Itoa(n) != m[1] {
							t.Errorf("%s: the link selects %d events", where, n)
						}
					case countOf.MatchString(text):
						if m := countOf.FindStringSubmatch(text); strconv.Itoa(n) != m[1] {
							t.Errorf("%s: the link selects %d events", where, n)
						}
					case integerC.MatchString(text):
						if sec.ID == "comparisons" || sec.ID == "paired" || tb.Header[col] == "conversations" {
							continue // pairs, b, c: not event counts
						}
						if strconv.Itoa(n) != text {
							t.Errorf("%s: the link selects %d events", where, n)
						}
					default:
						continue
					}
					checked[sec.ID]++
				}
			}
		}
	}
	for _, id := range []string{"main", "paired", "t-outcomes", "judge", "silence", "yield", "by-position", "by-third", "sweep", "comparisons"} {
		if checked[id] == 0 {
			t.Errorf("no cell of section %q was checked", id)
		}
	}
	t.Logf("cells checked per section: %v", checked)
}

// tPosition is the conversation's T position as the summary groups it.
func tPosition(pos string) string {
	if pos == "" {
		return "unspecified"
	}
	return pos
}
