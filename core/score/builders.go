package score

import "github.com/duplexmpe/duplexmpe/core/protocol"

// NewRate is k successes of n as every table reports it: the rate, its Wilson 95%
// interval and its text, "n/a (n=0)" when n = 0. Other tracks (the text reference of
// core/reference) build their rates with it, so that the same counts read the same
// everywhere.
func NewRate(k, n int) Rate { return newRate(k, n, 0) }

// NewMcNemar is the exact McNemar test of b first-only and c second-only successes over
// units pairs, with the success rates of each side (firstK, secondK successes).
func NewMcNemar(b, c, units, firstK, secondK int) McNemar {
	return newMcNemar(b, c, units, firstK, secondK)
}

// CompareItems compares two sets of scored items of one condition on one measure the
// way the report compares two models (section 6): paired on the scenario pairs both
// hold and within them the same turns, exact McNemar over the units both count, and a
// cluster bootstrap of the difference. `duplexmpe compare` uses it to set two scorings
// (two judges, two runs) side by side; PAdjusted is left 0 (no family is corrected).
func CompareItems(cond, measure, nameA, nameB string, a, b []Scored, p protocol.Params, seed uint64) Comparison {
	return compare(cond, measure, nameA, nameB, a, b, p, seed)
}
