package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/reference"
	"github.com/duplexmpe/duplexmpe/core/room"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/score/textfmt"
)

// table is one rendered table; Markdown and HTML render the same tables, so the two
// formats cannot disagree.
type table struct {
	// Title heads the table when a section has several that need telling apart.
	Title  string
	Header []string
	Rows   [][]string
}

func (t *table) add(cells ...string) { t.Rows = append(t.Rows, cells) }

// section is one part of the report: a heading, what it shows, its tables.
type section struct {
	ID, Title string
	Intro     string
	Tables    []table
	// Charts names the chart kinds the HTML adds to this section.
	Charts []string
}

func entryCells(e score.Entry) []string { return []string{e.Model, e.Condition} }

// convsText is the conversations cell: those in the denominators, then those left out
// (section 5.7): "12", "11 (1 failed)", "10 (1 failed, 1 unscored)".
//
// With repeats the count is of plays: "36 (3 repeats)", "35 (3 repeats; 1 failed)".
func convsText(e score.Entry) string {
	var out []string
	reps := ""
	if e.Repeatability != nil {
		reps = fmt.Sprintf("%d repeats", e.Repeatability.Repeats)
	}
	if e.Failed > 0 {
		out = append(out, fmt.Sprintf("%d failed", e.Failed))
	}
	if e.Unscored > 0 {
		out = append(out, fmt.Sprintf("%d unscored", e.Unscored))
	}
	switch {
	case len(out) == 0 && reps == "":
		return strconv.Itoa(e.Items)
	case reps == "":
		return fmt.Sprintf("%d (%s)", e.Items, strings.Join(out, ", "))
	case len(out) == 0:
		return fmt.Sprintf("%d (%s)", e.Items, reps)
	}
	return fmt.Sprintf("%d (%s; %s)", e.Items, reps, strings.Join(out, ", "))
}

// repeatsText states how rates pool the repeats (section 6.5); "" for a run played once.
func repeatsText(s score.Summary) string {
	if s.Repeats <= 1 {
		return ""
	}
	return fmt.Sprintf(" Repeats: every conversation was played %d times (repeats = %d), each repeat with its own seed; every rate pools all repeats, "+
		"so each event counts once per repeat in its denominator and conversations counts the plays (%d per conversation, less failed and unscored ones). "+
		"The Wilson interval treats the plays as independent, which the repeats of one conversation are not: the repeatability section shows the run-to-run agreement and spread.",
		s.Repeats, s.Repeats, s.Repeats)
}

// roleText is an entry's role as the tables show it; an entry without one (a summary
// written before roles existed) is under test.
func roleText(e score.Entry) string {
	if e.Role == "" {
		return score.RoleTest
	}
	return e.Role
}

