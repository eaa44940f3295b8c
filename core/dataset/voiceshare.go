package dataset

import (
	"fmt"
	"math"
	"sort"
)

// ShareLabels are the turn labels whose speakers the voice balance is checked on: the
// request to Aria (T), the question an N4 event answers (N4_Q) and the mention of Aria
// that is not a request (N1). A voice that spoke most of one of them would let a model
// learn the voice instead of the words.
var ShareLabels = []string{"T", "N4_Q", "N1"}

// ShareTolerance is how far (as a share, 0.05 = 5 points) a voice's share of one of
// ShareLabels may lie from its share of all turns.
const ShareTolerance = 0.05

// VoiceShare is one voice's part of a set: its turns and its turns of each of
// ShareLabels, as counts and as shares of the set's totals.
type VoiceShare struct {
	Voice string
	Turns int
	// TurnShare is Turns over all the set's turns.
	TurnShare float64
	// Labels[l] counts its turns labelled l; LabelShare[l] is that over all the set's
	// turns labelled l (0 when the set has none).
	Labels     map[string]int
	LabelShare map[string]float64
}

// Gap is the largest distance between the voice's share of one of ShareLabels and its
// share of all turns, and the label it is on; labels the set has none of are skipped.
func (v VoiceShare) Gap(totals map[string]int) (float64, string) {
	gap, at := 0.0, ""
	for _, l := range ShareLabels {
		if totals[l] == 0 {
			continue
		}
		if g := math.Abs(v.LabelShare[l] - v.TurnShare); g > gap || at == "" {
			gap, at = g, l
		}
	}
	return gap, at
}

// VoiceShares counts who speaks what in a built set: per voice (in name order), its
// turns and its turns of each of ShareLabels, with totals per label ("" for all turns).
// Each turn's voice is the manifest's: PairVoices for a set drawn from a pool, else the
// fixed Voices map. A turn whose speaker has no voice there is an error naming it.
func VoiceShares(d *Dataset) ([]VoiceShare, map[string]int, error) {
	if d.Manifest == nil {
		return nil, nil, fmt.Errorf("%s has no manifest (%s): the voices are unknown; build the set", d.File, ManifestFile)
	}
	m := d.Manifest
	byVoice := map[string]*VoiceShare{}
	totals := map[string]int{}
	for _, s := range d.Scenarios {
		voices := m.Voices
		if m.PairVoices != nil {
			voices = m.PairVoices[s.PairID]
		}
		for i, t := range s.Turns {
			v, ok := voices[t.Speaker]
			if !ok {
				return nil, nil, fmt.Errorf("scenario %s turn %d: speaker %s has no voice in %s", s.ScenarioID, i, t.Speaker, ManifestFile)
			}
			vs := byVoice[v]
			if vs == nil {
				vs = &VoiceShare{Voice: v, Labels: map[string]int{}, LabelShare: map[string]float64{}}
				byVoice[v] = vs
			}
			vs.Turns++
			totals[""]++
			for _, l := range ShareLabels {
				if t.Label == l {
					vs.Labels[l]++
					totals[l]++
				}
			}
		}
	}
	out := make([]VoiceShare, 0, len(byVoice))
	for _, vs := range byVoice {
		vs.TurnShare = float64(vs.Turns) / float64(totals[""])
		for _, l := range ShareLabels {
			if totals[l] > 0 {
				vs.LabelShare[l] = float64(vs.Labels[l]) / float64(totals[l])
			}
		}
		out = append(out, *vs)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Voice < out[j].Voice })
	return out, totals, nil
}
