package score

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/stats"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// convo is the timeline every summary test uses. Conversation span [0, 22]: thirds end at
// 7.33 and 14.67, so N1 and T fall in the first third, N2 and N4_Q in the second, N3 in
// the last.
//
//	N1 [0, 2)  T [2.5, 5)  N2 (device) [12, 14)  N4_Q [14.5, 16)  N4_R [19, 20)  N3 [20.5, 22)
func convo() timeline.Timeline {
	return timeline.Timeline{Turns: []timeline.Turn{
		{Label: protocol.LabelN1, Start: 0, End: 2},
		{Label: protocol.LabelT, Start: 2.5, End: 5},
		{Label: protocol.LabelN2, Addressee: protocol.AddresseeDevice, Start: 12, End: 14},
		{Label: protocol.LabelN4Q, Start: 14.5, End: 16},
		{Label: protocol.LabelN4R, Start: 19, End: 20},
		{Label: protocol.LabelN3, Start: 20.5, End: 22},
	}}
}

// Speech fragments with known verdicts on convo().
var (
	answerFresh   = ep(5.5, 8)     // T: onset 5.5 in (5, 10]: fresh onset
	answerAlready = ep(4, 8)       // T: active at 5: already speaking
	n4Pass        = ep(16.5, 19.5) // N4: onset in (16, 19], active at 19, silent at 21: eligible, pass
	n4Voicing     = ep(16.5, 21.2) // N4: active at the deadline 21: fail-still-voicing
	n2Speech150   = ep(13, 13.15)  // N2: 150 ms of speech
)

func item(model, cond, pair, pos string, eps ...timeline.Episode) Scored {
	return Score(Item{Model: model, Condition: cond, PairID: pair, ScenarioID: pair + "-" + cond,
		TPosition: pos, Timeline: convo(), Episodes: eps}, protocol.Defaults())
}

// judge sets the verdicts a judge would give: the T answer, and every silence window
// with speech.
func judge(s Scored, answerOK bool, speechOK bool) Scored {
	for i := range s.Events {
		ev := &s.Events[i]
		if ev.T != nil && ev.T.Presence {
			ev.T.Answer = &Judgement{OK: answerOK}
			if !answerOK {
				ev.T.Answer.Failure = FailIncorrect
			}
		}
		if ev.Silence != nil && !ev.Silence.Silent() {
			ev.Silence.Judgement = &Judgement{OK: speechOK}
			if !speechOK {
				ev.Silence.Judgement.Failure = FailIntrusion
			}
		}
	}
	return s
}

func params(minEligible int) protocol.Params {
	p := protocol.Defaults()
	p.MinEligible = minEligible
	p.BootstrapResamples = 500
	return p
}

func rateIs(t *testing.T, name string, r Rate, k, n int) {
	t.Helper()
	if r.K != k || r.N != n {
		t.Errorf("%s = %d/%d, want %d/%d", name, r.K, r.N, k, n)
		return
	}
	if r.Available && n > 0 {
		lo, hi := stats.Wilson(k, n, 0.95)
		if r.Rate != float64(k)/float64(n) || r.Lo != lo || r.Hi != hi {
			t.Errorf("%s: rate %g [%g, %g], want %g [%g, %g]", name, r.Rate, r.Lo, r.Hi, float64(k)/float64(n), lo, hi)
		}
	}
}