// familyText states the statistics family (section 6.3) and its size.
func familyText(s score.Summary) string {
	f := s.Family
	var b strings.Builder
	if len(f.Models) == 0 {
		b.WriteString("No model is under test, so there are no model comparisons and no Spearman correlation.")
	} else {
		fmt.Fprintf(&b, "%d %s under test (%s): %d model comparisons, Bonferroni-corrected over %d; Spearman over %d model x condition entries.",
			len(f.Models), plural(len(f.Models), "model", "models"), strings.Join(f.Models, ", "), f.Comparisons, f.Comparisons, f.SpearmanEntries)
	}
	var base, ref, cal []string
	for _, m := range sortedKeys(f.Others) {
		switch f.Others[m] {
		case score.RoleReference:
			ref = append(ref, m)
		case score.RoleCalibration:
			cal = append(cal, m)
		default:
			base = append(base, m)
		}
	}
	if len(base) > 0 {
		fmt.Fprintf(&b, " %s, not in the family: %s.", plural(len(base), "Baseline", "Baselines"), strings.Join(base, ", "))
	}
	if len(ref) > 0 {
		fmt.Fprintf(&b, " %s, not in the family: %s.", plural(len(ref), "Reference", "References"), strings.Join(ref, ", "))
	}
	if len(cal) > 0 {
		fmt.Fprintf(&b, " %s, told the answers, not in the family: %s.", plural(len(cal), "Calibration model", "Calibration models"), strings.Join(cal, ", "))
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// sections builds every section of the report from the summary, in report order.
// ref, when not nil, adds the text reference section after the paired section.
func sections(s score.Summary, m Meta, ref *reference.Result) []section {
	p := s.Protocol
	var out []section
	out = append(out, mainSection(s), provenanceSection(s, m), labelsSection())
	if s.Repeats > 1 {
		out = append(out, repeatSection(s))
	}
	out = append(out, pairedSection(s))
	if ref != nil {
		out = append(out, referenceSection(*ref, m))
	}
	out = append(out, tOutcomeSection(s), accuracySection(s, m),
		silenceSection(s), yieldSection(s, p), positionSection(s), thirdSection(s),
		sweepSection(s), spearmanSection(s), comparisonSection(s))
	if len(s.Warnings) > 0 {
		t := table{Header: []string{"warning"}}
		for _, w := range s.Warnings {
			t.add(w)
		}
		out = append(out, section{ID: "warnings", Title: "Warnings", Intro: "Problems in the scored input that were worked around.", Tables: []table{t}})
	}
	return out
}

func mainSection(s score.Summary) section {
	t := table{Header: []string{"model", "role", "condition", "conversations"}}
	for _, mi := range score.MeasureTable {
		t.Header = append(t.Header, mi.Short)
	}
	for _, e := range s.Entries {
		row := []string{e.Model, roleText(e), e.Condition, convsText(e)}
		for _, mi := range score.MeasureTable {
			row = append(row, textfmt.Rate(e.Rate(mi.Key)))
		}
		t.add(row...)
	}
	intro := "Per model and condition, never one aggregate. Each cell: rate (successes/denominator) [Wilson 95% interval]. " +
		"Denominators: " + score.DenominatorsText(s.Protocol) + ". " +
		"Measures marked diag. are diagnostics, not scored. Conversations: those in the denominators; failed conversations (the model failed) " +
		"and unscored ones (the ASR or judge failed) are left out of every rate and counted in brackets. " + scheduleText(s.Protocol) + acousticsText(s.Acoustics) + " " + familyText(s) + repeatsText(s)
	return section{ID: "main", Title: "Main results", Intro: intro, Tables: []table{t}, Charts: []string{chartMeasures}}
}

// repeatSection is the run-to-run agreement and spread of every measure (section 6.5),
// for a run with repeats.
func repeatSection(s score.Summary) section {
	t := table{Header: []string{"model", "condition", "measure", "conversations compared", "decisions agreed", "rate per repeat", "min", "max", "sd"}}
	for _, e := range s.Entries {
		r := e.Repeatability
		if r == nil {
			continue
		}
		compared := strconv.Itoa(r.Compared)
		if r.Incomplete > 0 {
			compared += fmt.Sprintf(" (%d incomplete)", r.Incomplete)
		}
		for _, m := range r.Measures {
			var per []string
			for _, rate := range m.PerRepeat {
				if rate.Available {
					per = append(per, fmt.Sprintf("%.3f (%d/%d)", rate.Rate, rate.K, rate.N))
				} else {
					per = append(per, rate.Text)
				}
			}
			lo, hi, sd := "n/a", "n/a", "n/a"
			if m.Spread {
				lo, hi, sd = fmt.Sprintf("%.3f", m.Min), fmt.Sprintf("%.3f", m.Max), fmt.Sprintf("%.3f", m.SD)
			}
			t.add(e.Model, e.Condition, measureTitle(m.Measure), compared, m.AgreementText(), strings.Join(per, "; "), lo, hi, sd)
		}
	}
	return section{ID: "repeats", Title: fmt.Sprintf("Run-to-run agreement and spread (%d repeats)", s.Repeats),
		Intro: "Per model, condition and measure. Decisions agreed: of the events of the conversations scored in every repeat (incomplete ones, " +
			"failed, unscored or not played in some repeat, are not compared) that are in the measure's denominator in at least one repeat, " +
			"those on which every repeat decided alike (a success in all, a failure in all, or out of the denominator in all: accuracy counts only " +
			"answers given, yield only eligible events). Rate per repeat: each repeat's rate over its own scored conversations, with the main table's " +
			"denominators; the main table pools them. Min, max and sd (the sample standard deviation, n - 1) are over the repeats whose rate is " +
			"available (yield below min_eligible is not); n/a with fewer than two.",
		Tables: []table{t}}
}

func pairedSection(s score.Summary) section {
	t := table{Header: []string{"model", "measure", "pairs", "lost pairs", "explicit", "implicit", "b (explicit only)", "c (implicit only)", "difference", "p (exact McNemar)"}}
	for _, pr := range s.Paired {
		for _, pm := range score.PairedMeasureTable() {
			x := struct {
				name string
				m    score.McNemar
			}{pm.Short, pr.Test(pm.Key)}
			t.add(pr.Model, x.name, strconv.Itoa(pr.Pairs), strconv.Itoa(pr.Lost),
				textfmt.Paired(x.m.RateFirst, x.m.Units), textfmt.Paired(x.m.RateSecond, x.m.Units),
				strconv.Itoa(x.m.B), strconv.Itoa(x.m.C), textfmt.Signed(x.m.Difference), textfmt.P(x.m.P))
		}
	}
	pairs := "Per model, over the scenario pairs scored in both versions; lost pairs had a version that failed or is unscored. "
	if s.Repeats > 1 {
		pairs = fmt.Sprintf("Per model, over the scenario pairs scored in both versions, once per repeat (%d repeats): the explicit version of a repeat is paired "+
			"with the implicit version of the same repeat, so pairs count (pair, repeat) units and McNemar treats them as independent; lost pairs had a version "+
			"that failed or is unscored in that repeat. ", s.Repeats)
	}
	return section{ID: "paired", Title: "Explicit vs implicit (paired McNemar)",
		Intro: pairs +
			"b: pairs responding only in the explicit version; c: only in the implicit version; " +
			"difference = (b - c) / pairs; p = min(1, 2 P(X <= min(b, c))), X ~ Binomial(b + c, 1/2). Each model's test stands alone (no correction across models).",
		Tables: []table{t}}
}

func tOutcomeSection(s score.Summary) section {
	outcomes := []string{score.OutcomeFreshOnset, score.OutcomeAlreadySpeaking, score.OutcomeSilent}
	t := table{Header: []string{"model", "condition", "T turns"}}
	t.Header = append(t.Header, outcomes...)
	for _, e := range s.Entries {
		n := sum(e.TOutcomes)
		row := append(entryCells(e), strconv.Itoa(n))
		for _, o := range outcomes {
			row = append(row, countText(e.TOutcomes[o], n))
		}
		t.add(row...)
	}
	return section{ID: "t-outcomes", Title: "T outcome partition",
		Intro:  "Every T turn is exactly one of: a fresh onset (silent at tE, the end of T, and an onset in " + score.OnsetWindowRule + "), already speaking when T ended, or silent.",
		Tables: []table{t}, Charts: []string{chartTOutcomes}}
}

// unparseable counts judge verdicts that could not be parsed (they count as failures).
func unparseable(e score.Entry) (answers, silence int) {
	return e.AccuracyFailures[score.FailUnparseable], e.SilenceFailures[score.FailUnparseable]
}

// judgedWindows is the number of silence windows with model speech in them, the ones the
// judge classified: all windows less those without any speech (the 0 ms sweep passes).
func judgedWindows(e score.Entry) int {
	for _, tr := range e.SilenceSweep {
		if tr.ThresholdMS == 0 {
			return e.Silence.N - tr.Rate.K
		}
	}
	return e.Silence.N
}

func accuracySection(s score.Summary, m Meta) section {
	kinds := unionKeys(s.Entries, func(e score.Entry) map[string]int { return e.AccuracyFailures })
	t := table{Header: []string{"model", "condition", "accuracy"}}
	t.Header = append(t.Header, kinds...)
	for _, e := range s.Entries {
		row := append(entryCells(e), textfmt.Rate(e.Accuracy))
		for _, k := range kinds {
			row = append(row, countText(e.AccuracyFailures[k], e.Accuracy.N))
		}
		t.add(row...)
	}
	j := table{Header: []string{"model", "condition", "unparseable answer verdicts", "unparseable silence verdicts"}}
	for _, e := range s.Entries {
		a, sl := unparseable(e)
		j.add(e.Model, e.Condition, countText(a, e.Accuracy.N), countText(sl, judgedWindows(e)))
	}
	intro := "Accuracy is over T turns with response presence; failure kinds are out of that denominator. An unparseable verdict counts as wrong. " +
		"Unparseable silence verdicts are out of the windows with model speech, the ones the judge classified."
	if m.Judge != nil {
		intro += " Judge: " + pluginText(*m.Judge) + "."
	}
	if m.ASR != nil {
		intro += " ASR: " + pluginText(*m.ASR) + "."
	}
	return section{ID: "judge", Title: "Answer accuracy and judge verdicts", Intro: intro, Tables: []table{t, j}}
}

func silenceSection(s score.Summary) section {
	addressees := []string{protocol.AddresseeHuman, protocol.AddresseeDevice}
	for _, e := range s.Entries {
		if _, ok := e.SilenceByAddressee["unspecified"]; ok {
			addressees = append(addressees, "unspecified")
			break
		}
	}
	t := table{Header: []string{"model", "condition", "all windows", "N1", "N2", "N3"}}
	for _, a := range addressees {
		t.Header = append(t.Header, "N2 to "+a)
	}
	for _, e := range s.Entries {
		row := append(entryCells(e), textfmt.Rate(e.Silence))
		for _, l := range []string{protocol.LabelN1, protocol.LabelN2, protocol.LabelN3} {
			row = append(row, textfmt.Rate(e.SilenceByLabel[l]))
		}
		for _, a := range addressees {
			row = append(row, textfmt.Rate(e.SilenceByAddressee[a]))
		}
		t.add(row...)
	}
	kinds := unionKeys(s.Entries, func(e score.Entry) map[string]int { return e.SilenceFailures })
	f := table{Header: []string{"model", "condition", "failed windows"}}
	f.Header = append(f.Header, kinds...)
	for _, e := range s.Entries {
		row := append(entryCells(e), countText(e.Silence.N-e.Silence.K, e.Silence.N))
		for _, k := range kinds {
			row = append(row, countText(e.SilenceFailures[k], e.Silence.N))
		}
		f.add(row...)
	}
	return section{ID: "silence", Title: "Silence preservation by label and N2 addressee",
		Intro: "A window passes when no model speech overlaps it, or the judge classified the speech as a brief acknowledgement. " +
			"The second table counts failed windows by reason, out of all windows.",
		Tables: []table{t, f}, Charts: []string{chartSilenceLabels}}
}

func yieldSection(s score.Summary, p protocol.Params) section {
	titles := map[string]string{
		score.N4SpokeDuringQuestion: "spoke during question", score.N4NoOnsetInGap: "no onset in gap",
		score.N4NotSpeakingAtR: "not speaking at r", score.N4Yielded: "yielded", score.N4StillVoicing: "still voicing", score.N4Resumed: "resumed",
	}
	t := table{Header: []string{"model", "condition", "N4 events", "eligible", "yield (eligible)"}}
	for _, o := range score.N4Outcomes {
		t.Header = append(t.Header, titles[o])
	}
	t.Header = append(t.Header, "window response (diag.)")
	for _, e := range s.Entries {
		all := sum(e.N4Outcomes)
		row := append(entryCells(e), strconv.Itoa(all), countText(e.Yield.N, all), textfmt.Rate(e.Yield))
		for _, o := range score.N4Outcomes {
			row = append(row, countText(e.N4Outcomes[o], all))
		}
		row = append(row, textfmt.Rate(e.WindowResponse))
		t.add(row...)
	}
	return section{ID: "yield", Title: "Answering-window yield",
		Intro: fmt.Sprintf("Every N4 event falls in exactly one of six outcomes, counted out of all N4 events: the model spoke during the question, "+
			"did not start speaking in the gap, or was not speaking when the resolution began (these three are not eligible); or, eligible, "+
			"it yielded (silent at r + yield_deadline and through the observation end), was still voicing at the deadline, or resumed before the observation end. "+
			"The yield rate is yielded out of eligible, shown only with at least min_eligible = %d eligible events.", p.MinEligible),
		Tables: []table{t}}
}

func measureRow(prefix []string, ms score.Measures) []string {
	for _, mi := range score.ScoredMeasureTable() {
		prefix = append(prefix, textfmt.Rate(ms.Rate(mi.Key)))
	}
	return prefix
}

func scoredHeader(first ...string) []string {
	h := append([]string{}, first...)
	for _, mi := range score.ScoredMeasureTable() {
		h = append(h, mi.Short)
	}
	return h
}

func positionSection(s score.Summary) section {
	t := table{Header: scoredHeader("model", "condition", "T position")}
	for _, e := range s.Entries {
		seen := map[string]bool{}
		var order []string
		for _, pos := range protocol.TPositions {
			if _, ok := e.ByTPosition[pos]; ok {
				order = append(order, pos)
				seen[pos] = true
			}
		}
		for _, pos := range sortedKeys(e.ByTPosition) {
			if !seen[pos] {
				order = append(order, pos)
			}
		}
		for _, pos := range order {
			t.add(measureRow([]string{e.Model, e.Condition, pos}, e.ByTPosition[pos])...)
		}
	}
	return section{ID: "by-position", Title: "Scored measures by T position",
		Intro:  "Every scored measure over the conversations whose T turn sits in each position bucket (all events of those conversations count).",
		Tables: []table{t}}
}

var thirdNames = [3]string{"first third", "second third", "last third"}

func thirdSection(s score.Summary) section {
	t := table{Header: scoredHeader("model", "condition", "elapsed time")}
	for _, e := range s.Entries {
		for i, ms := range e.ByThird {
			t.add(measureRow([]string{e.Model, e.Condition, thirdNames[i]}, ms)...)
		}
	}
	return section{ID: "by-third", Title: "Scored measures by elapsed-time third",
		Intro:  "Each event is placed by the start of its turn in thirds of the span from the first human turn's start to the last one's end (the preamble and tail do not count).",
		Tables: []table{t}}
}

func sweepSection(s score.Summary) section {
	t := table{Header: []string{"model", "condition", "judged"}}
	for _, thr := range score.SweepThresholdsMS {
		t.Header = append(t.Header, fmt.Sprintf("fails above %g ms", thr))
	}
	for _, e := range s.Entries {
		row := append(entryCells(e), textfmt.Rate(e.Silence))
		for _, thr := range score.SweepThresholdsMS {
			cell := "n/a"
			for _, tr := range e.SilenceSweep {
				if tr.ThresholdMS == thr {
					cell = textfmt.Rate(tr.Rate)
				}
			}
			row = append(row, cell)
		}
		t.add(row...)
	}
	return section{ID: "sweep", Title: "Silence preservation by duration threshold",
		Intro:  "Robustness check without a judge: " + score.SweepRule + ".",
		Tables: []table{t}, Charts: []string{chartSweep}}
}

func spearmanSection(s score.Summary) section {
	t := table{Header: []string{"correlation", "rho", "entries"}}
	rho := "n/a (undefined: fewer than two entries or a constant rate)"
	if s.Spearman.Available {
		rho = fmt.Sprintf("%.3f", s.Spearman.Rho)
	}
	t.add("Spearman: response presence vs fresh-onset rate", rho, strconv.Itoa(s.Spearman.N))
	return section{ID: "spearman", Title: "Presence vs fresh onset (Spearman)",
		Intro:  "Rank correlation across the model x condition entries of the models under test: does responding at all go with responding with a fresh onset? " + familyText(s),
		Tables: []table{t}, Charts: []string{chartSpearman}}
}

func comparisonSection(s score.Summary) section {
	t := table{Header: []string{"condition", "measure", "model A", "model B", "pairs", "rate A", "rate B", "A - B [bootstrap 95% CI]", "b (A only)", "c (B only)", "p (McNemar)", "p (Bonferroni)"}}
	for _, c := range s.Comparisons {
		t.add(c.Condition, measureTitle(c.Measure), c.A, c.B, strconv.Itoa(c.Pairs), textfmt.Rate(c.RateA), textfmt.Rate(c.RateB),
			comparisonDifference(c), strconv.Itoa(c.Test.B), strconv.Itoa(c.Test.C), textfmt.P(c.Test.P), textfmt.P(c.PAdjusted))
	}
	resamples := s.Protocol.BootstrapResamples
	intro := fmt.Sprintf("Every pair of models under test on every scored measure within a condition, on the scenario pairs both were scored on. "+
		"The interval resamples whole scenario pairs (%d resamples, seed %d); the exact McNemar test pairs the same events; "+
		"p is Bonferroni-corrected over all %d comparisons. ", resamples, s.Seed, len(s.Comparisons)) + familyText(s)
	if s.Repeats > 1 {
		intro += " With repeats, rates pool all repeats, a scenario pair is resampled with all its repeats (one cluster), and McNemar pairs the same event of the same repeat."
	}
	if len(s.Comparisons) == 0 {
		intro = "No comparisons: fewer than two models under test were scored in a condition. " + familyText(s)
	}
	return section{ID: "comparisons", Title: "Model comparisons", Intro: intro, Tables: []table{t}}
}

func pluginText(p provenance.Plugin) string {
	s := p.Name
	if p.Plugin != "" && p.Plugin != p.Name {
		s += " (" + p.Plugin + ")"
	}
	if p.Version != "" {
		s += " " + p.Version
	}
	for _, k := range sortedKeys(p.Identity) {
		s += fmt.Sprintf(", %s=%s", k, p.Identity[k])
	}
	if p.Hash != "" {
		s += ", hash " + p.Hash
	}
	return s
}

// provenanceSection says what the results are of; it follows the main results.
func provenanceSection(s score.Summary, m Meta) section {
	return section{ID: "provenance", Title: "Provenance",
		Intro:  "What these results are of: the run, the harness, the dataset, the models and scorers with their identities, and the protocol values they were scored under.",
		Tables: []table{metaTable(s, m)}}
}

// labelsSection defines the turn labels the tables and the explorer name, as
// docs/protocol.md section 2.1 does.
func labelsSection() section {
	t := table{Header: []string{"label", "meaning", "Aria should"}}
	for _, l := range protocol.LabelMeanings {
		t.add(l.Label, l.Meaning, l.Should)
	}
	return section{ID: "labels", Title: "The labels",
		Intro: "Every human turn has one label (docs/protocol.md section 2.1). N2 splits by addressee into N2 to a human and N2 to a device. " +
			"An N4 event is an N4_Q with its N4_R; it is eligible for the yield rate only when the model was silent during the question, started in the gap and was speaking at the start of N4_R. " +
			"One that is not eligible is excluded: in no rate, neither a success nor a failure; the N4 outcome table counts it.",
		Tables: []table{t}}
}

// metaTable is the provenance of the results: the Provenance section, and the meta rows
// of the CSV.
func metaTable(s score.Summary, m Meta) table {
	t := table{Header: []string{"field", "value"}}
	if m.Partial != "" {
		t.add("PARTIAL RUN", m.Partial)
	}
	t.add("run", orDash(m.Run))
	t.add("date", orDash(m.Date))
	h := orDash(m.Harness.Version)
	if m.Harness.Commit != "" {
		h += ", commit " + m.Harness.Commit
		if m.Harness.Modified {
			h += " (modified)"
		}
	}
	t.add("harness", h)
	d := orDash(m.Dataset.Name)
	if m.Dataset.Version != "" {
		d += " " + m.Dataset.Version
	}
	if m.Dataset.Hash != "" {
		d += ", hash " + m.Dataset.Hash
	}
	if m.Dataset.Scenarios > 0 {
		d += fmt.Sprintf(", %d scenarios", m.Dataset.Scenarios)
	}
	if m.Dataset.Acoustics != "" {
		d += ", room " + m.Dataset.Acoustics
	}
	t.add("dataset", d)
	for _, p := range m.Models {
		t.add("model", pluginText(p))
	}
	t.add("statistics family", familyText(s))
	if m.Judge != nil {
		t.add("judge", pluginText(*m.Judge))
	}
	if m.ASR != nil {
		t.add("ASR", pluginText(*m.ASR))
	}
	if m.JudgeVerdicts > 0 || m.UnparseableVerdicts > 0 {
		t.add("judge verdicts", fmt.Sprintf("%d, of which %d unparseable (counted as failures)", m.JudgeVerdicts, m.UnparseableVerdicts))
	}
	for _, u := range m.Unscored {
		t.add("unscored conversation", u+" (in no denominator; score again once the service works)")
	}
	for _, u := range m.Missing {
		t.add("missing conversation", u+" (planned, never played or not merged; in no denominator)")
	}
	if m.StaleItems > 0 {
		t.add("stale items", fmt.Sprintf("%d items of earlier plans are kept in the run directory and not counted", m.StaleItems))
	}
	for _, name := range sortedKeys(m.FailedConversations) {
		t.add("failed conversations", fmt.Sprintf("%s: %d (not scored, in no denominator)", name, m.FailedConversations[name]))
	}
	p := m.Protocol
	if p == (protocol.Params{}) {
		p = s.Protocol
	}
	t.add("protocol", paramsText(p))
	if p != s.Protocol {
		t.add("scored with", paramsText(s.Protocol))
	}
	if m.VAD != (protocol.VAD{}) {
		v := m.VAD
		t.add("VAD", fmt.Sprintf("%s, threshold %g (end below %g), min_speech %g s, merge_pause %g s, speech_pad %g s",
			orDash(v.Model), v.Threshold, v.EffectiveNegThreshold(), v.MinSpeech, v.MergePause, v.SpeechPad))
	}
	return t
}

// scheduleText names the gap profile the conversations were played with (protocol.md
// sections 3.3 and 3.6): how much a long pause can give a request away depends on it.
func scheduleText(p protocol.Params) string {
	switch {
	case p.Natural():
		return "Gaps: natural (each ordinary turn followed by the dataset's own gap, gap_after_s; pause length is not a cue)."
	case p.TimingControl:
		return "Gaps: timing control (every ordinary turn followed by a request-length pause)."
	default:
		return fmt.Sprintf("Gaps: paper (turn_gap %g s after every ordinary turn; only T and N4_Q are followed by a long pause).", p.TurnGap)
	}
}

// acousticsText names the room the conversations were built in (docs/dataset.md,
// "Rooms"), with a space before it; nothing for clean audio.
func acousticsText(preset string) string {
	if preset == "" || preset == room.Clean {
		return ""
	}
	if p, ok := room.ByName(preset); ok {
		return fmt.Sprintf(" Room: %s (%s).", preset, p.About)
	}
	return fmt.Sprintf(" Room: %s.", preset)
}

func paramsText(p protocol.Params) string {
	gaps := "paper"
	if p.Natural() {
		gaps = "natural"
	}
	return fmt.Sprintf("gap_profile %s, timing_control %v, ", gaps, p.TimingControl) + fmt.Sprintf("preamble_gap %g s, turn_gap %g s, t_onset_window %g s, t_end_silence %g s, t_wait_cap %g s, n4_gap %g s, "+
		"yield_deadline %g s, yield_observe %g s, min_eligible %d, tail %g s, bootstrap %d resamples",
		p.PreambleGap, p.TurnGap, p.TOnsetWindow, p.TEndSilence, p.TWaitCap, p.N4Gap, p.YieldDeadline, p.YieldObserve,
		p.MinEligible, p.Tail, p.BootstrapResamples)
}

// comparisonDifference is the bootstrap difference, or n/a when either rate is itself
// n/a (yield below min_eligible): a difference of rates not shown would be read as one.
func comparisonDifference(c score.Comparison) string {
	if !c.RateA.Available || !c.RateB.Available {
		return "n/a (a rate is n/a)"
	}
	return differenceText(c.Difference)
}

// referenceSection shows the text reference run (protocol section 7) in the report's
// table format: per run, the main table and the paired McNemar table.
func referenceSection(r reference.Result, m Meta) section {
	intro := fmt.Sprintf("An LLM (%s) reads the speaker-attributed transcript turn by turn and decides RESPOND or SILENT; %s grades its answers to T. "+
		"Scored on the same items as the speech models, without timing: response on T, accuracy of answers given, silence on N1-N3 (N4 yield is not measured). "+
		"An unparseable decision is a failure wherever it is scored. Dataset %s",
		referencePlugin(r.LLM), referencePlugin(r.Judge), orDash(r.Dataset))
	switch {
	case r.DatasetHash == "":
		intro += " (read from its scenario files, no hash)."
	case m.Dataset.Hash != "" && r.DatasetHash != m.Dataset.Hash:
		intro += fmt.Sprintf(", hash %s: not the dataset of this run (%s), so the scenarios may differ.", r.DatasetHash, m.Dataset.Hash)
	default:
		intro += ", hash " + r.DatasetHash + "."
	}
	intro += fmt.Sprintf(" Prompt %s.", orDash(r.PromptHash))
	if g := r.Agreement; g != nil {
		intro += fmt.Sprintf(" Runs 1 and 2 agree on %d of %d decisions (%.1f%%).", g.Agree, g.Turns, 100*g.Rate)
	}
	sec := section{ID: "reference", Title: "Text reference (transcript-conditioned LLM)", Intro: intro}
	for _, t := range reference.Tables(r) {
		sec.Tables = append(sec.Tables, table{Title: t.Title, Header: t.Header, Rows: t.Rows})
	}
	if len(r.Runs) == 0 {
		sec.Tables = append(sec.Tables, table{Header: []string{"model", "condition"}})
	}
	return sec
}

func referencePlugin(p provenance.Plugin) string {
	s := orDash(p.Name)
	if p.Plugin != "" {
		s += " (" + p.Plugin
		if p.Version != "" {
			s += " " + p.Version
		}
		s += ")"
	}
	return s
}
