package score

import (
	"fmt"
	"sort"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/stats"
)

// Roles a model plays in a run (section 6.3). Only models under test form the statistics
// family: comparisons, Bonferroni and Spearman run over them; baselines and references
// calibrate the measures and are reported beside them.
const (
	RoleTest      = protocol.RoleTest
	RoleBaseline  = protocol.RoleBaseline
	RoleReference = protocol.RoleReference
	// RoleCalibration is a model told the answers (the oracle).
	RoleCalibration = protocol.RoleCalibration
)

// ScoredMeasures are the keys of the built-in scored measures, in report order; code
// that must see every row of MeasureTable reads MeasureKeys(true).
var ScoredMeasures = MeasureKeys(true)

// AllMeasures are the keys of the built-in measures (MeasureKeys(false) at start).
var AllMeasures = MeasureKeys(false)

// Confidence of every interval (section 6: Wilson 95%).
const Confidence = 0.95

// DefaultSeed seeds the model-comparison bootstrap when none is given.
const DefaultSeed uint64 = 20260601

// Rate is k successes out of n with its Wilson 95% interval. Available is false when
// n = 0, or for yield when fewer than min_eligible events are eligible; Text then reads
// "n/a (n=k)" and Rate, Lo, Hi are 0.
type Rate struct {
	K         int     `json:"k"`
	N         int     `json:"n"`
	Rate      float64 `json:"rate"`
	Lo        float64 `json:"lo"`
	Hi        float64 `json:"hi"`
	Available bool    `json:"available"`
	Text      string  `json:"text"`
}

func newRate(k, n, minN int) Rate {
	r := Rate{K: k, N: n}
	if n == 0 || n < minN {
		r.Text = fmt.Sprintf("n/a (n=%d)", n)
		return r
	}
	r.Available = true
	r.Rate = float64(k) / float64(n)
	r.Lo, r.Hi = stats.Wilson(k, n, Confidence)
	r.Text = fmt.Sprintf("%.3f (%d/%d)", r.Rate, k, n)
	return r
}

// Measures holds the scored measures of MeasureTable for one slice of the events; a
// measure without a field here is in Other, under its key (Measures.Rate reads both).
type Measures struct {
	FreshOnset Rate            `json:"fresh_onset"`
	Accuracy   Rate            `json:"accuracy"`
	Silence    Rate            `json:"silence"`
	Yield      Rate            `json:"yield"`
	Other      map[string]Rate `json:"other_measures,omitempty"`
}

// Entry is everything reported for one (model, condition).
type Entry struct {
	Model     string `json:"model"`
	Role      string `json:"role"` // test, baseline or reference
	Condition string `json:"condition"`
	// Items counts the conversations in the denominators: with repeats, every repeat's
	// play of a conversation is one (section 6.5: the rates pool all repeats).
	Items int `json:"items"`
	// Failed conversations (the model failed) and Unscored ones (a scoring service
	// failed) are in no denominator; they are counted here so that the table shows them.
	Failed   int `json:"failed"`
	Unscored int `json:"unscored"`

	// Scored measures (section 5) and diagnostics: one rate per row of MeasureTable,
	// those without a field here in Other, under their key (Entry.Rate reads both).
	FreshOnset     Rate            `json:"fresh_onset"`
	Accuracy       Rate            `json:"accuracy"`
	Silence        Rate            `json:"silence"`
	Yield          Rate            `json:"yield"`
	Presence       Rate            `json:"presence"`
	WindowResponse Rate            `json:"window_response"`
	Other          map[string]Rate `json:"other_measures,omitempty"`

	// TOutcomes partitions the T turns: fresh-onset, already-speaking, silent.
	TOutcomes map[string]int `json:"t_outcomes"`
	// AccuracyFailures counts why answers (T with presence) were not correct.
	AccuracyFailures map[string]int `json:"accuracy_failures"`
	// SilenceByLabel: preservation per N1, N2, N3. SilenceByAddressee: N2 windows by
	// addressee (human, device; "unspecified" when the timeline lacks it).
	SilenceByLabel     map[string]Rate `json:"silence_by_label"`
	SilenceByAddressee map[string]Rate `json:"silence_by_addressee"`
	// SilenceFailures counts failed windows by reason (intrusion, empty-transcript, ...).
	SilenceFailures map[string]int `json:"silence_failures"`
	// SilenceSweep: preservation re-scored by duration alone, one rate per threshold in
	// SweepThresholdsMS (no judge).
	SilenceSweep []ThresholdRate `json:"silence_sweep"`
	// N4Outcomes is the partition of all N4 events (N4Outcomes: spoke during the
	// question, no onset in the gap, not speaking at resolution, yielded, still voicing,
	// resumed); the last three are the eligible events, the yield denominator.
	N4Outcomes map[string]int `json:"n4_outcomes"`

	// ByTPosition: the scored measures per T position bucket of the scenario.
	// ByThird: per elapsed-time third of the conversation the event's turn starts in
	// (see ElapsedThird); index 0 is the first third.
	ByTPosition map[string]Measures `json:"by_t_position"`
	ByThird     [3]Measures         `json:"by_third"`

	// Repeatability is the run-to-run agreement and spread over the repeats (section
	// 6.5); nil when the run has one repeat.
	Repeatability *Repeatability `json:"repeatability,omitempty"`
}

