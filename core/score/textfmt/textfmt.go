// Package textfmt is how every table of the harness writes its numbers: rates with their
// counts and Wilson intervals, paired rates, signed differences and p values. The report
// and the text reference track both use it, so their tables read alike.
package textfmt

import (
	"fmt"
	"math"

	"github.com/duplexmpe/duplexmpe/core/score"
)

// Rate is "0.950 (19/20) [0.764, 0.991]", or the summary's "n/a (n=k)" when the rate
// is not available (no events, or yield below min_eligible eligible events).
func Rate(r score.Rate) string {
	if !r.Available {
		if r.Text != "" {
			return r.Text
		}
		return fmt.Sprintf("n/a (n=%d)", r.N)
	}
	return fmt.Sprintf("%.3f (%d/%d) %s", r.Rate, r.K, r.N, Interval(r))
}

// Interval is a rate's Wilson interval: "[0.764, 0.991]".
func Interval(r score.Rate) string {
	return fmt.Sprintf("[%.3f, %.3f]", r.Lo, r.Hi)
}

// Paired is a paired rate with its count: the rate times the pairs is a whole number.
func Paired(rate float64, units int) string {
	if units == 0 {
		return "n/a (n=0)"
	}
	k := int(rate*float64(units) + 0.5)
	return fmt.Sprintf("%.3f (%d/%d)", rate, k, units)
}

// Signed is a difference with its sign, never "-0.000".
func Signed(v float64) string {
	if math.Abs(v) < 0.0005 {
		v = 0
	}
	return fmt.Sprintf("%+.3f", v)
}

// P is a p value: "n/a" for NaN, scientific below 0.001.
func P(p float64) string {
	switch {
	case math.IsNaN(p):
		return "n/a"
	case p != 0 && p < 0.001:
		return fmt.Sprintf("%.1e", p)
	default:
		return fmt.Sprintf("%.3f", p)
	}
}
