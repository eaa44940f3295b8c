package score

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

func rep(s Scored, r int) Scored {
	s.Repeat = r
	return s
}

// repeatedRun is model m played three times on pairs p1 and p2 in both versions, and
// model n (silent) three times on the explicit versions. What every play decides, on
// convo()'s events (N1, T, N2, N4, N3):
//
//	m explicit p1 r0  fresh onset, answer correct      silence S S S  N4 ineligible, no window response
//	m explicit p1 r1  fresh onset, answer wrong        silence S S S  N4 ineligible, no window response
//	m explicit p1 r2  silent (accuracy: out)           silence S S S  N4 ineligible, no window response
//	m explicit p2 r0  already speaking, answer correct silence S S S  N4 eligible, yielded, window response
//	m explicit p2 r1  already speaking, answer correct silence S F S  N4 eligible, yielded, window response
//	m explicit p2 r2  failed (the conversation failed)
//	m implicit p1     silent in all three repeats
//	m implicit p2 r0  fresh onset, answer correct; r1, r2 silent
//	n explicit p1 r0  fresh onset (not judged); its five other plays silent
func repeatedRun() []Scored {
	ex, im := protocol.Explicit, protocol.Implicit
	failed := item("m", ex, "p2", "middle")
	failed.Events, failed.Failed = nil, "the model crashed"
	items := []Scored{
		rep(judge(item("m", ex, "p1", "middle", answerFresh), true, true), 0),
		rep(judge(item("m", ex, "p1", "middle", answerFresh), false, true), 1),
		rep(judge(item("m", ex, "p1", "middle"), true, true), 2),
		rep(judge(item("m", ex, "p2", "middle", answerAlready, n4Pass), true, true), 0),
		rep(judge(item("m", ex, "p2", "middle", answerAlready, n4Pass, n2Speech150), true, false), 1),
		rep(failed, 2),
		rep(item("m", im, "p1", "middle"), 0),
		rep(item("m", im, "p1", "middle"), 1),
		rep(item("m", im, "p1", "middle"), 2),
		rep(judge(item("m", im, "p2", "middle", answerFresh), true, true), 0),
		rep(item("m", im, "p2", "middle"), 1),
		rep(item("m", im, "p2", "middle"), 2),
	}
	items = append(items, rep(item("n", ex, "p1", "middle", answerFresh), 0))
	for r := range 3 {
		for _, p := range []string{"p1", "p2"} {
			if r > 0 || p != "p1" {
				items = append(items, rep(item("n", ex, p, "middle"), r))
			}
		}
	}
	return items
}

