package report

import (
	"github.com/duplexmpe/duplexmpe/core/report/viewer"
	"strconv"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
)

// cellFilter is the explorer view behind one table cell: the events its k/n counts (or,
// for a cell that is not a rate, the conversations of its row). It reads the table's
// own header and row, so a table added later links to its row's conversations without
// any change here; ok is false for cells with nothing behind them in this run (the text
// reference, warnings).
func cellFilter(sectionID string, header, row []string, col int) (viewer.Filter, bool) {
	switch sectionID {
	case "reference", "warnings", "provenance", "labels":
		return viewer.Filter{}, false
	}
	get := func(name string) string {
		for i, h := range header {
			if h == name && i < len(row) {
				return row[i]
			}
		}
		return ""
	}
	f := viewer.Filter{Model: get("model"), Condition: get("condition")}
	if col >= len(header) {
		return f, true
	}
	h := header[col]
	if m := measureByShort(get("measure")); m != "" {
		f.Measure = m // the paired and comparison tables name the measure in a column
	}
	switch sectionID {
	case "paired":
		// Over the pairs the model has both versions of.
		f.Paired = "1"
		switch h {
		case protocol.Explicit, protocol.Implicit:
			f.Condition = h
		}
		return f, true
	case "comparisons":
		// Over the pairs both models were scored on in the condition.
		a, b := get("model A"), get("model B")
		switch h {
		case "model A", "rate A":
			f.Model, f.With = a, b
		case "model B", "rate B":
			f.Model, f.With = b, a
		default:
			f.Model, f.With = a+","+b, a+","+b
		}
		return f, true
	case "by-position":
		f.Position = get("T position")
	case "by-third":
		for i, name := range thirdNames {
			if get("elapsed time") == name {
				f.Third = strconv.Itoa(i)
			}
		}
	}
	if m := measureByShort(h); m != "" {
		f.Measure = m
		return f, true
	}
	switch sectionID {
	case "t-outcomes":
		f.Measure = score.MeasureFreshOnset
		switch h {
		case score.OutcomeFreshOnset, score.OutcomeAlreadySpeaking, score.OutcomeSilent:
			f.Outcome = h
		}
	case "judge":
		switch h {
		case "model", "condition":
		case "unparseable answer verdicts":
			f.Measure, f.Outcome = score.MeasureAccuracy, score.FailUnparseable
		case "unparseable silence verdicts":
			f.Measure, f.Outcome = score.MeasureSilence, score.FailUnparseable
		default: // an accuracy failure kind
			f.Measure, f.Outcome = score.MeasureAccuracy, h
		}
	case "silence":
		switch {
		case h == "model" || h == "condition":
		case h == "all windows":
			f.Measure = score.MeasureSilence
		case h == protocol.LabelN1 || h == protocol.LabelN2 || h == protocol.LabelN3:
			f.Measure, f.Label = score.MeasureSilence, h
		case strings.HasPrefix(h, "N2 to "):
			f.Measure, f.Label, f.Addressee = score.MeasureSilence, protocol.LabelN2, strings.TrimPrefix(h, "N2 to ")
		case h == "failed windows":
			f.Measure, f.Result = score.MeasureSilence, "fail"
		default: // a failure kind
			f.Measure, f.Outcome = score.MeasureSilence, h
		}
	case "yield":
		switch h {
		case "N4 events":
			f.Measure = viewer.MeasureN4Events
		case "eligible", "yield (eligible)":
			f.Measure = score.MeasureYield
		case "window response (diag.)":
			f.Measure = score.MeasureWindowResponse
		default: // an outcome of the N4 partition, as yieldSection titles it
			f.Measure, f.Outcome = viewer.MeasureN4Events, n4OutcomeByTitle[h]
		}
	case "sweep":
		if h == "judged" {
			f.Measure = score.MeasureSilence
		}
		for _, thr := range score.SweepThresholdsMS {
			if h == "fails above "+strconv.FormatFloat(thr, 'g', -1, 64)+" ms" {
				f.Measure = viewer.SweepKey(thr)
			}
		}
	}
	return f, true
}

// n4OutcomeByTitle reads the yield table's column titles back into N4 outcomes
// (TestEveryCellLinksToTheEventsItCounts fails when the two disagree).
var n4OutcomeByTitle = map[string]string{
	"spoke during question": score.N4SpokeDuringQuestion, "no onset in gap": score.N4NoOnsetInGap,
	"not speaking at r": score.N4NotSpeakingAtR, "yielded": score.N4Yielded, "still voicing": score.N4StillVoicing, "resumed": score.N4Resumed,
}

// measureByShort is the measure a column title names, or "".
func measureByShort(h string) string {
	for _, m := range score.MeasureTable {
		if h == m.Short {
			return m.Key
		}
	}
	return ""
}

// measureShortName is a measure key as the explorer's rows name it.
func measureShortName(key string) string {
	if n, ok := shortNames[key]; ok {
		return n
	}
	return key
}

var shortNames = func() map[string]string {
	m := map[string]string{}
	for _, kv := range measureNames() {
		m[kv[0]] = strings.TrimSuffix(strings.TrimPrefix(kv[1], "silence, "), " (diag.)")
	}
	return m
}()

// measureNames are the explorer's measure choices, in report order.
func measureNames() [][2]string {
	out := [][2]string{}
	for _, m := range score.MeasureTable {
		out = append(out, [2]string{m.Key, m.Short})
	}
	out = append(out, [2]string{viewer.MeasureN4Events, "N4 events (yielded passes)"})
	for _, thr := range score.SweepThresholdsMS {
		out = append(out, [2]string{viewer.SweepKey(thr), "silence, fails above " + strconv.FormatFloat(thr, 'g', -1, 64) + " ms"})
	}
	return out
}
