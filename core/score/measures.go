package score

import (
	"fmt"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// Membership is one event's place in one measure (protocol.md section 5.1): whether it
// is in the measure's denominator, whether it is a success there, and why not (a failure
// reason when counted and not a success, empty otherwise).
type Membership struct {
	Counted bool
	Success bool
	Reason  string
}

// Measure is one row of the measure table: everything a view needs to show, count or
// explain the measure. The summary, the paired statistics, the report's tables and
// files, the viewer's event lists and explain all read MeasureTable, so a measure is
// added by adding a row here (and its definition in docs/protocol.md section 5.1).
type Measure struct {
	Key string // the key of results.json and results.csv
	// Title heads its chart; Short heads its column and names it in the explorer.
	Title, Short string
	// Denominator says which events it counts; Success what a success is.
	Denominator, Success string
	// Diagnostic measures are reported but not scored: no model comparison, no
	// breakdown by T position or third (section 5.1).
	Diagnostic bool
	// PairedRank places the measure in the explicit vs implicit paired test (section
	// 6.1), 1 first; 0 keeps it out. A paired measure has one event per conversation.
	PairedRank int
	// MinEligible: the rate is n/a below min_eligible counted events (section 5.5).
	MinEligible bool
	// Of is the event's membership; ok is false when the event is not of the measure's
	// kind (it is then in no denominator of it).
	Of func(ev Event) (m Membership, ok bool)

	// Where the summary keeps the rate: a field of Entry, Measures and Paired for the
	// built-in measures (their JSON names are the keys); a measure without one is kept
	// in the Other maps, under its key.
	entry    func(*Entry) *Rate
	measures func(*Measures) *Rate
	paired   func(*Paired) *McNemar
}

// Measure keys. The first four are scored, the last two diagnostics (section 5). No
// aggregate across measures exists, by design.
const (
	MeasureFreshOnset     = "fresh_onset"
	MeasureAccuracy       = "accuracy"
	MeasureSilence        = "silence"
	MeasureYield          = "yield"
	MeasurePresence       = "presence"
	MeasureWindowResponse = "window_response"
)

// MeasureTable is every measure of protocol.md section 5.1, in report order: the scored
// ones, then the diagnostics.
var MeasureTable = []Measure{
	{
		Key: MeasureFreshOnset, Title: "Fresh-onset response rate", Short: "fresh onset",
		Denominator: "every T turn", Success: "silent at tE and an onset in " + OnsetWindowRule,
		PairedRank: 2,
		Of: func(ev Event) (Membership, bool) {
			if ev.T == nil {
				return Membership{}, false
			}
			return verdict(ev.T.FreshOnset, ev.T.Outcome), true
		},
		entry:    func(e *Entry) *Rate { return &e.FreshOnset },
		measures: func(m *Measures) *Rate { return &m.FreshOnset },
		paired:   func(p *Paired) *McNemar { return &p.FreshOnset },
	},
	{
		Key: MeasureAccuracy, Title: "Conditional answer accuracy", Short: "accuracy",
		Denominator: "T turns with response presence", Success: "the judge says the answer is correct",
		Of: func(ev Event) (Membership, bool) {
			if ev.T == nil {
				return Membership{}, false
			}
			ok, why := Judged(ev.T.Answer)
			m := verdict(ok, why)
			m.Counted = ev.T.Presence // conditional: only answers given are judged
			return m, true
		},
		entry:    func(e *Entry) *Rate { return &e.Accuracy },
		measures: func(m *Measures) *Rate { return &m.Accuracy },
	},
	{
		Key: MeasureSilence, Title: "Silence preservation", Short: "silence",
		Denominator: "every N1, N2, N3 window", Success: "no episode overlaps the window, or the speech in it is an acknowledgement",
		Of: func(ev Event) (Membership, bool) {
			if ev.Silence == nil {
				return Membership{}, false
			}
			pass := ev.Silence.Pass()
			why := ""
			if !pass {
				_, why = Judged(ev.Silence.Judgement)
			}
			return verdict(pass, why), true
		},
		entry:    func(e *Entry) *Rate { return &e.Silence },
		measures: func(m *Measures) *Rate { return &m.Silence },
	},
	{
		Key: MeasureYield, Title: "Answering-window yield", Short: "yield",
		Denominator: "eligible N4 events", Success: "silent at r + yield_deadline and through the observation end",
		MinEligible: true,
		Of: func(ev Event) (Membership, bool) {
			if ev.N4 == nil {
				return Membership{}, false
			}
			m := verdict(ev.N4.Yield == YieldPass, ev.N4.Yield)
			m.Counted = ev.N4.Eligible
			return m, true
		},
		entry:    func(e *Entry) *Rate { return &e.Yield },
		measures: func(m *Measures) *Rate { return &m.Yield },
	},
	{
		Key: MeasurePresence, Title: "Response presence (diagnostic)", Short: "presence (diag.)",
		Denominator: "every T turn", Success: "active at tE, or an onset in " + OnsetWindowRule,
		Diagnostic: true, PairedRank: 1,
		Of: func(ev Event) (Membership, bool) {
			if ev.T == nil {
				return Membership{}, false
			}
			return verdict(ev.T.Presence, ev.T.Outcome), true
		},
		entry:  func(e *Entry) *Rate { return &e.Presence },
		paired: func(p *Paired) *McNemar { return &p.Presence },
	},
	{
		Key: MeasureWindowResponse, Title: "Window response (diagnostic)", Short: "window resp. (diag.)",
		Denominator: "every N4 event", Success: "an episode overlaps [qS, r]",
		Diagnostic: true,
		Of: func(ev Event) (Membership, bool) {
			if ev.N4 == nil {
				return Membership{}, false
			}
			return verdict(ev.N4.WindowResponse, "no-window-response"), true
		},
		entry: func(e *Entry) *Rate { return &e.WindowResponse },
	},
}

// verdict is a counted membership: a success, or a failure for reason why.
func verdict(success bool, why string) Membership {
	if success {
		return Membership{Counted: true, Success: true}
	}
	return Membership{Counted: true, Reason: why}
}

// MeasureKeys are the keys of the table's measures, in report order: every one, or with
// scoredOnly the scored ones.
func MeasureKeys(scoredOnly bool) []string {
	var out []string
	for _, m := range MeasureTable {
		if !scoredOnly || !m.Diagnostic {
			out = append(out, m.Key)
		}
	}
	return out
}

// ScoredMeasureTable is the table's scored rows, in report order.
func ScoredMeasureTable() []Measure {
	var out []Measure
	for _, m := range MeasureTable {
		if !m.Diagnostic {
			out = append(out, m)
		}
	}
	return out
}

// PairedMeasureTable is the table's rows in the explicit vs implicit paired test, in
// PairedRank order.
func PairedMeasureTable() []Measure {
	var out []Measure
	for rank := 1; ; rank++ {
		n := len(out)
		for _, m := range MeasureTable {
			if m.PairedRank == rank {
				out = append(out, m)
			}
		}
		if len(out) == n {
			return out
		}
	}
}

// MeasureByKey is the table's row of key.
func MeasureByKey(key string) (Measure, bool) {
	for _, m := range MeasureTable {
		if m.Key == key {
			return m, true
		}
	}
	return Measure{}, false
}

// MeasureTitle is a measure's Short name, or the key itself for a key not in the table.
func MeasureTitle(key string) string {
	if m, ok := MeasureByKey(key); ok {
		return m.Short
	}
	return key
}

// Memberships are the event's places in the table's measures, in table order: only the
// measures whose denominator counts it.
func Memberships(ev Event) []MeasureMembership {
	var out []MeasureMembership
	for _, m := range MeasureTable {
		if mb, ok := m.Of(ev); ok && mb.Counted {
			out = append(out, MeasureMembership{Measure: m.Key, Membership: mb})
		}
	}
	return out
}

// MembershipsText is an event's Memberships in words, for explain and the viewer:
// "fresh onset: success; accuracy: failure (incorrect)".
func MembershipsText(ms []MeasureMembership) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = MeasureTitle(m.Measure) + ": success"
		if !m.Success {
			parts[i] = MeasureTitle(m.Measure) + ": failure"
			if m.Reason != "" {
				parts[i] += " (" + m.Reason + ")"
			}
		}
	}
	return strings.Join(parts, "; ")
}