// ThresholdRate is silence preservation when speech totalling more than ThresholdMS fails.
type ThresholdRate struct {
	ThresholdMS float64 `json:"threshold_ms"`
	Rate        Rate    `json:"rate"`
}

// McNemar is an exact McNemar test of a paired binary outcome.
type McNemar struct {
	B int `json:"b"` // success only in the first (explicit, or model A)
	C int `json:"c"` // success only in the second (implicit, or model B)
	// RateFirst and RateSecond are over the paired units; Difference = RateFirst -
	// RateSecond = (B - C) / Units.
	Units      int     `json:"units"`
	RateFirst  float64 `json:"rate_first"`
	RateSecond float64 `json:"rate_second"`
	Difference float64 `json:"difference"`
	P          float64 `json:"p"`
}

// Paired is the explicit vs implicit comparison of one model over the pairs it has both
// versions of (section 6.1). Lost counts the model's other pairs, those it has an item of
// but not both versions counted (one or both failed, are unscored or were not run): they
// are not in the test. A model whose every pair is lost still has its row (0 pairs).
// With repeats, Pairs and Lost count (pair, repeat) units: each repeat's explicit
// version is paired with the same repeat's implicit version (section 6.5).
type Paired struct {
	Model      string  `json:"model"`
	Pairs      int     `json:"pairs"`
	Lost       int     `json:"lost_pairs"`
	Presence   McNemar `json:"presence"`
	FreshOnset McNemar `json:"fresh_onset"`
	// Other holds the tests of paired measures (Measure.PairedRank) without a field here.
	Other map[string]McNemar `json:"other_measures,omitempty"`
}

// Correlation is Spearman's rho between two rates across model x condition entries.
type Correlation struct {
	Rho       float64 `json:"rho"`
	N         int     `json:"n"`
	Available bool    `json:"available"`
}

// Comparison is one paired comparison of two models on one measure in one condition:
// McNemar over the units (events) both models have in the denominator, a cluster
// bootstrap interval of the difference in rates over the shared scenario pairs, and the
// p-value Bonferroni-corrected over all comparisons in the summary.
type Comparison struct {
	Condition  string           `json:"condition"`
	Measure    string           `json:"measure"`
	A          string           `json:"a"`
	B          string           `json:"b"`
	Pairs      int              `json:"pairs"` // scenario pairs both models were scored on
	RateA      Rate             `json:"rate_a"`
	RateB      Rate             `json:"rate_b"`
	Difference stats.Difference `json:"difference"` // rate A - rate B
	Test       McNemar          `json:"test"`
	PAdjusted  float64          `json:"p_adjusted"`
}