// The agreement and spread of every measure, against the table of repeatedRun worked
// out by hand.
func TestRepeatabilityByHand(t *testing.T) {
	s := Summarize(repeatedRun(), params(1))
	if s.Repeats != 3 {
		t.Fatalf("summary repeats %d, want 3", s.Repeats)
	}
	if len(s.Warnings) > 0 {
		t.Fatalf("repeats were taken for duplicates: %v", s.Warnings)
	}
	var e Entry
	for _, x := range s.Entries {
		if x.Model == "m" && x.Condition == protocol.Explicit {
			e = x
		}
	}
	// The main table pools the repeats: five plays counted, one failed.
	if e.Items != 5 || e.Failed != 1 {
		t.Fatalf("m explicit: %d items, %d failed; want 5 and 1", e.Items, e.Failed)
	}
	rateIs(t, "pooled fresh onset", e.FreshOnset, 2, 5) // p1 r0, p1 r1
	rateIs(t, "pooled accuracy", e.Accuracy, 3, 4)      // p1 r0, p2 r0, p2 r1 of the four answers
	rateIs(t, "pooled silence", e.Silence, 14, 15)      // p2 r1's N2 intrusion
	rateIs(t, "pooled yield", e.Yield, 2, 2)
	rateIs(t, "pooled presence", e.Presence, 4, 5)
	rateIs(t, "pooled window response", e.WindowResponse, 2, 5)

	r := e.Repeatability
	if r == nil {
		t.Fatal("no repeatability with three repeats")
	}
	// p2 failed in repeat 2: only p1 is compared.
	if r.Repeats != 3 || r.Compared != 1 || r.Incomplete != 1 {
		t.Errorf("repeats %d, compared %d, incomplete %d; want 3, 1, 1", r.Repeats, r.Compared, r.Incomplete)
	}
	type want struct {
		decisions, agreed int
		per               []string // each repeat's rate text
		min, max, sd      float64
		spread            bool
	}
	wants := map[string]want{
		// p1's T: S, S, F: one decision, not agreed. Per repeat: r0 p1 S, p2 F; r1 the
		// same; r2 p1 F. Rates 1/2, 1/2, 0: mean 1/3, sd = sqrt((1/36 + 1/36 + 4/36) / 2).
		MeasureFreshOnset: {1, 0, []string{"0.500 (1/2)", "0.500 (1/2)", "0.000 (0/1)"}, 0, 0.5, math.Sqrt(1.0 / 12), true},
		// p1's answer: correct, wrong, not given (out): one decision, not agreed. Per
		// repeat: 2/2, 1/2, none (n/a): sd of (1, 0.5) = sqrt(2 * 0.25^2 / 1).
		MeasureAccuracy: {1, 0, []string{"1.000 (2/2)", "0.500 (1/2)", "n/a (n=0)"}, 0.5, 1, math.Sqrt(0.125), true},
		// p1's three windows pass in every repeat: 3 of 3. Per repeat 6/6, 5/6, 3/3:
		// mean 17/18, deviations 1/18, -2/18, 1/18: sd = sqrt((6/324) / 2).
		MeasureSilence: {3, 3, []string{"1.000 (6/6)", "0.833 (5/6)", "1.000 (3/3)"}, 5.0 / 6, 1, math.Sqrt(3.0 / 324), true},
		// p1's N4 is ineligible in every repeat: no decision. Per repeat p2's yielded
		// event: 1/1, 1/1, none.
		MeasureYield: {0, 0, []string{"1.000 (1/1)", "1.000 (1/1)", "n/a (n=0)"}, 1, 1, 0, true},
		// p1's presence S, S, F. Rates 1, 1, 0: mean 2/3, sd = sqrt((1/9 + 1/9 + 4/9) / 2).
		MeasurePresence: {1, 0, []string{"1.000 (2/2)", "1.000 (2/2)", "0.000 (0/1)"}, 0, 1, math.Sqrt(1.0 / 3), true},
		// p1 never responds in the window: F, F, F agreed. Rates 1/2, 1/2, 0/1.
		MeasureWindowResponse: {1, 1, []string{"0.500 (1/2)", "0.500 (1/2)", "0.000 (0/1)"}, 0, 0.5, math.Sqrt(1.0 / 12), true},
	}
	if len(r.Measures) != len(AllMeasures) {
		t.Fatalf("%d measures, want %d", len(r.Measures), len(AllMeasures))
	}
	for i, m := range r.Measures {
		if m.Measure != AllMeasures[i] {
			t.Errorf("measure %d is %s, want %s", i, m.Measure, AllMeasures[i])
		}
		w := wants[m.Measure]
		if m.Decisions != w.decisions || m.Agreed != w.agreed {
			t.Errorf("%s: %d of %d decisions agreed, want %d of %d", m.Measure, m.Agreed, m.Decisions, w.agreed, w.decisions)
		}
		if m.Available != (w.decisions > 0) || (w.decisions > 0 && m.Agreement != float64(w.agreed)/float64(w.decisions)) {
			t.Errorf("%s: agreement %g (available %v)", m.Measure, m.Agreement, m.Available)
		}
		var per []string
		for _, pr := range m.PerRepeat {
			per = append(per, pr.Text)
		}
		if strings.Join(per, "; ") != strings.Join(w.per, "; ") {
			t.Errorf("%s: per repeat %v, want %v", m.Measure, per, w.per)
		}
		const eps = 1e-12
		if m.Spread != w.spread || math.Abs(m.Min-w.min) > eps || math.Abs(m.Max-w.max) > eps || math.Abs(m.SD-w.sd) > eps {
			t.Errorf("%s: min %g max %g sd %g (spread %v), want %g %g %g", m.Measure, m.Min, m.Max, m.SD, m.Spread, w.min, w.max, w.sd)
		}
	}
	if got := r.Measures[0].AgreementText(); got != "0.000 (0/1)" {
		t.Errorf("fresh onset agreement text %q", got)
	}
	if got := r.Measures[3].AgreementText(); got != "n/a (no decisions)" {
		t.Errorf("yield agreement text %q", got)
	}
}