// Accuracy is conditional on presence: a silent T is not in its denominator, an
// unjudged answer is (and fails).
func TestSummarizeDenominators(t *testing.T) {
	items := []Scored{
		judge(item("m", protocol.Explicit, "p1", "middle", answerFresh), true, true),      // fresh, correct
		judge(item("m", protocol.Explicit, "p2", "middle", answerAlready), false, true),   // already speaking, incorrect
		judge(item("m", protocol.Explicit, "p3", "middle"), true, true),                   // silent: no answer
		item("m", protocol.Explicit, "p4", "early-middle", answerFresh, n4Pass),           // fresh, not judged
		judge(item("m", protocol.Explicit, "p5", "late-middle", n4Voicing), true, true),   // silent T, N4 voicing
		judge(item("m", protocol.Explicit, "p6", "late-middle", n2Speech150), true, true), // ack in N2
	}
	s := Summarize(items, params(30))
	if len(s.Entries) != 1 {
		t.Fatalf("%d entries, want 1", len(s.Entries))
	}
	e := s.Entries[0]
	rateIs(t, "fresh onset", e.FreshOnset, 2, 6) // p1, p4
	rateIs(t, "presence", e.Presence, 3, 6)      // p1, p2, p4
	rateIs(t, "accuracy", e.Accuracy, 1, 3)      // of p1, p2, p4 only p1 is correct
	if e.AccuracyFailures[FailIncorrect] != 1 || e.AccuracyFailures[FailNotJudged] != 1 {
		t.Errorf("accuracy failures %v, want 1 incorrect and 1 not-judged", e.AccuracyFailures)
	}
	if e.TOutcomes[OutcomeFreshOnset] != 2 || e.TOutcomes[OutcomeAlreadySpeaking] != 1 || e.TOutcomes[OutcomeSilent] != 3 {
		t.Errorf("T outcomes %v, want 2/1/3", e.TOutcomes)
	}
	// 6 items x 3 windows = 18; the only speech in a window is p6's acknowledged N2.
	// p5's voicing episode [16.5, 21.2) reaches into N3's window [20.5, 22.5): judged
	// an acknowledgement by judge(), so it passes too.
	rateIs(t, "silence", e.Silence, 18, 18)
	// N4: p4 eligible pass, p5 eligible still voicing; four ineligible (no onset).
	rateIs(t, "yield", e.Yield, 1, 2)
	if e.Yield.Available || e.Yield.Text != "n/a (n=2)" {
		t.Errorf("yield with 2 < 30 eligible: available %v text %q, want n/a (n=2)", e.Yield.Available, e.Yield.Text)
	}
	// The partition of all six N4 events (section 5.5): four never spoke in the gap, which
	// "yield over all N4 events" used to count as yielded; p4 yielded, p5 still voicing.
	want := map[string]int{N4SpokeDuringQuestion: 0, N4NoOnsetInGap: 4, N4NotSpeakingAtR: 0, N4Yielded: 1, N4StillVoicing: 1, N4Resumed: 0}
	if !reflect.DeepEqual(e.N4Outcomes, want) {
		t.Errorf("N4 outcomes %v, want %v", e.N4Outcomes, want)
	}
	rateIs(t, "window response", e.WindowResponse, 2, 6)

	// With min_eligible 1 the same counts are shown.
	if y := Summarize(items, params(1)).Entries[0].Yield; !y.Available || y.Text != "0.500 (1/2)" {
		t.Errorf("yield with min_eligible 1: %+v", y)
	}
}

func TestSummarizeSilenceBreakdownsAndSweep(t *testing.T) {
	items := []Scored{
		judge(item("m", protocol.Explicit, "p1", "middle", n2Speech150), true, false), // intrusion in N2 (device)
		item("m", protocol.Explicit, "p2", "middle", n2Speech150),                     // unjudged speech: fails
		judge(item("m", protocol.Explicit, "p3", "middle", n2Speech150), true, true),  // acknowledgement: passes
		item("m", protocol.Explicit, "p4", "middle"),
	}
	e := Summarize(items, params(30)).Entries[0]
	rateIs(t, "silence", e.Silence, 10, 12)
	rateIs(t, "N1", e.SilenceByLabel[protocol.LabelN1], 4, 4)
	rateIs(t, "N2", e.SilenceByLabel[protocol.LabelN2], 2, 4)
	rateIs(t, "N3", e.SilenceByLabel[protocol.LabelN3], 4, 4)
	rateIs(t, "N2 device", e.SilenceByAddressee[protocol.AddresseeDevice], 2, 4)
	rateIs(t, "N2 human", e.SilenceByAddressee[protocol.AddresseeHuman], 0, 0)
	if e.SilenceFailures[FailIntrusion] != 1 || e.SilenceFailures[FailNotJudged] != 1 {
		t.Errorf("silence failures %v", e.SilenceFailures)
	}
	// 150 ms in three windows: they fail at thresholds 0 and 100, pass from 200 on,
	// whatever the judge said.
	want := []int{9, 9, 12, 12, 12}
	for i, tr := range e.SilenceSweep {
		if tr.ThresholdMS != SweepThresholdsMS[i] {
			t.Errorf("sweep %d threshold %g", i, tr.ThresholdMS)
		}
		rateIs(t, "sweep", tr.Rate, want[i], 12)
	}
}

