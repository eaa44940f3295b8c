package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/score/textfmt"
	"github.com/duplexmpe/duplexmpe/core/stats"
)

func measureTitle(key string) string { return score.MeasureTitle(key) }

// countText is a count out of a total with its share: "12/20 (0.600)".
func countText(k, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d/0", k)
	}
	return fmt.Sprintf("%d/%d (%.3f)", k, n, float64(k)/float64(n))
}

func differenceText(d stats.Difference) string {
	if !d.OK {
		return "n/a"
	}
	return fmt.Sprintf("%s [%s, %s]", textfmt.Signed(d.Estimate), textfmt.Signed(d.Lo), textfmt.Signed(d.Hi))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unionKeys lists every key used by any entry's map, sorted, with preferred keys first in
// their given order.
func unionKeys(entries []score.Entry, get func(score.Entry) map[string]int, preferred ...string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range preferred {
		seen[k] = true
		out = append(out, k)
	}
	var rest []string
	for _, e := range entries {
		for k := range get(e) {
			if !seen[k] {
				seen[k] = true
				rest = append(rest, k)
			}
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

func sum(m map[string]int) int {
	t := 0
	for _, v := range m {
		t += v
	}
	return t
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
