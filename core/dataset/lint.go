package dataset

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// Grid declares the values each scene attribute may take (datasets/open-v1/authoring/
// grid.json) and how many each axis needs at least.
type Grid struct {
	Settings      []string `json:"settings"`
	Activities    []string `json:"activities"`
	Relationships []string `json:"relationships"`
	Devices       []string `json:"devices"`
	Registers     []string `json:"registers"`
	// Goals are the declared construction shares of a release (open v2); nil for v1.
	Goals *Goals `json:"goals,omitempty"`
}

// Minimum sizes of a benchmark's grid (docs/datasheet.md).
var gridMinimum = map[string]int{"setting": 16, "activity": 16, "relationship": 6, "devices": 6, "register": 5}

// LoadGrid reads a grid file.
func LoadGrid(path string) (*Grid, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var g Grid
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return nil, fmt.Errorf("grid %s: %w", path, err)
	}
	return &g, nil
}

// LintCheck is one measured property of a set against its goal.
type LintCheck struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Goal   string `json:"goal"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail,omitempty"`
}

// LintReport is what Lint found.
type LintReport struct {
	Pairs  int         `json:"pairs"`
	Checks []LintCheck `json:"checks"`
}

// Failed counts the checks that miss their goal.
func (r *LintReport) Failed() int {
	n := 0
	for _, c := range r.Checks {
		if !c.Pass {
			n++
		}
	}
	return n
}

// Print writes the report as a table.
func (r *LintReport) Print(w io.Writer) {
	fmt.Fprintf(w, "%d pairs\n", r.Pairs)
	for _, c := range r.Checks {
		mark := "ok  "
		if !c.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%s %-28s %-22s goal %s\n", mark, c.Name, c.Value, c.Goal)
		if c.Detail != "" {
			for _, l := range strings.Split(c.Detail, "\n") {
				fmt.Fprintf(w, "       %s\n", l)
			}
		}
	}
}

// ariaForms are Aria's name and what a listener would hear as it.
var ariaForms = regexp.MustCompile(`(?i)\b(aria|arya|ari|ariana|arianna)\b`)

// normText is a turn's text for comparison: lower case, letters, digits and single spaces.
func normText(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		} else {
			space = true
		}
	}
	return b.String()
}

