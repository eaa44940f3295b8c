package report

import (
	"bytes"
	"encoding/csv"
	"strconv"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
)

// CSVHeader is the header of results.csv: one long table, one row per number reported.
// docs/report.md says which columns each section fills.
var CSVHeader = []string{
	"section", "model", "model_b", "condition", "measure", "group", "pairs",
	"k", "n", "rate", "lo", "hi", "available",
	"k_b", "n_b", "rate_b", "lo_b", "hi_b", "available_b",
	"b", "c", "difference", "diff_lo", "diff_hi", "p", "p_adjusted", "value",
}

// CSV sections.
const (
	SecMeta               = "meta"
	SecRate               = "rate"
	SecSilenceByLabel     = "silence_by_label"
	SecSilenceByAddressee = "silence_by_addressee"
	SecByTPosition        = "by_t_position"
	SecByThird            = "by_third"
	SecSilenceSweep       = "silence_sweep"
	SecTOutcome           = "t_outcome"
	SecAccuracyFailure    = "accuracy_failure"
	SecSilenceFailure     = "silence_failure"
	SecN4Outcome          = "n4_outcome"
	SecConversations      = "conversations"
	SecFamily             = "family"
	SecPaired             = "paired"
	SecComparison         = "comparison"
	SecSpearman           = "spearman"
	// With repeats (protocol section 6.5).
	SecRepeatAgreement = "repeat_agreement"
	SecRepeatRate      = "repeat_rate"
	SecRepeatSpread    = "repeat_spread"
)

func col(name string) int {
	for i, h := range CSVHeader {
		if h == name {
			return i
		}
	}
	panic("report: no CSV column " + name)
}

// csvRow is one row under construction, addressed by column name.
type csvRow []string

func newRow(section string) csvRow {
	r := make(csvRow, len(CSVHeader))
	r[0] = section
	return r
}

func (r csvRow) set(name, v string) csvRow { r[col(name)] = v; return r }

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// rate fills k, n, rate, lo, hi, available (suffix "" or "_b"); rate, lo and hi stay
// empty when the rate is not available, so n/a never reads as 0.
func (r csvRow) rate(rt score.Rate, suffix string) csvRow {
	r.set("k"+suffix, strconv.Itoa(rt.K)).set("n"+suffix, strconv.Itoa(rt.N)).set("available"+suffix, strconv.FormatBool(rt.Available))
	if rt.Available {
		r.set("rate"+suffix, num(rt.Rate)).set("lo"+suffix, num(rt.Lo)).set("hi"+suffix, num(rt.Hi))
	}
	return r
}

func (r csvRow) entry(e score.Entry) csvRow {
	return r.set("model", e.Model).set("condition", e.Condition)
}

// count fills k and n with a count out of a total.
func (r csvRow) count(k, n int) csvRow {
	return r.set("k", strconv.Itoa(k)).set("n", strconv.Itoa(n))
}

func (r csvRow) mcnemar(m score.McNemar) csvRow {
	return r.set("b", strconv.Itoa(m.B)).set("c", strconv.Itoa(m.C)).set("p", num(m.P))
}