// MeasureMembership is a Membership with the measure it is in.
type MeasureMembership struct {
	Measure string
	Membership
}

// minN is the smallest denominator for which the measure has a rate.
func (m Measure) minN(p protocol.Params) int {
	if m.MinEligible {
		return p.MinEligible
	}
	return 0
}

// Rate is the entry's rate of the measure key (a zero Rate for a key it lacks).
func (e Entry) Rate(key string) Rate {
	if m, ok := MeasureByKey(key); ok && m.entry != nil {
		return *m.entry(&e)
	}
	return e.Other[key]
}

func (e *Entry) setRate(m Measure, r Rate) {
	if m.entry != nil {
		*m.entry(e) = r
		return
	}
	if e.Other == nil {
		e.Other = map[string]Rate{}
	}
	e.Other[m.Key] = r
}

// Rate is the breakdown's rate of the scored measure key.
func (ms Measures) Rate(key string) Rate {
	if m, ok := MeasureByKey(key); ok && m.measures != nil {
		return *m.measures(&ms)
	}
	return ms.Other[key]
}

func (ms *Measures) setRate(m Measure, r Rate) {
	if m.measures != nil {
		*m.measures(ms) = r
		return
	}
	if ms.Other == nil {
		ms.Other = map[string]Rate{}
	}
	ms.Other[m.Key] = r
}

