package dataset

import (
	"fmt"
	"io"
	"sort"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// Stats summarise a set: what `duplexmpe dataset stats` prints.
type Stats struct {
	// Release names the release the set is or belongs to ("open-v1 1.0.0", or with its
	// split) and ReleaseSHA256 is the hash that names the whole release (MANIFEST.json's
	// sha256); empty for a set that is no release's (StatsOf fills them in).
	Release       string `json:"release,omitempty"`
	ReleaseSHA256 string `json:"release_sha256,omitempty"`

	Scenarios   int            `json:"scenarios"`
	Pairs       int            `json:"pairs"`
	Conditions  map[string]int `json:"conditions"`
	SpeakerSets map[int]int    `json:"speaker_sets"` // scenarios by number of speakers
	Labels      map[string]int `json:"labels"`       // turns by label
	TPositions  map[string]int `json:"t_positions"`  // scenarios by T bucket
	N2Addressee map[string]int `json:"n2_addressee"` // N2 turns by addressee
	N4Events    int            `json:"n4_events"`
	// N4 resolutions by who resolves: the asker or someone else.
	N4ByAsker int `json:"n4_resolved_by_asker"`
	N4ByOther int `json:"n4_resolved_by_other"`
	Turns     int `json:"turns"`
	// Durations, seconds; zero before synthesis.
	Synthesised          int     `json:"synthesised_scenarios"`
	TotalDuration        float64 `json:"total_duration_s"`
	MeanConversation     float64 `json:"mean_conversation_s"`
	MinConversation      float64 `json:"min_conversation_s"`
	MaxConversation      float64 `json:"max_conversation_s"`
	MeanTurn             float64 `json:"mean_turn_s"`
	PreambleDuration     float64 `json:"preamble_s"`
	MeanTurnsPerScenario float64 `json:"mean_turns_per_scenario"`
	// Attributes counts pairs (their explicit versions) by each scene attribute.
	Attributes map[string]map[string]int `json:"attributes"`
	// Cues counts implicit versions by addressing cue; ContextPairs the pairs whose gold
	// needs another speaker's fact (context_turns).
	Cues         map[string]int `json:"cues,omitempty"`
	ContextPairs int            `json:"context_pairs"`
	// Natural gaps (gap_after_s) over explicit versions: how many turns carry one, their
	// mean and median, and how many exceed 1.2 s.
	Gaps       int     `json:"natural_gaps"`
	GapMean    float64 `json:"natural_gap_mean_s,omitempty"`
	GapMedian  float64 `json:"natural_gap_median_s,omitempty"`
	GapsOver12 int     `json:"natural_gaps_over_1_2_s"`
	// V2 counts the v2 fields (task, addressing, cue_text, tags); nil when none is given.
	V2 *V2Counts `json:"v2,omitempty"`
}

// ComputeStats counts a set's scenarios along every axis of the protocol.
func ComputeStats(d *Dataset) Stats {
	st := Stats{
		Conditions: map[string]int{}, SpeakerSets: map[int]int{}, Labels: map[string]int{},
		TPositions: map[string]int{}, N2Addressee: map[string]int{},
	}
	pairs := map[string]bool{}
	synthTurns := 0
	st.Attributes = map[string]map[string]int{"setting": {}, "activity": {}, "relationship": {}, "devices": {}, "register": {}}
	st.Cues = map[string]int{}
	var gaps []float64
	var v2 V2Counts
	for _, s := range d.Scenarios {
		v2.add(&s)
		if s.Condition == protocol.Explicit {
			a := s.Attributes
			for k, v := range map[string]string{"setting": a.Setting, "activity": a.Activity, "relationship": a.Relationship, "devices": a.Devices, "register": a.Register} {
				st.Attributes[k][v]++
			}
			if len(s.ContextTurns) > 0 {
				st.ContextPairs++
			}
			for _, t := range s.Turns {
				if t.GapAfterS > 0 {
					gaps = append(gaps, t.GapAfterS)
					if t.GapAfterS > 1.2 {
						st.GapsOver12++
					}
				}
			}
		} else if s.Cue != "" {
			st.Cues[s.Cue]++
		}
		st.Scenarios++
		pairs[s.PairID] = true
		st.Conditions[s.Condition]++
		st.SpeakerSets[len(s.Speakers)]++
		st.TPositions[s.TPosition]++
		complete := len(s.Turns) > 0
		for i, t := range s.Turns {
			st.Turns++
			st.Labels[t.Label]++
			if t.Label == protocol.LabelN2 {
				st.N2Addressee[t.Addressee]++
			}
			if t.Label == protocol.LabelN4Q {
				st.N4Events++
				if i+1 < len(s.Turns) && s.Turns[i+1].Label == protocol.LabelN4R {
					if s.Turns[i+1].Speaker == t.Speaker {
						st.N4ByAsker++
					} else {
						st.N4ByOther++
					}
				}
			}
			if t.DurationS > 0 {
				st.TotalDuration += t.DurationS
				synthTurns++
			} else {
				complete = false
			}
		}
		if complete {
			st.Synthesised++
			c := s.Duration()
			if st.MinConversation == 0 || c < st.MinConversation {
				st.MinConversation = c
			}
			if c > st.MaxConversation {
				st.MaxConversation = c
			}
		}
	}
	st.Pairs = len(pairs)
	if !v2.empty() {
		st.V2 = &v2
	}
	if st.Gaps = len(gaps); st.Gaps > 0 {
		sort.Float64s(gaps)
		for _, g := range gaps {
			st.GapMean += g
		}
		st.GapMean /= float64(st.Gaps)
		st.GapMedian = gaps[st.Gaps/2]
	}
	if st.Synthesised > 0 {
		st.MeanConversation = st.TotalDuration / float64(st.Synthesised)
	}
	if synthTurns > 0 {
		st.MeanTurn = st.TotalDuration / float64(synthTurns)
	}
	if st.Scenarios > 0 {
		st.MeanTurnsPerScenario = float64(st.Turns) / float64(st.Scenarios)
	}
	if d.Manifest != nil && d.Manifest.Preamble != nil {
		st.PreambleDuration = d.Manifest.Preamble.DurationS
	}
	return st
}

// Print writes the stats as aligned text tables.
func (st Stats) Print(w io.Writer) {
	if st.Release != "" {
		fmt.Fprintf(w, "release    %s (%s)\n", st.Release, st.ReleaseSHA256)
	}
	fmt.Fprintf(w, "scenarios  %d (%d pairs, %d turns, %.1f turns per scenario)\n", st.Scenarios, st.Pairs, st.Turns, st.MeanTurnsPerScenario)
	section := func(title string, keys []string, get func(string) int, total int) {
		fmt.Fprintf(w, "\n%s\n", title)
		for _, k := range keys {
			n := get(k)
			pct := 0.0
			if total > 0 {
				pct = 100 * float64(n) / float64(total)
			}
			name := k
			if name == "" {
				name = "(none)"
			}
			fmt.Fprintf(w, "  %-14s %6d  %5.1f%%\n", name, n, pct)
		}
	}
	section("condition", union([]string{protocol.Explicit, protocol.Implicit}, SortedKeys(st.Conditions)),
		func(k string) int { return st.Conditions[k] }, st.Scenarios)
	spk := map[string]int{}
	for n, c := range st.SpeakerSets {
		spk[fmt.Sprintf("%d speakers", n)] = c
	}
	section("speakers", SortedKeys(spk), func(k string) int { return spk[k] }, st.Scenarios)
	section("labels (turns)", union(protocol.Labels, SortedKeys(st.Labels)), func(k string) int { return st.Labels[k] }, st.Turns)
	section("T position", union(protocol.TPositions, SortedKeys(st.TPositions)), func(k string) int { return st.TPositions[k] }, st.Scenarios)
	n2 := st.Labels[protocol.LabelN2]
	section("N2 addressee", union([]string{protocol.AddresseeHuman, protocol.AddresseeDevice}, SortedKeys(st.N2Addressee)),
		func(k string) int { return st.N2Addressee[k] }, n2)
	fmt.Fprintf(w, "\nN4 events      %d (resolved by the asker %d, by someone else %d)\n", st.N4Events, st.N4ByAsker, st.N4ByOther)
	if len(st.Cues) > 0 {
		cues := 0
		for _, n := range st.Cues {
			cues += n
		}
		section("implicit cue", SortedKeys(st.Cues), func(k string) int { return st.Cues[k] }, cues)
	}
	if st.ContextPairs > 0 {
		fmt.Fprintf(w, "\ngold needs another speaker's fact: %d of %d pairs (%.1f%%)\n", st.ContextPairs, st.Pairs, 100*float64(st.ContextPairs)/float64(max(st.Pairs, 1)))
	}
	if st.Gaps > 0 {
		fmt.Fprintf(w, "natural gaps   %d turns (explicit versions), mean %.3f s, median %.3f s, %d (%.1f%%) over 1.2 s\n",
			st.Gaps, st.GapMean, st.GapMedian, st.GapsOver12, 100*float64(st.GapsOver12)/float64(st.Gaps))
	}
	if st.V2 != nil {
		st.V2.print(w, st.Pairs, st.Conditions[protocol.Implicit])
	}
	for _, axis := range []string{"setting", "activity", "relationship", "devices", "register"} {
		if m := st.Attributes[axis]; len(m) > 0 {
			section(axis+" (pairs)", SortedKeys(m), func(k string) int { return m[k] }, st.Pairs)
		}
	}
	if st.Synthesised == 0 {
		fmt.Fprintf(w, "\ndurations      not synthesised (run 'duplexmpe build' to make clips)\n")
		return
	}
	fmt.Fprintf(w, "\ndurations (%d of %d scenarios synthesised)\n", st.Synthesised, st.Scenarios)
	fmt.Fprintf(w, "  total          %.1f s (%.2f h)\n", st.TotalDuration, st.TotalDuration/3600)
	fmt.Fprintf(w, "  conversation   mean %.1f s, min %.1f s, max %.1f s (turns only, no gaps)\n", st.MeanConversation, st.MinConversation, st.MaxConversation)
	fmt.Fprintf(w, "  turn           mean %.2f s\n", st.MeanTurn)
	if st.PreambleDuration > 0 {
		fmt.Fprintf(w, "  preamble       %.1f s\n", st.PreambleDuration)
	}
}

// union returns want followed by any extra keys not in want (unknown values show up).
func union(want, have []string) []string {
	out := append([]string(nil), want...)
	in := map[string]bool{}
	for _, k := range want {
		in[k] = true
	}
	var extra []string
	for _, k := range have {
		if !in[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}
