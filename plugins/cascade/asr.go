package main

import (
	"fmt"
	"strings"

	"github.com/duplexmpe/duplexmpe/plugins/pocketsphinx/sphinx"
)

// What the cascade hears with, and how hard it listens (README.md, "Listening"):
//   - the spotter: PocketSphinx's keyphrase search for the assistant's name over every
//     utterance, about 0.03 CPU s per second of speech (no language model);
//   - the transcriber: the full en-us decoder (language model), run only on the
//     utterances the spotter heard the name in, with its search bounded by
//     transcriberOptions.
const (
	// defaultSpot is the keyphrase spotted: the assistant's name as the dictionary
	// spells it (aria: AA R IY AH).
	defaultSpot = "aria"
	// defaultSpotThreshold: on the shipped dataset's 274 turns (each clip as one
	// utterance) it fires on every turn addressed to Aria by name (36 of 36: 12 T, 24
	// N4_Q) and on 67 in all (209 of 799 s). Thresholds measured (without -ds 2): 1e-30
	// fires on 165 turns, 1e-20 on 100, 1e-5 on 69, 1 on 65, 1e10 on 56, all missing
	// none of the 36; 1e20 fires on 36 but misses 10 of them. 1e-5 keeps a margin of 15
	// orders of magnitude below the first misses.
	defaultSpotThreshold = 1e-5
)

// transcriberOptions bound the full decoder's search: at most 3000 HMMs and 5 word
// exits per frame (the library's defaults: 30000 and no bound). On the shipped dataset's
// 60 turns naming Aria it took 0.244 CPU s per s against the default's 0.328, with the
// same name-policy decision on all 60 and 1.7% of words different. Narrower beams
// (-beam 1e-30 -wbeam 1e-20) cost 0.10 but changed 30 of 60 decisions; -topn 2 changed
// 3; -ds 2 saved nothing here.
var transcriberOptions = []string{"-maxhmmpf", "3000", "-maxwpf", "5"}

// spotterOptions: the spotter looks at every other frame (-ds 2), 0.018 CPU s per s of
// speech against 0.032, and fired on the same addressed turns (all).
var spotterOptions = []string{"-ds", "2"}

// transcriberModel is the en-us model with the transcriber's search settings.
func transcriberModel() sphinx.Model {
	m := sphinx.DefaultModel()
	m.Options = transcriberOptions
	return m
}

// spotterModel spots phrase with the en-us acoustic model and dictionary.
func spotterModel(phrase string, threshold float64) sphinx.Model {
	m := sphinx.DefaultModel()
	m.Keyphrase, m.KWSThreshold, m.Options = phrase, threshold, spotterOptions
	return m
}

// searchIdentity describes how the cascade listens, for its identity: a change of the
// spotter or of the search settings changes what it hears.
func searchIdentity(s settings) string {
	search := "two-pass " + strings.Join(transcriberOptions, " ")
	if s.spot == "" {
		return "every utterance transcribed, " + search
	}
	return fmt.Sprintf("spotter %q (kws_threshold %g %s), then %s on the utterances it fires on", s.spot, s.spotThresh, strings.Join(spotterOptions, " "), search)
}