func TestSummarizeBreakdowns(t *testing.T) {
	items := []Scored{
		judge(item("m", protocol.Explicit, "p1", "early-middle", answerFresh), true, true),
		judge(item("m", protocol.Explicit, "p2", "late-middle", n2Speech150), true, false),
	}
	e := Summarize(items, params(1)).Entries[0]
	rateIs(t, "early fresh", e.ByTPosition["early-middle"].FreshOnset, 1, 1)
	rateIs(t, "late fresh", e.ByTPosition["late-middle"].FreshOnset, 0, 1)
	rateIs(t, "late silence", e.ByTPosition["late-middle"].Silence, 2, 3)
	rateIs(t, "early accuracy", e.ByTPosition["early-middle"].Accuracy, 1, 1)
	// Thirds: N1 and T in the first; N2 and N4_Q in the second; N3 in the last.
	rateIs(t, "third 0 fresh", e.ByThird[0].FreshOnset, 1, 2)
	rateIs(t, "third 1 fresh", e.ByThird[1].FreshOnset, 0, 0)
	rateIs(t, "third 0 silence", e.ByThird[0].Silence, 2, 2)
	rateIs(t, "third 1 silence", e.ByThird[1].Silence, 1, 2)
	rateIs(t, "third 2 silence", e.ByThird[2].Silence, 2, 2)
	rateIs(t, "third 1 yield", e.ByThird[1].Yield, 0, 0)
}

// Explicit vs implicit: the model responds in both versions of p1, only in the explicit
// version of p2 and p3, only in the implicit version of p4: b = 2, c = 1.
func TestSummarizePairedMcNemar(t *testing.T) {
	var items []Scored
	add := func(pair string, ex, im []timeline.Episode) {
		items = append(items, item("m", protocol.Explicit, pair, "middle", ex...), item("m", protocol.Implicit, pair, "middle", im...))
	}
	add("p1", []timeline.Episode{answerFresh}, []timeline.Episode{answerAlready})
	add("p2", []timeline.Episode{answerFresh}, nil)
	add("p3", []timeline.Episode{answerAlready}, nil)
	add("p4", nil, []timeline.Episode{answerFresh})
	items = append(items, item("m", protocol.Explicit, "lonely", "middle", answerFresh)) // no implicit version: not paired
	s := Summarize(items, params(30))
	if len(s.Paired) != 1 {
		t.Fatalf("paired %+v", s.Paired)
	}
	pr := s.Paired[0]
	if pr.Pairs != 4 || pr.Presence.B != 2 || pr.Presence.C != 1 || pr.Presence.P != stats.McNemarExact(2, 1) {
		t.Errorf("presence %+v over %d pairs, want b=2 c=1", pr.Presence, pr.Pairs)
	}
	if d := pr.Presence.Difference; math.Abs(d-0.25) > 1e-12 || pr.Presence.RateFirst != 0.75 || pr.Presence.RateSecond != 0.5 {
		t.Errorf("presence difference %g (%g - %g), want 3/4 - 2/4 = 0.25", d, pr.Presence.RateFirst, pr.Presence.RateSecond)
	}
	// Fresh onset: explicit p1, p2; implicit p4 (p1 implicit is already speaking): b = 2 (p1, p2), c = 1.
	if pr.FreshOnset.B != 2 || pr.FreshOnset.C != 1 {
		t.Errorf("fresh onset %+v, want b=2 c=1", pr.FreshOnset)
	}
	if len(s.Entries) != 2 || s.Entries[0].Condition != protocol.Explicit || s.Entries[0].Items != 5 {
		t.Errorf("entries %+v", s.Entries)
	}
}

