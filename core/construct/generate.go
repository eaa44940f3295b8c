// Package construct builds Duplex-MPE datasets: it writes scenario scripts (the
// procedural generator here, or an LLM through the llm plugin kind), synthesises every
// turn through a tts plugin into a content-addressed clip cache, and saves the result in
// the core/dataset format.
package construct

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// GenerateSpec configures the procedural generator.
type GenerateSpec struct {
	Pairs int   // number of explicit/implicit pairs
	Seed  int64 // same seed, same scenarios, byte for byte
	// FourSpeakerShare is the fraction of pairs with four speakers (the paper has 500
	// of 2,000). Zero means the default 0.25.
	FourSpeakerShare float64
	// PairPrefix starts every pair id; default "gen".
	PairPrefix string
}

// GeneratorVersion changes whenever the generator's output for a seed changes.
const GeneratorVersion = "procedural-1"

// Generate writes spec.Pairs scenario pairs (explicit then implicit for each). Pair i
// is drawn from its own random stream (seed, i), so the first k pairs do not depend on
// how many are asked for. T positions cycle early-middle, middle, late-middle, so the
// buckets stay balanced as in the paper.
func Generate(spec GenerateSpec) ([]dataset.Scenario, error) {
	if spec.Pairs < 1 {
		return nil, fmt.Errorf("generate: pairs = %d must be at least 1", spec.Pairs)
	}
	share := spec.FourSpeakerShare
	if share == 0 {
		share = 0.25
	}
	if share < 0 || share > 1 {
		return nil, fmt.Errorf("generate: four_speaker_share = %g must be in [0, 1]", share)
	}
	prefix := spec.PairPrefix
	if prefix == "" {
		prefix = "gen"
	}
	out := make([]dataset.Scenario, 0, 2*spec.Pairs)
	for i := 0; i < spec.Pairs; i++ {
		rng := rand.New(rand.NewPCG(uint64(spec.Seed), uint64(i)))
		bucket := protocol.TPositions[i%len(protocol.TPositions)]
		speakers := 3
		if rng.Float64() < share {
			speakers = 4
		}
		id := fmt.Sprintf("%s-%d-%05d", prefix, spec.Seed, i)
		e, im := generatePair(rng, id, bucket, speakers)
		out = append(out, e, im)
	}
	return out, nil
}

// line is one rendered turn; the T turn carries both versions' text, and so may the
// turn before it.
type line struct {
	speaker   int
	text      string
	implicit  string // when non-empty, this turn's text in the implicit version
	label     string
	addressee string
}

// cast is who is in the room and what the room is like.
type cast struct {
	n       int
	names   []string // names[i] is speaker i's first name
	scene   *scene
	attrs   dataset.Attributes
	wake    []string // other devices' wake phrases
	reg     *register
	spoken  []bool
	lines   []line
	usedIdx map[string]bool // pool lines already used in this scenario
}

func (c *cast) prev() int {
	if len(c.lines) == 0 {
		return -1
	}
	return c.lines[len(c.lines)-1].speaker
}

// pickSpeaker chooses someone other than the excluded speakers, preferring people who
// have not talked yet, so everyone in the room speaks.
func (c *cast) pickSpeaker(rng *rand.Rand, exclude ...int) int {
	var quiet, others []int
	for i := 0; i < c.n; i++ {
		skip := false
		for _, x := range exclude {
			if i == x {
				skip = true
			}
		}
		if skip {
			continue
		}
		if !c.spoken[i] {
			quiet = append(quiet, i)
		} else {
			others = append(others, i)
		}
	}
	if len(quiet) > 0 && rng.Float64() < 0.7 {
		return quiet[rng.IntN(len(quiet))]
	}
	all := append(quiet, others...)
	return all[rng.IntN(len(all))]
}

func (c *cast) add(l line) {
	c.spoken[l.speaker] = true
	c.lines = append(c.lines, l)
}