// Lint measures a set against the construction rules of a benchmark release (issue 21,
// docs/datasheet.md): the scenario and pair rules, verbatim repetition across pairs,
// distinct requests, attribute and T-position balance, speaker counts, N4 coverage and
// who resolves it, the labels every scenario holds, context facts, and Aria's name in
// implicit turns. grid may be nil (then the attribute checks only count values).
func Lint(d *Dataset, grid *Grid) *LintReport {
	rep := &LintReport{}
	add := func(name, value, goal string, pass bool, detail string) {
		rep.Checks = append(rep.Checks, LintCheck{Name: name, Value: value, Goal: goal, Pass: pass, Detail: detail})
	}
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	first := func(xs []string, n int) string {
		if len(xs) > n {
			return strings.Join(xs[:n], "\n") + fmt.Sprintf("\n... and %d more", len(xs)-n)
		}
		return strings.Join(xs, "\n")
	}

	vs := Validate(d)
	var vd []string
	for _, v := range vs {
		vd = append(vd, v.String())
	}
	add("scenario and pair rules", fmt.Sprintf("%d violations", len(vs)), "0", len(vs) == 0, first(vd, 10))

	type pairInfo struct {
		e, im *Scenario
	}
	pairs := map[string]*pairInfo{}
	var order []string
	for i := range d.Scenarios {
		s := &d.Scenarios[i]
		p := pairs[s.PairID]
		if p == nil {
			p = &pairInfo{}
			pairs[s.PairID] = p
			order = append(order, s.PairID)
		}
		if s.Condition == protocol.Explicit {
			p.e = s
		} else {
			p.im = s
		}
	}
	rep.Pairs = len(order)

	// Verbatim repetition: a turn text (normalised) said in more than one pair. Turns
	// shared by both versions of a pair count once. Short backchannels ("Yeah.") are
	// what people say everywhere, so texts under four words are not counted.
	where := map[string]map[string]bool{}
	total := 0
	for _, id := range order {
		p := pairs[id]
		seen := map[string]bool{}
		for _, s := range []*Scenario{p.e, p.im} {
			if s == nil {
				continue
			}
			for _, t := range s.Turns {
				n := normText(t.Text)
				if seen[n] || len(strings.Fields(n)) < 4 {
					continue
				}
				seen[n] = true
				total++
				if where[n] == nil {
					where[n] = map[string]bool{}
				}
				where[n][id] = true
			}
		}
	}
	repeated := 0
	var reps []string
	for n, ids := range where {
		if len(ids) > 1 {
			repeated += len(ids)
			var l []string
			for id := range ids {
				l = append(l, id)
			}
			sort.Strings(l)
			reps = append(reps, fmt.Sprintf("%q in %s", n, strings.Join(l, ", ")))
		}
	}
	sort.Strings(reps)
	add("verbatim repetition", fmt.Sprintf("%.2f%% (%d of %d turns)", pct(repeated, total), repeated, total), "<= 1%", pct(repeated, total) <= 1, first(reps, 10))

	// Distinct requests.
	for _, cond := range []string{protocol.Explicit, protocol.Implicit} {
		texts := map[string][]string{}
		n := 0
		for _, id := range order {
			s := pairs[id].e
			if cond == protocol.Implicit {
				s = pairs[id].im
			}
			if s == nil || s.TIndex() < 0 {
				continue
			}
			n++
			k := normText(s.Turns[s.TIndex()].Text)
			texts[k] = append(texts[k], id)
		}
		var dups []string
		for k, ids := range texts {
			if len(ids) > 1 {
				dups = append(dups, fmt.Sprintf("%q in %s", k, strings.Join(ids, ", ")))
			}
		}
		sort.Strings(dups)
		add("distinct "+cond+" T requests", fmt.Sprintf("%d of %d", len(texts), n), "all distinct", len(texts) == n, first(dups, 10))
	}

	// The per-pair counts are dataset stats over the explicit versions of whole pairs.
	var explicits []Scenario
	for _, id := range order {
		if p := pairs[id]; p.e != nil && p.im != nil {
			explicits = append(explicits, *p.e)
		}
	}
	st := ComputeStats(&Dataset{Scenarios: explicits})

	// Attributes over pairs.
	axes := []struct {
		name  string
		allow []string
	}{{"setting", nil}, {"activity", nil}, {"relationship", nil}, {"devices", nil}, {"register", nil}}
	if grid != nil {
		axes[0].allow, axes[1].allow, axes[2].allow, axes[3].allow, axes[4].allow = grid.Settings, grid.Activities, grid.Relationships, grid.Devices, grid.Registers
	}
	for _, ax := range axes {
		count := st.Attributes[ax.name]
		if ax.allow == nil {
			add(ax.name+" values", fmt.Sprintf("%d", len(count)), fmt.Sprintf(">= %d (no grid given)", gridMinimum[ax.name]), len(count) >= gridMinimum[ax.name], "")
			continue
		}
		var unused, outside []string
		for _, v := range ax.allow {
			if count[v] == 0 {
				unused = append(unused, v)
			}
		}
		allowed := map[string]bool{}
		for _, v := range ax.allow {
			allowed[v] = true
		}
		for v := range count {
			if !allowed[v] {
				outside = append(outside, v)
			}
		}
		sort.Strings(outside)
		detail := ""
		if len(unused) > 0 {
			detail = "unused: " + strings.Join(unused, "; ")
		}
		if len(outside) > 0 {
			detail += "not in the grid: " + strings.Join(outside, "; ")
		}
		ok := len(unused) == 0 && len(outside) == 0 && len(ax.allow) >= gridMinimum[ax.name]
		add(ax.name+" grid", fmt.Sprintf("%d of %d values used", len(ax.allow)-len(unused), len(ax.allow)), fmt.Sprintf("every value, >= %d values", gridMinimum[ax.name]), ok, detail)
	}

	n4 := 0 // pairs with an N4 event
	var missing, named, nocue, n2aria []string
	for _, id := range order {
		p := pairs[id]
		if p.e == nil || p.im == nil {
			continue
		}
		for _, t := range p.e.Turns {
			if t.Label == protocol.LabelN4Q {
				n4++
				break
			}
		}
		for _, s := range []*Scenario{p.e, p.im} {
			var n1, n2h, n2d, n3 bool
			for _, t := range s.Turns {
				switch {
				case t.Label == protocol.LabelN1:
					n1 = true
				case t.Label == protocol.LabelN2 && t.Addressee == "human":
					n2h = true
				case t.Label == protocol.LabelN2 && t.Addressee == "device":
					n2d = true
				case t.Label == protocol.LabelN3:
					n3 = true
				}
			}
			for i, t := range s.Turns {
				if t.Label == protocol.LabelN2 && t.Addressee == "human" && NamesAria(t.Text) {
					n2aria = append(n2aria, fmt.Sprintf("%s turn %d: %q", s.ScenarioID, i, t.Text))
				}
			}
			if !(n1 && n2h && n2d && n3) {
				missing = append(missing, fmt.Sprintf("%s: N1 %v, N2 human %v, N2 device %v, N3 %v", s.ScenarioID, n1, n2h, n2d, n3))
			}
		}
		ti := p.im.TIndex()
		if ti >= 0 {
			if ariaForms.MatchString(p.im.Turns[ti].Text) {
				named = append(named, fmt.Sprintf("%s turn %d: %q", p.im.ScenarioID, ti, p.im.Turns[ti].Text))
			}
			if ti > 0 && p.im.Turns[ti-1].Text != p.e.Turns[ti-1].Text && ariaForms.MatchString(p.im.Turns[ti-1].Text) {
				named = append(named, fmt.Sprintf("%s turn %d: %q", p.im.ScenarioID, ti-1, p.im.Turns[ti-1].Text))
			}
		}
		if p.im.Cue == "" {
			nocue = append(nocue, p.im.ScenarioID)
		}
	}
	np := rep.Pairs
	buckets, speakers, byAsker, byOther, context := st.TPositions, st.SpeakerSets, st.N4ByAsker, st.N4ByOther, st.ContextPairs
	// T position buckets, within 5% of the pairs of each other.
	lo, hi := np, 0
	for _, b := range protocol.TPositions {
		lo, hi = min(lo, buckets[b]), max(hi, buckets[b])
	}
	if grid == nil || grid.Goals == nil || grid.Goals.TPositions == nil {
		add("T position balance", fmt.Sprintf("%d / %d / %d", buckets[protocol.TPositions[0]], buckets[protocol.TPositions[1]], buckets[protocol.TPositions[2]]), "within 5% of pairs", pct(hi-lo, np) <= 5, "")
	}
	add("three vs four speakers", fmt.Sprintf("%d / %d", speakers[3], speakers[4]), "within 10% of pairs", pct(absInt(speakers[3]-speakers[4]), np) <= 10, "")
	add("pairs with an N4 event", fmt.Sprintf("%.1f%% (%d)", pct(n4, np), n4), ">= 75%", pct(n4, np) >= 75, "")
	add("N4 resolved by asker / other", fmt.Sprintf("%d / %d", byAsker, byOther), "within 10% of N4 events", pct(absInt(byAsker-byOther), byAsker+byOther) <= 10, "")
	add("gold needs another's fact", fmt.Sprintf("%.1f%% (%d)", pct(context, np), context), ">= 50%", pct(context, np) >= 50, "")
	if grid != nil && grid.Goals != nil {
		lintGoals(grid.Goals, explicits, add)
	} else {
		add("N1, N2 human, N2 device, N3", fmt.Sprintf("%d scenarios lack one", len(missing)), "in every scenario", len(missing) == 0, first(missing, 10))
	}
	add("N2 human that names Aria", fmt.Sprintf("%d", len(n2aria)), "0 (rule 4: N1)", len(n2aria) == 0, first(n2aria, 10))
	add("Aria's name in implicit T", fmt.Sprintf("%d", len(named)), "0", len(named) == 0, first(named, 10))
	add("implicit cue recorded", fmt.Sprintf("%d without", len(nocue)), "every implicit version", len(nocue) == 0, first(nocue, 10))
	return rep
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
