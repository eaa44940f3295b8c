package reference

import (
	"sort"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Entry is the scores of one condition (explicit or implicit).
type Entry struct {
	Condition string `json:"condition"`
	Scenarios int    `json:"scenarios"`
	// Response: T turns decided RESPOND, over every T turn.
	Response score.Rate `json:"response"`
	// Accuracy: answers the judge calls correct, over T turns decided RESPOND.
	Accuracy score.Rate `json:"accuracy"`
	// Silence: N1, N2 and N3 turns decided SILENT, over every such turn; by label and
	// by N2 addressee (human, device).
	Silence            score.Rate            `json:"silence"`
	SilenceByLabel     map[string]score.Rate `json:"silence_by_label"`
	SilenceByAddressee map[string]score.Rate `json:"silence_by_addressee"`
	// Decisions is every decision made in this condition; Unparseable those without a
	// parsed reply, UnparseableVerdicts the T answers whose verdict did not parse.
	Decisions           int `json:"decisions"`
	Unparseable         int `json:"unparseable"`
	UnparseableVerdicts int `json:"unparseable_verdicts"`
}

// Paired is the explicit vs implicit comparison of T responses over the pairs decided
// in both versions.
type Paired struct {
	Pairs    int           `json:"pairs"`
	Response score.McNemar `json:"response"`
}

// Summary is the scores of one run.
type Summary struct {
	Entries []Entry `json:"entries"`
	Paired  Paired  `json:"paired"`
}

// Summarize scores decisions (see the package comment for the rules).
func Summarize(ds []Decision) Summary {
	type counts struct {
		scenarios                      map[string]bool
		tK, tN, accK, accN, silK, silN int
		byLabel, byAddr                map[string][2]int
		decisions, unparseable, uv     int
	}
	by := map[string]*counts{}
	get := func(cond string) *counts {
		c := by[cond]
		if c == nil {
			c = &counts{scenarios: map[string]bool{}, byLabel: map[string][2]int{}, byAddr: map[string][2]int{}}
			by[cond] = c
		}
		return c
	}
	add := func(m map[string][2]int, key string, ok bool) {
		v := m[key]
		if ok {
			v[0]++
		}
		v[1]++
		m[key] = v
	}
	// tResponse[pair][condition] for the paired test.
	tResponse := map[string]map[string]bool{}
	for _, d := range ds {
		c := get(d.Condition)
		c.scenarios[d.ScenarioID] = true
		c.decisions++
		if d.Decision == Unparseable {
			c.unparseable++
		}
		switch {
		case d.Label == protocol.LabelT:
			c.tN++
			if d.Responded() {
				c.tK++
				c.accN++
				if d.Verdict != nil && d.Verdict.Parsed && d.Verdict.Label == sdk.LabelCorrect {
					c.accK++
				}
				if d.Verdict != nil && !d.Verdict.Parsed {
					c.uv++
				}
			}
			if tResponse[d.PairID] == nil {
				tResponse[d.PairID] = map[string]bool{}
			}
			tResponse[d.PairID][d.Condition] = d.Responded()
		case protocol.IsSilenceLabel(d.Label):
			ok := d.Decision == Silent
			c.silN++
			if ok {
				c.silK++
			}
			add(c.byLabel, d.Label, ok)
			if d.Label == protocol.LabelN2 && d.Addressee != "" {
				add(c.byAddr, d.Addressee, ok)
			}
		}
	}

	var s Summary
	conds := make([]string, 0, len(by))
	for cond := range by {
		conds = append(conds, cond)
	}
	sort.Slice(conds, func(i, j int) bool { return condOrder(conds[i]) < condOrder(conds[j]) })
	for _, cond := range conds {
		c := by[cond]
		e := Entry{Condition: cond, Scenarios: len(c.scenarios),
			Response: score.NewRate(c.tK, c.tN), Accuracy: score.NewRate(c.accK, c.accN), Silence: score.NewRate(c.silK, c.silN),
			SilenceByLabel: map[string]score.Rate{}, SilenceByAddressee: map[string]score.Rate{},
			Decisions: c.decisions, Unparseable: c.unparseable, UnparseableVerdicts: c.uv}
		for k, v := range c.byLabel {
			e.SilenceByLabel[k] = score.NewRate(v[0], v[1])
		}
		for k, v := range c.byAddr {
			e.SilenceByAddressee[k] = score.NewRate(v[0], v[1])
		}
		s.Entries = append(s.Entries, e)
	}

	var b, cc, first, second int
	for _, r := range tResponse {
		ex, okE := r["explicit"]
		im, okI := r["implicit"]
		if !okE || !okI {
			continue
		}
		s.Paired.Pairs++
		if ex {
			first++
		}
		if im {
			second++
		}
		switch {
		case ex && !im:
			b++
		case im && !ex:
			cc++
		}
	}
	s.Paired.Response = score.NewMcNemar(b, cc, s.Paired.Pairs, first, second)
	return s
}

// condOrder puts explicit before implicit, then anything else by name.
func condOrder(c string) string {
	switch c {
	case "explicit":
		return "0"
	case "implicit":
		return "1"
	}
	return "2" + c
}

// Agreement compares the decisions of two runs on the same turns.
type Agreement struct {
	// Turns is the number of (scenario, turn) decided in both runs; Agree those with the
	// same decision (RESPOND, SILENT or unparseable).
	Turns int     `json:"turns"`
	Agree int     `json:"agree"`
	Rate  float64 `json:"rate"`
	// OnlyOne counts turns decided in one run only (an interrupted run); they are left
	// out of Turns.
	OnlyOne int `json:"only_one"`
}

// Agree computes the percent agreement of decisions between two runs.
func Agree(a, b []Decision) Agreement {
	type key struct {
		id   string
		turn int
	}
	other := make(map[key]string, len(b))
	for _, d := range b {
		other[key{d.ScenarioID, d.Turn}] = d.Decision
	}
	var g Agreement
	seen := map[key]bool{}
	for _, d := range a {
		k := key{d.ScenarioID, d.Turn}
		seen[k] = true
		o, ok := other[k]
		if !ok {
			g.OnlyOne++
			continue
		}
		g.Turns++
		if o == d.Decision {
			g.Agree++
		}
	}
	for k := range other {
		if !seen[k] {
			g.OnlyOne++
		}
	}
	if g.Turns > 0 {
		g.Rate = float64(g.Agree) / float64(g.Turns)
	}
	return g
}