// Family is the statistics family of section 6.3: the models under test, which the model
// comparisons pair (Comparisons of them, Bonferroni's m) and whose entries Spearman ranks
// (SpearmanEntries); Others are the baselines and references, with their role.
type Family struct {
	Models          []string          `json:"models"`
	Others          map[string]string `json:"others,omitempty"`
	Comparisons     int               `json:"comparisons"`
	SpearmanEntries int               `json:"spearman_entries"`
}

// Summary is the whole statistical result of a run.
type Summary struct {
	Protocol protocol.Params `json:"protocol"`
	// Acoustics is the room the conversations were built in (dataset.Room); empty for
	// clean (dry) audio.
	Acoustics string `json:"acoustics,omitempty"`
	Seed      uint64 `json:"seed"`
	// Repeats is how many times each (model, conversation) was played (section 6.5):
	// the highest repeat of any item, plus one; absent for a run played once.
	Repeats     int          `json:"repeats,omitempty"`
	Family      Family       `json:"family"`
	Entries     []Entry      `json:"entries"`
	Paired      []Paired     `json:"paired"`
	Spearman    Correlation  `json:"spearman_presence_fresh_onset"`
	Comparisons []Comparison `json:"comparisons"`
	// Warnings are problems in the input that were worked around (duplicates dropped).
	Warnings []string `json:"warnings,omitempty"`
}

// Options tune Summarize.
type Options struct {
	Seed uint64 // bootstrap seed; 0 means DefaultSeed
	// Roles gives each model's role (RoleTest, RoleBaseline, RoleReference); a model not
	// in it is under test.
	Roles map[string]string
}

// role is the model's role under opt.
func (o Options) role(model string) string {
	if r := o.Roles[model]; r != "" {
		return r
	}
	return RoleTest
}

// Summarize aggregates scored items per (model, condition) with DefaultSeed.
func Summarize(items []Scored, p protocol.Params) Summary {
	return SummarizeWith(items, p, Options{})
}

// unit is one event's contribution to one measure: whether it is in the denominator
// (counted) and whether it is a success. Every rate, breakdown and comparison is built
// from units, so all of them share one definition of each denominator (section 5).
type unit struct {
	repeat  int
	turn    int
	third   int
	counted bool
	success bool
	failure string // why not a success, when counted and not a success
}

// itemUnits extracts one measure from an item's events, marked with its repeat.
func itemUnits(it Scored, measure string) []unit {
	us := units(it.Events, measure)
	for i := range us {
		us[i].repeat = it.Repeat
	}
	return us
}

// units extracts one measure from an item's events: its row of MeasureTable decides
// each event's membership.
func units(events []Event, measure string) []unit {
	m, ok := MeasureByKey(measure)
	if !ok {
		return nil
	}
	var out []unit
	for _, ev := range events {
		mb, ok := m.Of(ev)
		if !ok {
			continue
		}
		out = append(out, unit{turn: ev.Turn, third: ev.Third, counted: mb.Counted, success: mb.Success, failure: mb.Reason})
	}
	return out
}

func tally(us []unit, keep func(unit) bool) (k, n int) {
	for _, u := range us {
		if u.counted && (keep == nil || keep(u)) {
			n++
			if u.success {
				k++
			}
		}
	}
	return k, n
}

// minN is the smallest denominator for which the measure has a rate (section 5: yield is
// n/a below min_eligible eligible events; the other measures need one unit).
func minN(measure string, p protocol.Params) int {
	m, _ := MeasureByKey(measure)
	return m.minN(p)
}

// measureRate is the rate of one measure over units (those keep keeps, all when nil).
func measureRate(measure string, us []unit, keep func(unit) bool, p protocol.Params) Rate {
	k, n := tally(us, keep)
	return newRate(k, n, minN(measure, p))
}

