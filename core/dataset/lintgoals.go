package dataset

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// Goals are a release's declared construction shares (open v2's grid.json, issue 28 item
// 2): what its assignment table drew and what `dataset lint` holds the finished set to.
// Shares are percent of pairs. A grid without goals (open v1) keeps v1's rule instead:
// every scenario holds an N1, an N2 to a human, an N2 to a device and an N3.
type Goals struct {
	// TolerancePoints is how far a declared share may be missed, in percentage points.
	TolerancePoints float64 `json:"tolerance_points"`
	// Tasks are the request kinds' shares (Scenario.Task); each kind must occur, none
	// above MaxTaskShare.
	Tasks        map[string]float64 `json:"tasks"`
	MaxTaskShare float64            `json:"max_task_share"`
	// MinNonNumeric is the least share of golds that are not quantities (NonNumeric).
	MinNonNumeric float64 `json:"min_non_numeric"`
	// MaxYesNo is the most share of yes/no golds; they must also be balanced within one.
	MaxYesNo float64 `json:"max_yes_no"`
	// Addressing is the explicit T's addressing forms' shares; MaxOpening caps "opening".
	Addressing map[string]float64 `json:"addressing"`
	MaxOpening float64            `json:"max_opening"`
	// Inventory is, per kind of turn (InventoryKinds), the share of pairs holding 0, 1,
	// 2 ... of them.
	Inventory map[string]map[string]float64 `json:"inventory"`
	// MinN4Pairs is the least share of pairs with an N4 event.
	MinN4Pairs float64 `json:"min_n4_pairs"`
	// HardNegatives is the least share of pairs holding each tag (TurnTags).
	HardNegatives map[string]float64 `json:"hard_negatives"`
	// MaxN3Ellipsis is the most share of N3 turns marked with "...".
	MaxN3Ellipsis float64 `json:"max_n3_ellipsis"`
	// TPositions are the shares of T's position buckets (TBucket) the assignment drew,
	// replacing v1's rule of three equal buckets.
	TPositions map[string]float64 `json:"t_positions,omitempty"`
}

// InventoryKinds are the kinds of turn a pair's inventory counts, as Goals.Inventory keys them.
var InventoryKinds = map[string]func(t Turn) bool{
	"n1":        func(t Turn) bool { return t.Label == protocol.LabelN1 },
	"n2_device": func(t Turn) bool { return t.Label == protocol.LabelN2 && t.Addressee == protocol.AddresseeDevice },
	"n3":        func(t Turn) bool { return t.Label == protocol.LabelN3 },
	"n4":        func(t Turn) bool { return t.Label == protocol.LabelN4Q },
}