func csvBytes(s score.Summary, m Meta) ([]byte, error) {
	var rows [][]string
	add := func(r csvRow) { rows = append(rows, r) }
	for _, kv := range metaTable(s, m).Rows {
		add(newRow(SecMeta).set("measure", kv[0]).set("group", kv[1]))
	}
	for _, e := range s.Entries {
		for _, mi := range score.MeasureTable {
			add(newRow(SecRate).entry(e).set("measure", mi.Key).rate(e.Rate(mi.Key), ""))
		}
		for _, x := range []struct {
			group string
			n     int
		}{{"scored", e.Items}, {"failed", e.Failed}, {"unscored", e.Unscored}} {
			add(newRow(SecConversations).entry(e).set("group", x.group).set("value", strconv.Itoa(x.n)))
		}
		for _, l := range []string{protocol.LabelN1, protocol.LabelN2, protocol.LabelN3} {
			if rt, ok := e.SilenceByLabel[l]; ok {
				add(newRow(SecSilenceByLabel).entry(e).set("measure", score.MeasureSilence).set("group", l).rate(rt, ""))
			}
		}
		for _, a := range sortedKeys(e.SilenceByAddressee) {
			add(newRow(SecSilenceByAddressee).entry(e).set("measure", score.MeasureSilence).set("group", a).rate(e.SilenceByAddressee[a], ""))
		}
		for _, pos := range sortedKeys(e.ByTPosition) {
			for _, r := range measureRows(SecByTPosition, e, pos, e.ByTPosition[pos]) {
				add(r)
			}
		}
		for i, ms := range e.ByThird {
			for _, r := range measureRows(SecByThird, e, strconv.Itoa(i+1), ms) {
				add(r)
			}
		}
		for _, tr := range e.SilenceSweep {
			add(newRow(SecSilenceSweep).entry(e).set("measure", score.MeasureSilence).set("group", num(tr.ThresholdMS)).rate(tr.Rate, ""))
		}
		counts := []struct {
			section string
			m       map[string]int
			n       int
		}{
			{SecTOutcome, e.TOutcomes, sum(e.TOutcomes)},
			{SecAccuracyFailure, e.AccuracyFailures, e.Accuracy.N},
			{SecSilenceFailure, e.SilenceFailures, e.Silence.N},
			{SecN4Outcome, e.N4Outcomes, sum(e.N4Outcomes)},
		}
		for _, c := range counts {
			for _, k := range sortedKeys(c.m) {
				add(newRow(c.section).entry(e).set("group", k).count(c.m[k], c.n))
			}
		}
		for _, r := range repeatRows(e) {
			add(r)
		}
	}
	for _, m := range s.Family.Models {
		add(newRow(SecFamily).set("model", m).set("group", score.RoleTest))
	}
	for _, m := range sortedKeys(s.Family.Others) {
		add(newRow(SecFamily).set("model", m).set("group", s.Family.Others[m]))
	}
	add(newRow(SecFamily).set("measure", "comparisons").set("value", strconv.Itoa(s.Family.Comparisons)))
	add(newRow(SecFamily).set("measure", "spearman_entries").set("value", strconv.Itoa(s.Family.SpearmanEntries)))
	for _, pr := range s.Paired {
		for _, pm := range score.PairedMeasureTable() {
			x := struct {
				measure string
				m       score.McNemar
			}{pm.Key, pr.Test(pm.Key)}
			add(newRow(SecPaired).set("model", pr.Model).set("condition", protocol.Explicit+"-"+protocol.Implicit).
				set("measure", x.measure).set("pairs", strconv.Itoa(pr.Pairs)).set("n", strconv.Itoa(x.m.Units)).
				set("value", strconv.Itoa(pr.Lost)).
				set("rate", num(x.m.RateFirst)).set("rate_b", num(x.m.RateSecond)).
				set("difference", num(x.m.Difference)).mcnemar(x.m))
		}
	}
	for _, c := range s.Comparisons {
		r := newRow(SecComparison).set("model", c.A).set("model_b", c.B).set("condition", c.Condition).
			set("measure", c.Measure).set("pairs", strconv.Itoa(c.Pairs)).
			rate(c.RateA, "").rate(c.RateB, "_b").mcnemar(c.Test).set("p_adjusted", num(c.PAdjusted))
		if c.Difference.OK {
			r.set("difference", num(c.Difference.Estimate)).set("diff_lo", num(c.Difference.Lo)).set("diff_hi", num(c.Difference.Hi))
		}
		add(r)
	}
	sp := newRow(SecSpearman).set("measure", "presence_vs_fresh_onset").set("n", strconv.Itoa(s.Spearman.N)).
		set("available", strconv.FormatBool(s.Spearman.Available))
	if s.Spearman.Available {
		sp.set("value", num(s.Spearman.Rho))
	}
	add(sp)

	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write(CSVHeader); err != nil {
		return nil, err
	}
	if err := w.WriteAll(rows); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func measureRows(section string, e score.Entry, group string, ms score.Measures) []csvRow {
	var rows []csvRow
	for _, mi := range score.ScoredMeasureTable() {
		rows = append(rows, newRow(section).entry(e).set("group", group).set("measure", mi.Key).rate(ms.Rate(mi.Key), ""))
	}
	return rows
}

// repeatRows are an entry's run-to-run rows (section 6.5); none for a single play.
func repeatRows(e score.Entry) []csvRow {
	r := e.Repeatability
	if r == nil {
		return nil
	}
	var rows []csvRow
	for _, m := range r.Measures {
		a := newRow(SecRepeatAgreement).entry(e).set("measure", m.Measure).count(m.Agreed, m.Decisions).
			set("available", strconv.FormatBool(m.Available)).set("value", strconv.Itoa(r.Compared)).set("group", "incomplete="+strconv.Itoa(r.Incomplete))
		if m.Available {
			a.set("rate", num(m.Agreement))
		}
		rows = append(rows, a)
		for i, rt := range m.PerRepeat {
			rows = append(rows, newRow(SecRepeatRate).entry(e).set("measure", m.Measure).set("group", strconv.Itoa(i)).rate(rt, ""))
		}
		if m.Spread {
			for _, x := range []struct {
				name string
				v    float64
			}{{"min", m.Min}, {"max", m.Max}, {"sd", m.SD}} {
				rows = append(rows, newRow(SecRepeatSpread).entry(e).set("measure", m.Measure).set("group", x.name).set("value", num(x.v)))
			}
		}
	}
	return rows
}
