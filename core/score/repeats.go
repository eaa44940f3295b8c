package score

import (
	"fmt"
	"math"
	"sort"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// Repeatability is how a model's repeated plays of the same conversations agree, for one
// condition (section 6.5): per measure, the share of decisions all repeats made alike and
// the spread of the rate over the repeats.
type Repeatability struct {
	// Repeats is how many times every conversation was to be played.
	Repeats int `json:"repeats"`
	// Compared counts the conversations scored in every repeat: only their events are
	// compared. Incomplete counts those that failed, are unscored or were not played in
	// at least one repeat: their events are in no agreement (their scored repeats are
	// still in the per-repeat rates).
	Compared   int `json:"compared"`
	Incomplete int `json:"incomplete"`
	// Measures in AllMeasures order.
	Measures []RepeatMeasure `json:"measures"`
}

// RepeatMeasure is the agreement and spread of one measure.
type RepeatMeasure struct {
	Measure string `json:"measure"`
	// Decisions counts the events of the compared conversations that are in the
	// measure's denominator in at least one repeat; Agreed those on which every repeat
	// decided alike. A repeat decides an event one of three ways: a success, a failure,
	// or out of the denominator (accuracy without presence, an ineligible N4 event), so
	// an answer judged correct in one repeat and absent in another is a disagreement.
	// Agreement = Agreed / Decisions; Available is false when Decisions is 0.
	Decisions int     `json:"decisions"`
	Agreed    int     `json:"agreed"`
	Agreement float64 `json:"agreement"`
	Available bool    `json:"available"`
	// PerRepeat is the rate of each repeat (index = repeat) over that repeat's scored
	// conversations, with the same denominator rules as the main table; the main
	// table's rate pools them.
	PerRepeat []Rate `json:"per_repeat"`
	// Min, Max and SD (the sample standard deviation, n - 1) are over the repeats whose
	// rate is available (RatesAvailable of them); Spread is false with fewer than two.
	RatesAvailable int     `json:"rates_available"`
	Min            float64 `json:"min"`
	Max            float64 `json:"max"`
	SD             float64 `json:"sd"`
	Spread         bool    `json:"spread"`
}

// AgreementText is "0.917 (11/12)", or "n/a (no decisions)".
func (m RepeatMeasure) AgreementText() string {
	if !m.Available {
		return "n/a (no decisions)"
	}
	return fmt.Sprintf("%.3f (%d/%d)", m.Agreement, m.Agreed, m.Decisions)
}

// decision is what one repeat decided on one event for one measure.
type decision int

const (
	decisionOut     decision = iota // not in the measure's denominator
	decisionSuccess                 // counted, a success
	decisionFailure                 // counted, not a success
)

func decisionOf(u unit) decision {
	switch {
	case !u.counted:
		return decisionOut
	case u.success:
		return decisionSuccess
	}
	return decisionFailure
}

// repeatability computes the agreement and spread of one (model, condition) group: items
// are its counted items of every repeat, conversations how many distinct scenarios the
// group was planned with (counted or not), repeats the run's repeat count.
func repeatability(items []Scored, conversations, repeats int, p protocol.Params) *Repeatability {
	r := &Repeatability{Repeats: repeats}
	byScenario := map[string][]*Scored{} // scenario -> repeat -> item
	for i := range items {
		it := &items[i]
		if it.Repeat >= repeats {
			continue
		}
		if byScenario[it.ScenarioID] == nil {
			byScenario[it.ScenarioID] = make([]*Scored, repeats)
		}
		byScenario[it.ScenarioID][it.Repeat] = it
	}
	var compared []string
	for id, reps := range byScenario {
		complete := true
		for _, it := range reps {
			complete = complete && it != nil
		}
		if complete {
			compared = append(compared, id)
		}
	}
	sort.Strings(compared)
	r.Compared = len(compared)
	r.Incomplete = conversations - len(compared)

	for _, m := range MeasureKeys(false) {
		rm := RepeatMeasure{Measure: m}
		for _, id := range compared {
			// The events every repeat has, by turn; each repeat's decision on them.
			perTurn := map[int][]decision{}
			for rep, it := range byScenario[id] {
				for _, u := range units(it.Events, m) {
					if rep == 0 || len(perTurn[u.turn]) == rep {
						perTurn[u.turn] = append(perTurn[u.turn], decisionOf(u))
					}
				}
			}
			for _, ds := range perTurn {
				if len(ds) != repeats {
					continue // an event not every repeat has is not compared
				}
				counted, alike := false, true
				for _, d := range ds {
					counted = counted || d != decisionOut
					alike = alike && d == ds[0]
				}
				if !counted {
					continue
				}
				rm.Decisions++
				if alike {
					rm.Agreed++
				}
			}
		}
		if rm.Decisions > 0 {
			rm.Available = true
			rm.Agreement = float64(rm.Agreed) / float64(rm.Decisions)
		}
		var rates []float64
		for rep := range repeats {
			var us []unit
			for _, it := range items {
				if it.Repeat == rep {
					us = append(us, units(it.Events, m)...)
				}
			}
			rate := measureRate(m, us, nil, p)
			rm.PerRepeat = append(rm.PerRepeat, rate)
			if rate.Available {
				rates = append(rates, rate.Rate)
			}
		}
		rm.RatesAvailable = len(rates)
		if len(rates) >= 2 {
			rm.Spread = true
			rm.Min, rm.Max = rates[0], rates[0]
			mean := 0.0
			for _, x := range rates {
				rm.Min, rm.Max = math.Min(rm.Min, x), math.Max(rm.Max, x)
				mean += x
			}
			mean /= float64(len(rates))
			ss := 0.0
			for _, x := range rates {
				ss += (x - mean) * (x - mean)
			}
			rm.SD = math.Sqrt(ss / float64(len(rates)-1))
		}
		r.Measures = append(r.Measures, rm)
	}
	return r
}