// SummarizeWith aggregates scored items per (model, condition): see Entry, Paired,
// Comparison. Items repeated for the same (model, condition, pair) are dropped after the
// first, with a warning, so nothing is counted twice.
func SummarizeWith(items []Scored, p protocol.Params, opt Options) Summary {
	seed := opt.Seed
	if seed == 0 {
		seed = DefaultSeed
	}
	s := Summary{Protocol: p, Seed: seed}
	groups := map[groupKey][]Scored{}
	left := map[groupKey][2]int{}             // failed, unscored
	planned := map[groupKey]map[string]bool{} // the scenarios of every item, counted or not
	type itemID struct {
		model, cond, pair string
		repeat            int
	}
	seen := map[itemID]bool{}
	repeats := 1
	for _, it := range items {
		if it.Repeat < 0 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("model %q, scenario %q has repeat %d; it is not counted", it.Model, it.ScenarioID, it.Repeat))
			continue
		}
		if it.PairID == "" {
			// Without a pair id the scenario is its own pair: its own bootstrap cluster,
			// never paired with another version.
			it.PairID = "scenario:" + it.ScenarioID
		}
		id := itemID{it.Model, it.Condition, it.PairID, it.Repeat}
		if seen[id] {
			in := ""
			if it.Repeat > 0 {
				in = fmt.Sprintf(" in repeat %d", it.Repeat)
			}
			s.Warnings = append(s.Warnings, fmt.Sprintf("model %q, condition %q, pair %q appears more than once%s; only the first is counted", it.Model, it.Condition, it.PairID, in))
			continue
		}
		seen[id] = true
		repeats = max(repeats, it.Repeat+1)
		k := groupKey{it.Model, it.Condition}
		if _, ok := groups[k]; !ok {
			groups[k] = nil
		}
		if planned[k] == nil {
			planned[k] = map[string]bool{}
		}
		planned[k][it.ScenarioID] = true
		switch {
		case it.Failed != "":
			l := left[k]
			l[0]++
			left[k] = l
		case it.Unscored != "":
			l := left[k]
			l[1]++
			left[k] = l
		default:
			groups[k] = append(groups[k], it)
		}
	}
	keys := make([]groupKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].model != keys[j].model {
			return keys[i].model < keys[j].model
		}
		return conditionOrder(keys[i].cond) < conditionOrder(keys[j].cond) ||
			(conditionOrder(keys[i].cond) == conditionOrder(keys[j].cond) && keys[i].cond < keys[j].cond)
	})
	if repeats > 1 {
		s.Repeats = repeats
	}
	inFamily := map[string]bool{}
	for _, k := range keys {
		e := summarizeEntry(k.model, k.cond, groups[k], p)
		e.Role = opt.role(k.model)
		e.Failed, e.Unscored = left[k][0], left[k][1]
		if repeats > 1 {
			e.Repeatability = repeatability(groups[k], len(planned[k]), repeats, p)
		}
		s.Entries = append(s.Entries, e)
		if e.Role == RoleTest {
			if !inFamily[k.model] {
				s.Family.Models = append(s.Family.Models, k.model)
			}
			inFamily[k.model] = true
		} else {
			if s.Family.Others == nil {
				s.Family.Others = map[string]string{}
			}
			s.Family.Others[k.model] = e.Role
		}
	}
	s.Paired = pairedTests(items, groups, keys)
	var pres, fresh []float64
	for _, e := range s.Entries {
		if inFamily[e.Model] && e.Presence.Available {
			pres = append(pres, e.Presence.Rate)
			fresh = append(fresh, e.FreshOnset.Rate)
		}
	}
	rho, ok := stats.Spearman(pres, fresh)
	s.Spearman = Correlation{Rho: rho, N: len(pres), Available: ok}
	s.Family.SpearmanEntries = len(pres)
	s.Comparisons = compareModels(groups, keys, inFamily, p, seed)
	s.Family.Comparisons = len(s.Comparisons)
	return s
}

type groupKey struct{ model, cond string }

func conditionOrder(c string) int {
	switch c {
	case protocol.Explicit:
		return 0
	case protocol.Implicit:
		return 1
	}
	return 2
}