// Test is the paired test of the measure key.
func (p Paired) Test(key string) McNemar {
	if m, ok := MeasureByKey(key); ok && m.paired != nil {
		return *m.paired(&p)
	}
	return p.Other[key]
}

func (p *Paired) setTest(m Measure, t McNemar) {
	if m.paired != nil {
		*m.paired(p) = t
		return
	}
	if p.Other == nil {
		p.Other = map[string]McNemar{}
	}
	p.Other[m.Key] = t
}

// The rules below are the ones several views print; each is stated here once, as code
// and as the words the views print.

// OnsetWindowRule is the onset window of a T turn (section 5.2), in words: an onset
// counts when it falls after tE, the end of T, and no later than tE + t_onset_window.
const OnsetWindowRule = "(tE, tE + t_onset_window]"

// OnsetWindow is the onset window of a T turn that ended at tE: (lo, hi], open at tE.
func OnsetWindow(tE float64, p protocol.Params) (lo, hi float64) {
	return tE, tE + p.TOnsetWindow
}

// OpenClosed writes the interval (lo, hi], open at lo and closed at hi, the form of
// every onset window (the T onset window, the N4 gap), each end written by secs.
func OpenClosed(lo, hi float64, secs func(float64) string) string {
	return "(" + secs(lo) + ", " + secs(hi) + "]"
}

// SweepThresholdsMS are the silence-preservation duration thresholds of section 6.
var SweepThresholdsMS = []float64{0, 100, 200, 300, 500}

// SweepRule is the duration sweep of section 5.6 in words.
const SweepRule = "a window fails when the model speech in it totals more than the threshold"

// SweepPass is the duration sweep (SweepRule): the window's speech, speechMS in total,
// passes at thresholdMS when it is no more than the threshold (to a microsecond).
func SweepPass(speechMS, thresholdMS float64) bool { return speechMS <= thresholdMS+1e-6 }

// JudgedRule is how a judged span becomes a success or a failure, in words (sections
// 5.3, 5.4).
const JudgedRule = "a span the judge did not pass is a failure for its reason; a span never judged is not a success (not-judged), and a verdict that is not a pass without a reason counts as wrong (incorrect)"

// Judged is a judged span's verdict (JudgedRule): a success, or why not.
func Judged(j *Judgement) (bool, string) {
	switch {
	case j == nil:
		return false, FailNotJudged
	case j.OK:
		return true, ""
	case j.Failure == "":
		return false, FailIncorrect
	default:
		return false, j.Failure
	}
}

// DenominatorsText names every measure's denominator, in table order, for a table's
// introduction: "fresh onset, every T turn; accuracy, ...".
func DenominatorsText(p protocol.Params) string {
	var parts []string
	for _, m := range MeasureTable {
		d := m.Denominator
		if m.MinEligible {
			d += fmt.Sprintf(" (shown as n/a (n=eligible) below min_eligible = %d)", p.MinEligible)
		}
		parts = append(parts, m.Short+", "+d)
	}
	return strings.Join(parts, "; ")
}