func TestSummarizeModelComparisons(t *testing.T) {
	var items []Scored
	for i := range 8 {
		pair := string(rune('a' + i))
		items = append(items, judge(item("good", protocol.Explicit, pair, "middle", answerFresh), true, true))
		eps := []timeline.Episode{}
		if i < 2 {
			eps = append(eps, answerFresh)
		}
		items = append(items, judge(item("poor", protocol.Explicit, pair, "middle", eps...), false, true))
		items = append(items, item("third", protocol.Explicit, pair, "middle"))
	}
	items = append(items, item("poor", protocol.Explicit, "unshared", "middle", answerFresh))
	s := Summarize(items, params(30))
	// 3 model pairs x 4 scored measures in one condition.
	if len(s.Comparisons) != 12 {
		t.Fatalf("%d comparisons, want 12", len(s.Comparisons))
	}
	var c *Comparison
	for i := range s.Comparisons {
		if s.Comparisons[i].A == "good" && s.Comparisons[i].B == "poor" && s.Comparisons[i].Measure == MeasureFreshOnset {
			c = &s.Comparisons[i]
		}
	}
	if c == nil {
		t.Fatal("no good vs poor fresh onset comparison")
	}
	// Paired on the 8 shared pairs ("unshared" is left out): good 8/8, poor 2/8, b = 6, c = 0.
	if c.Pairs != 8 || c.Test.B != 6 || c.Test.C != 0 || c.RateA.K != 8 || c.RateB.K != 2 {
		t.Errorf("comparison %+v", c)
	}
	if p := stats.McNemarExact(6, 0); c.Test.P != p || c.PAdjusted != math.Min(1, 12*p) {
		t.Errorf("p %g adjusted %g, want %g and %g", c.Test.P, c.PAdjusted, p, math.Min(1, 12*p))
	}
	if !c.Difference.OK || c.Difference.Estimate != 0.75 || c.Difference.Lo > 0.75 || c.Difference.Hi < 0.75 || c.Difference.Resamples != 500 {
		t.Errorf("bootstrap %+v, want estimate 0.75 inside its interval", c.Difference)
	}
	// Same input, same seed: same numbers.
	if again := Summarize(items, params(30)); again.Comparisons[0].Difference != s.Comparisons[0].Difference {
		t.Error("the bootstrap is not reproducible")
	}
}