func summarizeEntry(model, cond string, items []Scored, p protocol.Params) Entry {
	e := Entry{
		Model: model, Condition: cond, Items: len(items),
		TOutcomes:          map[string]int{OutcomeFreshOnset: 0, OutcomeAlreadySpeaking: 0, OutcomeSilent: 0},
		AccuracyFailures:   map[string]int{},
		SilenceByLabel:     map[string]Rate{},
		SilenceByAddressee: map[string]Rate{},
		SilenceFailures:    map[string]int{},
		N4Outcomes:         map[string]int{},
		ByTPosition:        map[string]Measures{},
	}
	for _, o := range N4Outcomes {
		e.N4Outcomes[o] = 0
	}
	all := map[string][]unit{}
	byPos := map[string]map[string][]unit{}
	var events []Event
	for _, it := range items {
		events = append(events, it.Events...)
		if byPos[it.TPosition] == nil {
			byPos[it.TPosition] = map[string][]unit{}
		}
		for _, m := range MeasureKeys(false) {
			us := units(it.Events, m)
			all[m] = append(all[m], us...)
			byPos[it.TPosition][m] = append(byPos[it.TPosition][m], us...)
		}
	}
	for _, m := range MeasureTable {
		e.setRate(m, measureRate(m.Key, all[m.Key], nil, p))
	}

	for _, u := range all[MeasureAccuracy] {
		if u.counted && !u.success {
			e.AccuracyFailures[u.failure]++
		}
	}
	for _, u := range all[MeasureSilence] {
		if !u.success {
			e.SilenceFailures[u.failure]++
		}
	}
	labelK, labelN := map[string]int{}, map[string]int{}
	addrK, addrN := map[string]int{}, map[string]int{}
	sweepK := make([]int, len(SweepThresholdsMS))
	sweepN := 0
	for _, ev := range events {
		switch {
		case ev.T != nil:
			e.TOutcomes[ev.T.Outcome]++
		case ev.N4 != nil:
			e.N4Outcomes[ev.N4.Outcome]++
		case ev.Silence != nil:
			pass := ev.Silence.Pass()
			labelN[ev.Label]++
			if pass {
				labelK[ev.Label]++
			}
			if ev.Label == protocol.LabelN2 {
				a := ev.Addressee
				if a == "" {
					a = "unspecified"
				}
				addrN[a]++
				if pass {
					addrK[a]++
				}
			}
			sweepN++
			for i, thr := range SweepThresholdsMS {
				if SweepPass(ev.Silence.SpeechMS, thr) {
					sweepK[i]++
				}
			}
		}
	}
	for _, l := range []string{protocol.LabelN1, protocol.LabelN2, protocol.LabelN3} {
		e.SilenceByLabel[l] = newRate(labelK[l], labelN[l], 0)
	}
	for _, a := range []string{protocol.AddresseeHuman, protocol.AddresseeDevice} {
		e.SilenceByAddressee[a] = newRate(addrK[a], addrN[a], 0)
	}
	if addrN["unspecified"] > 0 {
		e.SilenceByAddressee["unspecified"] = newRate(addrK["unspecified"], addrN["unspecified"], 0)
	}
	for i, thr := range SweepThresholdsMS {
		e.SilenceSweep = append(e.SilenceSweep, ThresholdRate{ThresholdMS: thr, Rate: newRate(sweepK[i], sweepN, 0)})
	}

	measures := func(src map[string][]unit, keep func(unit) bool) Measures {
		var ms Measures
		for _, m := range ScoredMeasureTable() {
			ms.setRate(m, measureRate(m.Key, src[m.Key], keep, p))
		}
		return ms
	}
	for pos, src := range byPos {
		if pos == "" {
			pos = "unspecified"
		}
		e.ByTPosition[pos] = measures(src, nil)
	}
	for third := range 3 {
		e.ByThird[third] = measures(all, func(u unit) bool { return u.third == third })
	}
	return e
}