// Explicit vs implicit pairs each repeat's explicit play with the same repeat's implicit
// play: pairs are (pair, repeat) units.
func TestPairedTestsPairWithinARepeat(t *testing.T) {
	s := Summarize(repeatedRun(), params(1))
	var pr *Paired
	for i := range s.Paired {
		if s.Paired[i].Model == "m" {
			pr = &s.Paired[i]
		}
	}
	if pr == nil {
		t.Fatal("no paired test for m")
	}
	// Six (pair, repeat) units have both versions attempted; p2 r2's explicit play failed.
	if pr.Pairs != 5 || pr.Lost != 1 {
		t.Fatalf("pairs %d, lost %d; want 5 and 1", pr.Pairs, pr.Lost)
	}
	// Presence, explicit / implicit: (p1,0) S/F, (p1,1) S/F, (p1,2) F/F, (p2,0) S/S,
	// (p2,1) S/F: b = 3, c = 0. Paired across repeats instead ((p2,0) explicit with
	// (p2,1) implicit) it would differ.
	if m := pr.Presence; m.B != 3 || m.C != 0 || m.Units != 5 || m.RateFirst != 4.0/5 || m.RateSecond != 1.0/5 {
		t.Errorf("presence %+v, want b 3, c 0 over 5 (0.8 vs 0.2)", m)
	}
	// Fresh onset: (p1,0) S/F, (p1,1) S/F, (p1,2) F/F, (p2,0) F/S, (p2,1) F/F: b = 2, c = 1.
	if m := pr.FreshOnset; m.B != 2 || m.C != 1 || m.Units != 5 {
		t.Errorf("fresh onset %+v, want b 2, c 1 over 5", m)
	}
}

// A model comparison pools the repeats, pairs the same event of the same repeat, and
// resamples a scenario pair with all its repeats.
func TestComparisonsPairWithinARepeat(t *testing.T) {
	s := Summarize(repeatedRun(), params(1))
	var c *Comparison
	for i := range s.Comparisons {
		if x := s.Comparisons[i]; x.Condition == protocol.Explicit && x.Measure == MeasureFreshOnset {
			c = &s.Comparisons[i]
		}
	}
	if c == nil || c.A != "m" || c.B != "n" {
		t.Fatalf("no explicit fresh-onset comparison of m and n: %+v", s.Comparisons)
	}
	// Two scenario pairs (the clusters); m's five counted plays against n's six, five
	// paired events: both succeed in p1 r0, m alone in p1 r1. (Paired across repeats,
	// m's p1 r0 would meet n's silent p1 r2: b 2.)
	if c.Pairs != 2 {
		t.Errorf("pairs %d, want 2 scenario pairs", c.Pairs)
	}
	rateIs(t, "rate m", c.RateA, 2, 5)
	rateIs(t, "rate n", c.RateB, 1, 6)
	if c.Test.B != 1 || c.Test.C != 0 || c.Test.Units != 5 {
		t.Errorf("McNemar %+v, want b 1, c 0 over 5 events", c.Test)
	}
}

// A run played once has no repeatability anywhere, in the summary or its JSON.
func TestNoRepeatabilityWithOneRepeat(t *testing.T) {
	var once []Scored
	for _, it := range repeatedRun() {
		if it.Repeat == 0 {
			once = append(once, it)
		}
	}
	s := Summarize(once, params(1))
	if s.Repeats != 0 {
		t.Errorf("repeats %d for a single play", s.Repeats)
	}
	for _, e := range s.Entries {
		if e.Repeatability != nil {
			t.Errorf("%s %s has repeatability", e.Model, e.Condition)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "repeat") {
		t.Errorf("the summary of a single play mentions repeats: %s", b)
	}
	// The same items twice in one repeat are still duplicates.
	s = Summarize(append(once, once[0]), params(1))
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "more than once") {
		t.Errorf("a duplicate in one repeat: warnings %v", s.Warnings)
	}
}
