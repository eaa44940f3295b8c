package review

import (
	"fmt"
	"math"
	"strings"
)

// Judge names the judge in agreement results.
const Judge = "judge"

// Pair is the agreement of two raters (a reviewer column or the judge) on the rows both
// labelled, over one event kind or all of them ("all").
type Pair struct {
	A     string  `json:"a"`
	B     string  `json:"b"`
	Event string  `json:"event"`
	N     int     `json:"n"`
	Agree int     `json:"agree"`
	Rate  float64 `json:"rate"`
	// Kappa is Cohen's kappa; KappaOK is false when it is undefined (no rows, or
	// chance agreement of 1: both raters used one and the same label throughout).
	Kappa   float64 `json:"kappa"`
	KappaOK bool    `json:"kappa_ok"`
}

// Agreement compares every reviewer with the judge, then every two reviewers, over
// all rows and per event kind (answer, silence); only rows both raters labelled count.
func Agreement(sh Sheet) []Pair {
	raters := append([]string{Judge}, sh.Reviewers...)
	label := func(r Row, rater int) string {
		if rater == 0 {
			return r.JudgeLabel
		}
		return r.Reviewers[rater-1]
	}
	var out []Pair
	for a := 0; a < len(raters); a++ {
		for b := a + 1; b < len(raters); b++ {
			for _, ev := range []string{"all", EventAnswer, EventSilence} {
				var la, lb []string
				for _, r := range sh.Rows {
					if ev != "all" && r.Event != ev {
						continue
					}
					x, y := label(r, a), label(r, b)
					if x == "" || y == "" {
						continue
					}
					la, lb = append(la, x), append(lb, y)
				}
				if ev != "all" && len(la) == 0 {
					continue
				}
				p := Pair{A: raters[a], B: raters[b], Event: ev, N: len(la)}
				for i := range la {
					if la[i] == lb[i] {
						p.Agree++
					}
				}
				if p.N > 0 {
					p.Rate = float64(p.Agree) / float64(p.N)
				}
				p.Kappa, p.KappaOK = Kappa(la, lb)
				out = append(out, p)
			}
		}
	}
	return out
}

// Kappa is Cohen's kappa of two raters' labels on the same items (a[i] and b[i] label
// item i): (po - pe) / (1 - pe), po the observed agreement, pe the agreement expected by
// chance from each rater's label frequencies. ok is false when it is undefined: no
// items, lengths that differ, or pe = 1.
func Kappa(a, b []string) (kappa float64, ok bool) {
	n := len(a)
	if n == 0 || n != len(b) {
		return 0, false
	}
	ca, cb := map[string]int{}, map[string]int{}
	agree := 0
	for i := range a {
		ca[a[i]]++
		cb[b[i]]++
		if a[i] == b[i] {
			agree++
		}
	}
	po := float64(agree) / float64(n)
	pe := 0.0
	for l, k := range ca {
		pe += float64(k) / float64(n) * float64(cb[l]) / float64(n)
	}
	if pe >= 1-1e-12 {
		return 0, false
	}
	return (po - pe) / (1 - pe), true
}

// Text renders the agreement as a Markdown table.
func Text(pairs []Pair, rows int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| rater A | rater B | event | rows | agreement | Cohen's kappa |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, p := range pairs {
		rate := "n/a (n=0)"
		if p.N > 0 {
			rate = fmt.Sprintf("%.1f%% (%d/%d)", 100*p.Rate, p.Agree, p.N)
		}
		kappa := "n/a"
		if p.KappaOK && !math.IsNaN(p.Kappa) {
			kappa = fmt.Sprintf("%.3f", p.Kappa)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s |\n", p.A, p.B, p.Event, p.N, rate, kappa)
	}
	fmt.Fprintf(&b, "\n%d rows in the sheet; a pair counts the rows both raters labelled.\n", rows)
	return b.String()
}
