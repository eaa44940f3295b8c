package construct

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/dataset"
)

// DefaultMinSemitones is the least distance between the F0 medians of two speakers of one
// scenario drawn from a pool, when the pool sets none: two semitones, about the smallest
// difference of median pitch that listeners (and speaker-change detectors) hear as two
// people rather than one.
const DefaultMinSemitones = 2.0

// pairNeeds is what one pair asks of the voices: its speakers and, per speaker, how many
// turns (both versions together) of all kinds and of each of dataset.ShareLabels.
type pairNeeds struct {
	id       string
	speakers []string
	counts   map[string][]float64 // speaker -> [all, T, N4_Q, N1]
	order    uint64               // the seeded order the pairs are drawn in
}

// DrawVoices gives every pair of scs its speakers' voices from pool: deterministic by
// pool.Seed, one map per pair (so both versions of a pair have the same voices), no
// voice twice in a scenario, and no two speakers of a scenario with F0 medians closer
// than pool.MinSemitones. Among the assignments allowed, each pair (in an order drawn
// from the seed) takes the one that keeps every voice's share of all turns, of T, of N4_Q
// and of N1 closest to an equal part of each (the sum of squared distances; ties to the
// first in an order drawn from the seed): a voice then asks about as often as it speaks
// (dataset.VoiceShares measures it). The draw reads the whole set, so the voices of a pair
// do not depend on which other pairs a build makes.
func DrawVoices(scs []dataset.Scenario, pool dataset.VoicePool) (map[string]map[string]string, error) {
	if len(pool.F0) == 0 {
		return nil, fmt.Errorf("the voice pool is empty")
	}
	voices := dataset.SortedKeys(pool.F0)
	for _, v := range voices {
		if f := pool.F0[v]; !(f > 20 && f < 2000) {
			return nil, fmt.Errorf("voice pool: %s has F0 %g Hz; give its median F0 in Hz (make measure-tts measures it)", v, f)
		}
	}
	minST := pool.MinSemitones
	if minST < 0 || math.IsNaN(minST) {
		return nil, fmt.Errorf("voice pool: min_semitones %g is negative", minST)
	}
	labels := append([]string{""}, dataset.ShareLabels...)
	byPair := map[string]*pairNeeds{}
	var pairs []*pairNeeds
	totals := make([]float64, len(labels))
	for _, s := range scs {
		p := byPair[s.PairID]
		if p == nil {
			p = &pairNeeds{id: s.PairID, counts: map[string][]float64{}, order: seeded(pool.Seed, "pair", s.PairID)}
			byPair[s.PairID] = p
			pairs = append(pairs, p)
		}
		add := func(sp string) []float64 {
			c := p.counts[sp]
			if c == nil {
				c = make([]float64, len(labels))
				p.counts[sp] = c
				p.speakers = append(p.speakers, sp)
			}
			return c
		}
		for _, sp := range s.Speakers {
			add(sp)
		}
		for _, t := range s.Turns {
			c := add(t.Speaker)
			for li, l := range labels {
				if l == "" || t.Label == l {
					c[li]++
					totals[li]++
				}
			}
		}
	}
	for _, p := range pairs {
		sort.Strings(p.speakers)
		if len(p.speakers) > len(voices) {
			return nil, fmt.Errorf("pair %s has %d speakers; the voice pool has %d voices: add voices", p.id, len(p.speakers), len(voices))
		}
	}
	sort.SliceStable(pairs, func(i, j int) bool {
		if pairs[i].order != pairs[j].order {
			return pairs[i].order < pairs[j].order
		}
		return pairs[i].id < pairs[j].id
	})

	// used[v][l]: voice v's turns of label l so far; the cost of a voice is the squared
	// distance of its shares from an equal part, label by label.
	used := map[string][]float64{}
	for _, v := range voices {
		used[v] = make([]float64, len(labels))
	}
	part := 1 / float64(len(voices))
	cost := func(c []float64) float64 {
		sum := 0.0
		for li := range labels {
			if totals[li] > 0 {
				d := c[li]/totals[li] - part
				sum += d * d
			}
		}
		return sum
	}
	apart := func(a, b string) bool {
		return math.Abs(12*math.Log2(pool.F0[a]/pool.F0[b])) >= minST
	}
	out := map[string]map[string]string{}
	for _, p := range pairs {
		// The pool in an order drawn for this pair, so equal costs are broken by the seed.
		cand := append([]string(nil), voices...)
		sort.SliceStable(cand, func(i, j int) bool {
			return seeded(pool.Seed, p.id, cand[i]) < seeded(pool.Seed, p.id, cand[j])
		})
		best, bestCost := []string(nil), math.Inf(1)
		pick := make([]string, 0, len(p.speakers))
		taken := map[string]bool{}
		var try func(k int, delta float64)
		try = func(k int, delta float64) {
			if k == len(p.speakers) {
				if delta < bestCost-1e-12 {
					best, bestCost = append(best[:0], pick...), delta
				}
				return
			}
			c := p.counts[p.speakers[k]]
			for _, v := range cand {
				if taken[v] {
					continue
				}
				ok := true
				for _, w := range pick {
					if !apart(v, w) {
						ok = false
						break
					}
				}
				if !ok {
					continue
				}
				next := make([]float64, len(labels))
				for li := range labels {
					next[li] = used[v][li] + c[li]
				}
				taken[v] = true
				pick = append(pick, v)
				try(k+1, delta+cost(next)-cost(used[v]))
				pick = pick[:len(pick)-1]
				taken[v] = false
			}
		}
		try(0, 0)
		if best == nil {
			return nil, fmt.Errorf("pair %s: no %d voices of the pool are %g semitones apart from each other (F0 medians %s): add voices, or lower min_semitones",
				p.id, len(p.speakers), minST, f0List(pool.F0))
		}
		m := map[string]string{}
		for k, sp := range p.speakers {
			m[sp] = best[k]
			for li := range labels {
				used[best[k]][li] += p.counts[sp][li]
			}
		}
		out[p.id] = m
	}
	return out, nil
}

// seeded is a number drawn from the seed and the parts, the same on every machine.
func seeded(seed int64, parts ...string) uint64 {
	h := sha256.New()
	fmt.Fprintf(h, "duplexmpe-voices-v1\x00%d", seed)
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return binary.BigEndian.Uint64(h.Sum(nil))
}

func f0List(f0 map[string]float64) string {
	var parts []string
	for _, v := range dataset.SortedKeys(f0) {
		parts = append(parts, fmt.Sprintf("%s %g Hz", v, f0[v]))
	}
	return strings.Join(parts, ", ")
}
