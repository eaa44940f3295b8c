package construct

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
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
// pool.Seed, one map per pair (so both versions of a pair have the same voices), each
// speaker a voice of the speaker's sex (dataset.SpeakerSex), no voice twice in a
// scenario, and no two speakers of a scenario with F0 medians closer than
// pool.MinSemitones. Among the maps allowed, each pair (in an order drawn from the seed)
// takes the one of least cost: every voice's share of turns near an equal part of its
// sex's, and its shares of T, N4_Q and N1 near its share of turns (squared distances;
// ties to the first in an order drawn from the seed); then up to voiceSweeps sweeps
// re-choose each pair's map with the others fixed. A voice then asks about as often as
// it speaks (dataset.VoiceShares measures it). The draw reads the whole set, so the
// voices of a pair do not depend on which other pairs a build makes.
func DrawVoices(scs []dataset.Scenario, pool dataset.VoicePool) (map[string]map[string]string, error) {
	if len(pool.F0) == 0 {
		return nil, fmt.Errorf("the voice pool is empty")
	}
	voices := dataset.SortedKeys(pool.F0)
	for _, v := range voices {
		if f := pool.F0[v]; !(f > 20 && f < 2000) {
			return nil, fmt.Errorf("voice pool: %s has F0 %g Hz; give its median F0 in Hz (make measure-tts measures it)", v, f)
		}
		if sx := pool.Sex[v]; sx != "female" && sx != "male" {
			return nil, fmt.Errorf("voice pool: %s has sex %q; want female or male", v, sx)
		}
	}
	// The voices of each sex: a speaker is spoken by a voice of the speaker's sex.
	group := map[string][]string{}
	for _, v := range voices {
		group[pool.Sex[v]] = append(group[pool.Sex[v]], v)
	}
	sexOf := func(sp string) string {
		if sx, ok := dataset.SpeakerSex[sp]; ok {
			return sx
		}
		return ""
	}
	minST := pool.MinSemitones
	if minST < 0 || math.IsNaN(minST) {
		return nil, fmt.Errorf("voice pool: min_semitones %g is negative", minST)
	}
	labels := append([]string{""}, dataset.ShareLabels...)
	byPair := map[string]*pairNeeds{}
	var pairs []*pairNeeds
	totals := make([]float64, len(labels))
	groupTotals := map[string][]float64{"female": make([]float64, len(labels)), "male": make([]float64, len(labels)), "": make([]float64, len(labels))}
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
					groupTotals[sexOf(t.Speaker)][li]++
				}
			}
		}
	}
	for _, p := range pairs {
		sort.Strings(p.speakers)
		need := map[string]int{}
		for _, sp := range p.speakers {
			need[sexOf(sp)]++
		}
		for sx, n := range need {
			if have := len(group[sx]); sx != "" && n > have {
				return nil, fmt.Errorf("pair %s has %d %s speakers; the voice pool has %d %s voices: add voices", p.id, n, sx, have, sx)
			}
		}
	}
	sort.SliceStable(pairs, func(i, j int) bool {
		if pairs[i].order != pairs[j].order {
			return pairs[i].order < pairs[j].order
		}
		return pairs[i].id < pairs[j].id
	})

	// used[v][l]: voice v's turns of label l so far (l = 0: all). The cost of a voice is
	// the squared distance of its share of turns from an equal part of its sex's (the
	// speakers of one sex, A and C or B and D, are shared by that sex's voices) plus four
	// times the squared distances of its shares of T, N4_Q and N1 from its share of turns.
	used := map[string][]float64{}
	for _, v := range voices {
		used[v] = make([]float64, len(labels))
	}
	cost := func(v string, c []float64) float64 {
		sx := pool.Sex[v]
		share := c[0] / totals[0]
		part := (groupTotals[sx][0] + groupTotals[""][0]/2) / totals[0] / float64(len(group[sx]))
		sum := (share - part) * (share - part)
		for li := 1; li < len(labels); li++ {
			if totals[li] > 0 {
				d := c[li]/totals[li] - share
				sum += 4 * d * d
			}
		}
		return sum
	}
	// Each pair in turn takes its best map given the others' (greedy first, then sweeps
	// that re-choose each pair's map with the rest fixed, until none changes or for at
	// most voiceSweeps sweeps).
	out := map[string]map[string]string{}
	for sweep := 0; sweep <= voiceSweeps; sweep++ {
		changed := false
		for _, p := range pairs {
			if old := out[p.id]; old != nil {
				for _, sp := range p.speakers {
					for li := range labels {
						used[old[sp]][li] -= p.counts[sp][li]
					}
				}
			}
			m, err := bestMap(p, pool, labels, cand(pool.Seed, p.id, voices), used, cost, sexOf, minST)
			if err != nil {
				return nil, err
			}
			for _, sp := range p.speakers {
				for li := range labels {
					used[m[sp]][li] += p.counts[sp][li]
				}
			}
			if !reflect.DeepEqual(m, out[p.id]) {
				changed = true
			}
			out[p.id] = m
		}
		if !changed {
			break
		}
	}
	return out, nil
}

// voiceSweeps bounds the sweeps after the greedy draw.
const voiceSweeps = 8

// cand is the pool in an order drawn for one pair, so equal costs are broken by the seed.
func cand(seed int64, pair string, voices []string) []string {
	out := append([]string(nil), voices...)
	sort.SliceStable(out, func(i, j int) bool { return seeded(seed, pair, out[i]) < seeded(seed, pair, out[j]) })
	return out
}

// bestMap is the allowed speaker -> voice map of one pair of least cost given used.
func bestMap(p *pairNeeds, pool dataset.VoicePool, labels []string, cand []string, used map[string][]float64,
	cost func(string, []float64) float64, sexOf func(string) string, minST float64) (map[string]string, error) {
	apart := func(a, b string) bool {
		return math.Abs(12*math.Log2(pool.F0[a]/pool.F0[b])) >= minST
	}
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
		sp := p.speakers[k]
		c := p.counts[sp]
		for _, v := range cand {
			if taken[v] || sexOf(sp) != "" && pool.Sex[v] != sexOf(sp) {
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
			try(k+1, delta+cost(v, next)-cost(v, used[v]))
			pick = pick[:len(pick)-1]
			taken[v] = false
		}
	}
	try(0, 0)
	if best == nil {
		return nil, fmt.Errorf("pair %s: no voices of the pool for its speakers %v (A and C women, B and D men) are %g semitones apart from each other (F0 medians %s): add voices, or lower voice_min_semitones",
			p.id, p.speakers, minST, f0List(pool.F0))
	}
	m := map[string]string{}
	for k, sp := range p.speakers {
		m[sp] = best[k]
	}
	return m, nil
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