// fresh picks a pool entry not yet used in this scenario (falling back to any).
func (c *cast) fresh(rng *rand.Rand, pool []string) string {
	start := rng.IntN(len(pool))
	for k := 0; k < len(pool); k++ {
		s := pool[(start+k)%len(pool)]
		if !c.usedIdx[s] {
			c.usedIdx[s] = true
			return s
		}
	}
	return pool[start]
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// fill replaces {key} placeholders.
func fill(tmpl string, kv ...string) string {
	return strings.NewReplacer(kv...).Replace(tmpl)
}

// unit is a block of one or two consecutive turns.
type unit struct {
	size   int
	label  string // the label of its first turn
	render func(rng *rand.Rand, c *cast)
}

func generatePair(rng *rand.Rand, pairID, bucket string, nSpeakers int) (dataset.Scenario, dataset.Scenario) {
	sc := &scenes[rng.IntN(len(scenes))]
	c := &cast{n: nSpeakers, scene: sc, spoken: make([]bool, nSpeakers), usedIdx: map[string]bool{}}
	rel := pick(rng, relationships)
	c.names = pickNames(rng, nSpeakers)
	dev := pick(rng, deviceSets)
	c.wake = dev.wake
	c.reg = &registers[rng.IntN(len(registers))]
	c.attrs = dataset.Attributes{
		Setting:      pick(rng, sc.settings),
		Activity:     sc.activity,
		Relationship: rel,
		Devices:      dev.name,
		Register:     c.reg.name,
	}
	task := sc.tasks[rng.IntN(len(sc.tasks))](rng, c)

	// Length and T index: T in its bucket with room for the facts (and the rewritten
	// turn before T when the cue needs one) before it.
	minN, maxN := 10, 13
	if nSpeakers == 4 {
		minN, maxN = 12, 15
	}
	n := minN + rng.IntN(maxN-minN+1)
	needBefore := len(task.facts)
	if task.preT != nil {
		needBefore++
	}
	var slots []int
	for i := 1; i <= n-2; i++ {
		if b, _ := dataset.TBucket(i, n); b == bucket && i >= needBefore {
			slots = append(slots, i)
		}
	}
	for len(slots) == 0 { // only when facts are long and the bucket early: lengthen
		n++
		for i := 1; i <= n-2; i++ {
			if b, _ := dataset.TBucket(i, n); b == bucket && i >= needBefore {
				slots = append(slots, i)
			}
		}
	}
	tIdx := slots[rng.IntN(len(slots))]

	// Filler units: the required kinds first (so every scenario has an N4 event and
	// N1, N2 and N3 turns when it has room), then random ones.
	pool := []unit{c.n4Unit(), c.n2HumanUnit(), c.n3Unit(), c.n1Unit(), c.n2DeviceUnit()}
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	extra := []func() unit{c.n4Unit, c.n2HumanUnit, c.n3Unit, c.n1Unit, c.n2DeviceUnit, c.n2HumanOneLiner}
	nextUnit := func(room int) unit {
		for k := range pool {
			if pool[k].size <= room {
				u := pool[k]
				pool = append(pool[:k], pool[k+1:]...)
				return u
			}
		}
		for {
			u := pick(rng, extra)()
			if u.size <= room {
				return u
			}
		}
	}
	after := n - 1 - tIdx
	before := tIdx - needBefore
	// Split the required units between before and after T in proportion.
	var beforeUnits, afterUnits []unit
	for room := after; room > 0; {
		u := nextUnit(room)
		afterUnits = append(afterUnits, u)
		room -= u.size
	}
	for room := before; room > 0; {
		u := nextUnit(room)
		beforeUnits = append(beforeUnits, u)
		room -= u.size
	}
	// Interleave the facts (in order) with the units before T.
	type step struct {
		fact int // index into task.facts, or -1
		u    unit
	}
	var seq []step
	fi, ui := 0, 0
	for fi < len(task.facts) || ui < len(beforeUnits) {
		takeFact := fi < len(task.facts) && (ui >= len(beforeUnits) || rng.IntN(len(task.facts)-fi+len(beforeUnits)-ui) < len(task.facts)-fi)
		if takeFact {
			seq = append(seq, step{fact: fi})
			fi++
		} else {
			seq = append(seq, step{fact: -1, u: beforeUnits[ui]})
			ui++
		}
	}
	// A mention of Aria right before T would cue the implicit version by name: move the
	// last step that is not a mention to the end (fact order is kept: only mentions
	// follow it).
	isN1 := func(s step) bool { return s.fact < 0 && s.u.label == protocol.LabelN1 }
	if k := len(seq) - 1; task.preT == nil && k > 0 && isN1(seq[k]) {
		for j := k - 1; j >= 0; j-- {
			if !isN1(seq[j]) {
				moved := seq[j]
				seq = append(append(seq[:j:j], seq[j+1:]...), moved)
				break
			}
		}
	}
	for _, s := range seq {
		if s.fact >= 0 {
			task.facts[s.fact](rng, c)
		} else {
			s.u.render(rng, c)
		}
	}
	if task.preT != nil {
		task.preT(rng, c)
	}
	task.t(rng, c)
	for _, u := range afterUnits {
		u.render(rng, c)
	}
	// Everyone talks: if someone is still silent, give them the last plain turn.
	for sp := 0; sp < c.n; sp++ {
		if !c.spoken[sp] {
			c.giveTurnTo(sp, tIdx)
		}
	}

	speakers := make([]string, nSpeakers)
	for i := range speakers {
		speakers[i] = string(rune('A' + i))
	}
	mk := func(cond string) dataset.Scenario {
		s := dataset.Scenario{
			PairID: pairID, Condition: cond, ScenarioID: pairID + "-" + cond,
			Attributes: c.attrs, Speakers: speakers, GoldAnswer: task.gold, TPosition: bucket,
		}
		for _, l := range c.lines {
			text := l.text
			if cond == protocol.Implicit && l.implicit != "" {
				text = l.implicit
			}
			s.Turns = append(s.Turns, dataset.Turn{Speaker: speakers[l.speaker], Text: text, Label: l.label, Addressee: l.addressee})
		}
		return s
	}
	return mk(protocol.Explicit), mk(protocol.Implicit)
}

// giveTurnTo hands a one-speaker filler turn (N1, N3, or an N2 to a device) away from
// T and its neighbours to a speaker who has not talked, when that keeps adjacent turns
// by different people.
func (c *cast) giveTurnTo(sp, tIdx int) {
	for i := len(c.lines) - 1; i >= 0; i-- {
		l := c.lines[i]
		if i >= tIdx-1 && i <= tIdx {
			continue
		}
		if l.label != protocol.LabelN1 && l.label != protocol.LabelN3 && !(l.label == protocol.LabelN2 && l.addressee == protocol.AddresseeDevice) {
			continue
		}
		if (i > 0 && c.lines[i-1].speaker == sp) || (i+1 < len(c.lines) && c.lines[i+1].speaker == sp) {
			continue
		}
		c.lines[i].speaker = sp
		c.spoken[sp] = true
		return
	}
	// Fall back: any N3 or N1 turn.
	for i := range c.lines {
		if c.lines[i].label == protocol.LabelN3 || c.lines[i].label == protocol.LabelN1 {
			c.lines[i].speaker = sp
			c.spoken[sp] = true
			return
		}
	}
}

func pickNames(rng *rand.Rand, n int) []string {
	idx := rng.Perm(len(firstNames))[:n]
	out := make([]string, n)
	for i, k := range idx {
		out[i] = firstNames[k]
	}
	return out
}
