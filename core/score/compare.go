package score

import (
	"runtime"
	"sort"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/stats"
)

// compareModels: section 6.3, model comparisons within the family. For every condition,
// every pair of models under test (A before B alphabetically) and every scored measure:
// paired on the same items (the scenario pairs both models were scored on, and within
// them the same turns), exact McNemar over the units both have in the denominator, a
// cluster bootstrap of the difference in rates resampling whole scenario pairs, and
// Bonferroni over all comparisons made. Baselines and references are not compared.
func compareModels(groups map[groupKey][]Scored, keys []groupKey, family map[string]bool, p protocol.Params, seed uint64) []Comparison {
	byCond := map[string][]string{}
	var conds []string
	for _, k := range keys {
		if !family[k.model] {
			continue
		}
		if byCond[k.cond] == nil {
			conds = append(conds, k.cond)
		}
		byCond[k.cond] = append(byCond[k.cond], k.model)
	}
	sort.Slice(conds, func(i, j int) bool { return conditionOrder(conds[i]) < conditionOrder(conds[j]) })
	type job struct {
		cond, measure, a, b string
		seed                uint64
	}
	var jobs []job
	for _, cond := range conds {
		models := byCond[cond]
		sort.Strings(models)
		for i := range models {
			for j := i + 1; j < len(models); j++ {
				for _, m := range MeasureKeys(true) {
					// A distinct, fixed stream per comparison keeps each reproducible on
					// its own and independent of how the work is scheduled.
					jobs = append(jobs, job{cond, m, models[i], models[j], seed + uint64(len(jobs))*1000003})
				}
			}
		}
	}
	// Each bootstrap is about half a second at paper scale: run them in parallel.
	out := make([]Comparison, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), max(len(jobs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				jb := jobs[i]
				out[i] = compare(jb.cond, jb.measure, jb.a, jb.b, groups[groupKey{jb.a, jb.cond}], groups[groupKey{jb.b, jb.cond}], p, jb.seed)
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	ps := make([]float64, len(out))
	for i, c := range out {
		ps[i] = c.Test.P
	}
	for i, adj := range stats.Bonferroni(ps) {
		out[i].PAdjusted = adj
	}
	return out
}

func compare(cond, measure, nameA, nameB string, a, b []Scored, p protocol.Params, seed uint64) Comparison {
	c := Comparison{Condition: cond, Measure: measure, A: nameA, B: nameB}
	// A scenario pair is one bootstrap cluster with all its repeats: the repeats of a
	// scenario are not independent of each other (section 6.5).
	byPair := func(items []Scored) map[string][]unit {
		m := map[string][]unit{}
		for _, it := range items {
			m[it.PairID] = append(m[it.PairID], itemUnits(it, measure)...)
		}
		return m
	}
	ua, ub := byPair(a), byPair(b)
	var pairs []string
	for id := range ua {
		if _, ok := ub[id]; ok {
			pairs = append(pairs, id)
		}
	}
	sort.Strings(pairs)
	c.Pairs = len(pairs)
	var clusters []stats.Cluster
	var ka, na, kb, nb, bb, cc, paired, k1, k2 int
	for _, id := range pairs {
		var cl stats.Cluster
		for _, u := range ua[id] {
			if u.counted {
				cl.AN++
				na++
				if u.success {
					cl.AK++
					ka++
				}
			}
		}
		for _, u := range ub[id] {
			if u.counted {
				cl.BN++
				nb++
				if u.success {
					cl.BK++
					kb++
				}
			}
		}
		clusters = append(clusters, cl)
		// McNemar pairs the same turn of the same scenario in the same repeat when both
		// models count it.
		byTurn := map[[2]int]unit{}
		for _, u := range ub[id] {
			byTurn[[2]int{u.repeat, u.turn}] = u
		}
		for _, u := range ua[id] {
			v, ok := byTurn[[2]int{u.repeat, u.turn}]
			if !ok || !u.counted || !v.counted {
				continue
			}
			paired++
			bb, cc, k1, k2 = count(u.success, v.success, bb, cc, k1, k2)
		}
	}
	c.RateA, c.RateB = newRate(ka, na, minN(measure, p)), newRate(kb, nb, minN(measure, p))
	c.Test = newMcNemar(bb, cc, paired, k1, k2)
	c.Difference = stats.BootstrapDifference(clusters, p.BootstrapResamples, seed, Confidence)
	return c
}