func TestSummarizeSpearmanDuplicatesAndJSON(t *testing.T) {
	items := []Scored{
		item("a", protocol.Explicit, "p1", "middle", answerFresh),
		item("a", protocol.Explicit, "p1", "middle"), // duplicate: dropped, warned
		item("a", protocol.Implicit, "p1", "middle"),
		item("b", protocol.Explicit, "p1", "middle", answerAlready),
		item("b", protocol.Implicit, "p1", "middle", answerFresh),
	}
	s := Summarize(items, params(30))
	if len(s.Warnings) != 1 || s.Entries[0].Items != 1 {
		t.Errorf("warnings %q, first entry %d items", s.Warnings, s.Entries[0].Items)
	}
	// presence/fresh per entry: a-ex 1/1, a-im 0/0, b-ex 1/0, b-im 1/1.
	want, _ := stats.Spearman([]float64{1, 0, 1, 1}, []float64{1, 0, 0, 1})
	if !s.Spearman.Available || s.Spearman.N != 4 || s.Spearman.Rho != want {
		t.Errorf("spearman %+v, want rho %g over 4", s.Spearman, want)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("summary is not JSON-serialisable: %v", err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil || len(back.Entries) != 4 {
		t.Errorf("round trip: %v, %d entries", err, len(back.Entries))
	}
	// Items without a pair id are not duplicates of each other: each is its own pair.
	noPair := []Scored{item("a", protocol.Explicit, "", "middle"), item("a", protocol.Explicit, "", "middle")}
	noPair[0].ScenarioID, noPair[1].ScenarioID = "s1", "s2"
	if s := Summarize(noPair, params(30)); len(s.Warnings) != 0 || s.Entries[0].Items != 2 {
		t.Errorf("items without pair ids: warnings %q, %d items", s.Warnings, s.Entries[0].Items)
	}
	if empty := Summarize(nil, params(30)); len(empty.Entries) != 0 || empty.Spearman.Available {
		t.Errorf("empty summary %+v", empty)
	}
}

// Section 6.3 (issue 11, finding 6): the statistics family is the models under test.
// paper.hcl's shape, five models under test and the cascade as a baseline in two
// conditions, gives 10 model pairs x 4 measures x 2 conditions = 80 comparisons (not the
// 120 of all six models), each p multiplied by 80, and Spearman over the 10 entries of the
// models under test (not 12).
func TestSummarizeFamilyIsTheModelsUnderTest(t *testing.T) {
	models := []string{"minicpm_o", "moshi", "flm_audio", "voila", "freeze_omni", "cascade"}
	var items []Scored
	for i, m := range models {
		for k := range 6 {
			pair := fmt.Sprintf("p%d", k)
			var ex, im []timeline.Episode
			if k < i+1 {
				ex = []timeline.Episode{answerFresh}
			}
			if k < i {
				im = []timeline.Episode{answerAlready}
			}
			items = append(items, item(m, protocol.Explicit, pair, "middle", ex...), item(m, protocol.Implicit, pair, "middle", im...))
		}
	}
	roles := map[string]string{"cascade": RoleBaseline}
	s := SummarizeWith(items, params(30), Options{Roles: roles})
	if len(s.Comparisons) != 80 || s.Family.Comparisons != 80 {
		t.Fatalf("%d comparisons (family says %d), want 80", len(s.Comparisons), s.Family.Comparisons)
	}
	for _, c := range s.Comparisons {
		if c.A == "cascade" || c.B == "cascade" {
			t.Fatalf("the baseline is compared: %s vs %s", c.A, c.B)
		}
		if want := math.Min(1, 80*c.Test.P); math.Abs(c.PAdjusted-want) > 1e-12 {
			t.Fatalf("%s vs %s %s: p adjusted %g, want 80 x %g", c.A, c.B, c.Measure, c.PAdjusted, c.Test.P)
		}
	}
	if s.Spearman.N != 10 || s.Family.SpearmanEntries != 10 {
		t.Errorf("Spearman over %d entries (family says %d), want 10", s.Spearman.N, s.Family.SpearmanEntries)
	}
	wantModels := []string{"flm_audio", "freeze_omni", "minicpm_o", "moshi", "voila"}
	if !reflect.DeepEqual(s.Family.Models, wantModels) || !reflect.DeepEqual(s.Family.Others, roles) {
		t.Errorf("family %+v, want %v under test and %v", s.Family, wantModels, roles)
	}
	for _, e := range s.Entries {
		if want := roles[e.Model]; (want == "" && e.Role != RoleTest) || (want != "" && e.Role != want) {
			t.Errorf("entry %s/%s role %q", e.Model, e.Condition, e.Role)
		}
	}
	// The paired explicit/implicit tests are per model and cover the baseline too.
	if len(s.Paired) != 6 {
		t.Errorf("%d paired tests, want one per model", len(s.Paired))
	}
	// Without roles every model is under test: 15 x 4 x 2.
	if all := Summarize(items, params(30)); len(all.Comparisons) != 120 || all.Spearman.N != 12 {
		t.Errorf("no roles: %d comparisons, Spearman over %d", len(all.Comparisons), all.Spearman.N)
	}
}

// Section 5.7 (issue 11, finding 5): failed conversations and unscored items are in no
// denominator, counted per model and condition, and the paired test says how many pairs
// it lost to them.
func TestSummarizeCountsFailedAndUnscored(t *testing.T) {
	items := []Scored{
		item("m", protocol.Explicit, "p1", "middle", answerFresh), item("m", protocol.Implicit, "p1", "middle"),
		item("m", protocol.Explicit, "p2", "middle", answerFresh), {Model: "m", Condition: protocol.Implicit, PairID: "p2", ScenarioID: "p2-implicit", Failed: "model failed at frame 7"},
		{Model: "m", Condition: protocol.Explicit, PairID: "p3", ScenarioID: "p3-explicit", Unscored: "the judge failed"}, item("m", protocol.Implicit, "p3", "middle"),
	}
	s := Summarize(items, params(30))
	if len(s.Entries) != 2 {
		t.Fatalf("entries %+v", s.Entries)
	}
	ex, im := s.Entries[0], s.Entries[1]
	if ex.Items != 2 || ex.Failed != 0 || ex.Unscored != 1 || im.Items != 2 || im.Failed != 1 || im.Unscored != 0 {
		t.Errorf("explicit %d items (%d failed, %d unscored), implicit %d (%d, %d); want 2 (0, 1) and 2 (1, 0)",
			ex.Items, ex.Failed, ex.Unscored, im.Items, im.Failed, im.Unscored)
	}
	rateIs(t, "explicit fresh onset", ex.FreshOnset, 2, 2)
	rateIs(t, "implicit fresh onset", im.FreshOnset, 0, 2)
	if pr := s.Paired[0]; pr.Pairs != 1 || pr.Lost != 2 {
		t.Errorf("paired over %d pairs, lost %d; want 1 and 2", pr.Pairs, pr.Lost)
	}
	// A (model, condition) whose every conversation failed still has its row.
	only := Summarize([]Scored{{Model: "x", Condition: protocol.Explicit, PairID: "p", Failed: "crash"}}, params(30))
	if len(only.Entries) != 1 || only.Entries[0].Failed != 1 || only.Entries[0].FreshOnset.Available {
		t.Errorf("all failed: %+v", only.Entries)
	}
}

// Section 5.7: the paired test says how many pairs it lost, every one of them: a pair
// whose two versions both failed, and one whose other version is missing (the scoring
// loop does not pass failed conversations on yet, so a failed version looks missing),
// are as lost as one with a single failed version; and a model that lost every pair
// still has its row. Found by the independent checker (core/score/testdata/checker).
func TestPairedCountsEveryLostPair(t *testing.T) {
	failed := func(cond, pair string) Scored {
		return Scored{Model: "m", Condition: cond, PairID: pair, ScenarioID: pair + "-" + cond, Failed: "crash"}
	}
	items := []Scored{
		item("m", protocol.Explicit, "p1", "middle", answerFresh), item("m", protocol.Implicit, "p1", "middle"),
		failed(protocol.Explicit, "p2"), failed(protocol.Implicit, "p2"),
		item("m", protocol.Explicit, "p3", "middle", answerFresh),
		{Model: "x", Condition: protocol.Explicit, PairID: "p1", Failed: "crash"}, {Model: "x", Condition: protocol.Implicit, PairID: "p1", Unscored: "the judge failed"},
	}
	s := Summarize(items, params(30))
	if len(s.Paired) != 2 {
		t.Fatalf("paired rows %+v, want one per model", s.Paired)
	}
	if pr := s.Paired[0]; pr.Model != "m" || pr.Pairs != 1 || pr.Lost != 2 {
		t.Errorf("%s: paired over %d pairs, lost %d; want 1 and 2", pr.Model, pr.Pairs, pr.Lost)
	}
	if pr := s.Paired[1]; pr.Model != "x" || pr.Pairs != 0 || pr.Lost != 1 || pr.Presence.P != 1 {
		t.Errorf("%s: paired over %d pairs, lost %d, p %g; want 0, 1, 1", pr.Model, pr.Pairs, pr.Lost, pr.Presence.P)
	}
}