// firstT returns the item's first T verdict (a valid scenario has exactly one).
func firstT(s Scored) *TVerdict {
	for _, ev := range s.Events {
		if ev.T != nil {
			return ev.T
		}
	}
	return nil
}

func newMcNemar(b, c, units, firstK, secondK int) McNemar {
	m := McNemar{B: b, C: c, Units: units, P: stats.McNemarExact(b, c)}
	if units > 0 {
		m.RateFirst = float64(firstK) / float64(units)
		m.RateSecond = float64(secondK) / float64(units)
		m.Difference = float64(b-c) / float64(units)
	}
	return m
}

// pairedTests: section 6.1, exact McNemar explicit vs implicit per model, over the pairs
// the model has both counted versions of; the model's other pairs (in items) are lost.
// With repeats, a pair of each repeat is its own unit: the explicit version of repeat r
// is paired with the implicit version of the same repeat r, never of another.
func pairedTests(items []Scored, groups map[groupKey][]Scored, keys []groupKey) []Paired {
	type pairOf struct {
		pair   string
		repeat int
	}
	// attempted[model][pair] holds the conditions the model has an item of, counted or not.
	attempted := map[string]map[pairOf]map[string]bool{}
	for _, it := range items {
		if it.PairID == "" || it.Repeat < 0 {
			continue
		}
		if attempted[it.Model] == nil {
			attempted[it.Model] = map[pairOf]map[string]bool{}
		}
		k := pairOf{it.PairID, it.Repeat}
		if attempted[it.Model][k] == nil {
			attempted[it.Model][k] = map[string]bool{}
		}
		attempted[it.Model][k][it.Condition] = true
	}
	byModel := map[string]map[string]map[pairOf]Scored{} // model -> cond -> (pair, repeat) -> item with a T
	var models []string
	for _, k := range keys {
		if byModel[k.model] == nil {
			byModel[k.model] = map[string]map[pairOf]Scored{}
			models = append(models, k.model)
		}
		for _, it := range groups[k] {
			if byModel[it.Model][it.Condition] == nil {
				byModel[it.Model][it.Condition] = map[pairOf]Scored{}
			}
			if firstT(it) != nil {
				byModel[it.Model][it.Condition][pairOf{it.PairID, it.Repeat}] = it
			}
		}
	}
	paired := PairedMeasureTable()
	var out []Paired
	for _, m := range models {
		ex, im := byModel[m][protocol.Explicit], byModel[m][protocol.Implicit]
		var pairs []pairOf
		for id := range ex {
			if _, ok := im[id]; ok {
				pairs = append(pairs, id)
			}
		}
		// Every pair the model has an item of and is not in the test is lost: a version
		// that failed, is unscored or is missing (a failed conversation the scoring loop
		// did not pass on looks missing) takes the whole pair out of the test.
		if len(attempted[m]) == 0 {
			continue
		}
		pr := Paired{Model: m, Pairs: len(pairs), Lost: len(attempted[m]) - len(pairs)}
		for _, pm := range paired {
			var b, c, k1, k2 int
			for _, id := range pairs {
				b, c, k1, k2 = count(pairedSuccess(ex[id], pm.Key), pairedSuccess(im[id], pm.Key), b, c, k1, k2)
			}
			pr.setTest(pm, newMcNemar(b, c, len(pairs), k1, k2))
		}
		out = append(out, pr)
	}
	return out
}

// pairedSuccess is a paired measure's outcome on a conversation: its one counted event a
// success (a paired measure has one event per conversation, the T turn).
func pairedSuccess(it Scored, measure string) bool {
	for _, u := range units(it.Events, measure) {
		if u.counted {
			return u.success
		}
	}
	return false
}

// count adds one paired outcome to the discordant counts b, c and the success counts.
func count(first, second bool, b, c, k1, k2 int) (int, int, int, int) {
	if first {
		k1++
	}
	if second {
		k2++
	}
	if first && !second {
		b++
	}
	if second && !first {
		c++
	}
	return b, c, k1, k2
}