// NonNumeric reports whether a gold answer is no quantity: a name or text, a yes or no,
// or a code with a letter in it.
func NonNumeric(s *Scenario) bool {
	switch s.AnswerType {
	case "name", "text", "yes_no":
		return true
	case "code":
		return strings.IndexFunc(s.GoldAnswer, func(r rune) bool { return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' }) >= 0
	}
	return false
}

// lintGoals checks the explicit versions of whole pairs against the declared goals.
func lintGoals(g *Goals, explicits []Scenario, add func(name, value, goal string, pass bool, detail string)) {
	n := len(explicits)
	share := func(k int) float64 {
		if n == 0 {
			return 0
		}
		return 100 * float64(k) / float64(n)
	}
	tol := g.TolerancePoints
	// shares checks a per-pair value's distribution against declared shares.
	shares := func(name string, want map[string]float64, of func(s *Scenario) string) {
		got := map[string]int{}
		for i := range explicits {
			got[of(&explicits[i])]++
		}
		var parts, off []string
		for _, k := range SortedKeys(want) {
			parts = append(parts, fmt.Sprintf("%s %.1f%%", k, share(got[k])))
			if d := share(got[k]) - want[k]; d > tol || d < -tol {
				off = append(off, fmt.Sprintf("%s %.1f%% (declared %g%%)", k, share(got[k]), want[k]))
			}
		}
		for _, k := range SortedKeys(got) {
			if _, ok := want[k]; !ok {
				off = append(off, fmt.Sprintf("%q in %d pairs is not declared", k, got[k]))
			}
		}
		add(name, strings.Join(parts, ", "), fmt.Sprintf("each within %g points of its declared share", tol), len(off) == 0, strings.Join(off, "; "))
	}
	shares("task kinds", g.Tasks, func(s *Scenario) string { return s.Task })
	if g.TPositions != nil {
		shares("T positions", g.TPositions, func(s *Scenario) string { return s.TPosition })
	}
	top, topK := 0, ""
	kinds := map[string]int{}
	for i := range explicits {
		kinds[explicits[i].Task]++
	}
	for k, c := range kinds {
		if c > top {
			top, topK = c, k
		}
	}
	add("largest task kind", fmt.Sprintf("%s %.1f%%", topK, share(top)), fmt.Sprintf("<= %g%%, %d kinds", g.MaxTaskShare, len(g.Tasks)),
		share(top) <= g.MaxTaskShare && len(kinds) >= len(g.Tasks), "")
	nonNum, yes, no := 0, 0, 0
	for i := range explicits {
		s := &explicits[i]
		if NonNumeric(s) {
			nonNum++
		}
		if s.AnswerType == "yes_no" {
			if w := strings.Fields(strings.ToLower(s.GoldAnswer)); len(w) > 0 && strings.Trim(w[0], ",.!") == "no" {
				no++
			} else {
				yes++
			}
		}
	}
	add("non-numeric golds", fmt.Sprintf("%.1f%% (%d)", share(nonNum), nonNum), fmt.Sprintf(">= %g%%", g.MinNonNumeric), share(nonNum) >= g.MinNonNumeric, "")
	add("yes/no golds", fmt.Sprintf("%.1f%% (%d yes, %d no)", share(yes+no), yes, no), fmt.Sprintf("<= %g%%, balanced within one", g.MaxYesNo),
		share(yes+no) <= g.MaxYesNo && absInt(yes-no) <= 1, "")
	shares("addressing forms", g.Addressing, func(s *Scenario) string { return s.Addressing })
	open := 0
	for i := range explicits {
		if explicits[i].Addressing == AddressOpening {
			open++
		}
	}
	add("opening vocative", fmt.Sprintf("%.1f%%", share(open)), fmt.Sprintf("<= %g%%", g.MaxOpening), share(open) <= g.MaxOpening, "")
	for _, kind := range SortedKeys(g.Inventory) {
		is := InventoryKinds[kind]
		if is == nil {
			add("inventory "+kind, "unknown kind", "one of "+strings.Join(SortedKeys(InventoryKinds), ", "), false, "")
			continue
		}
		shares("inventory "+kind, g.Inventory[kind], func(s *Scenario) string {
			c := 0
			for _, t := range s.Turns {
				if is(t) {
					c++
				}
			}
			return strconv.Itoa(c)
		})
	}
	n4 := 0
	for i := range explicits {
		if slices.ContainsFunc(explicits[i].Turns, InventoryKinds["n4"]) {
			n4++
		}
	}
	add("pairs with an N4 event (declared)", fmt.Sprintf("%.1f%%", share(n4)), fmt.Sprintf(">= %g%%", g.MinN4Pairs), share(n4) >= g.MinN4Pairs, "")
	tagged := map[string]int{}
	for i := range explicits {
		seen := map[string]bool{}
		for _, t := range explicits[i].Turns {
			for _, tag := range t.Tags {
				if !seen[tag] {
					seen[tag] = true
					tagged[tag]++
				}
			}
		}
	}
	var parts, low []string
	for _, tag := range SortedKeys(g.HardNegatives) {
		parts = append(parts, fmt.Sprintf("%s %.1f%%", tag, share(tagged[tag])))
		if share(tagged[tag]) < g.HardNegatives[tag] {
			low = append(low, fmt.Sprintf("%s %.1f%% (at least %g%%)", tag, share(tagged[tag]), g.HardNegatives[tag]))
		}
	}
	sort.Strings(low)
	add("hard negatives", strings.Join(parts, ", "), "each in at least its declared share of pairs", len(low) == 0, strings.Join(low, "; "))
	n3, dots := 0, 0
	for i := range explicits {
		for _, t := range explicits[i].Turns {
			if t.Label == protocol.LabelN3 {
				n3++
				if strings.Contains(t.Text, "...") || strings.Contains(t.Text, "…") {
					dots++
				}
			}
		}
	}
	sh := 0.0
	if n3 > 0 {
		sh = 100 * float64(dots) / float64(n3)
	}
	add(`N3 marked "..."`, fmt.Sprintf("%.1f%% (%d of %d)", sh, dots, n3), fmt.Sprintf("<= %g%%", g.MaxN3Ellipsis), sh <= g.MaxN3Ellipsis, "")
}
