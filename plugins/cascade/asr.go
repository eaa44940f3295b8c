package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/timeline"
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

// nameWhereSpotted is the transcript of words with the name put where the spotter heard
// it: the words that lie mostly inside a detection (more than half of each word's time)
// are replaced by name, once per detection. The transcriber alone often hears the name
// as other words, and which words depends on the voice ("are you" and "aryan" for
// flite's, "ah yes", "oh yeah", "i am" for neural ones), while the spotter, matching the
// name's phones, hears it where it is; so the name policy reads the name from the
// spotter and the request around it from the transcriber. A detection that covers no
// word (the transcriber heard the name as silence or noise) puts the name before the
// first word that starts after the detection began.
func nameWhereSpotted(ws, hits []sphinx.Word, name string) string {
	out := make([]string, 0, len(ws)+len(hits))
	placed := make([]bool, len(hits))
	for _, w := range ws {
		in := -1
		for h, hit := range hits {
			overlap := min(w.End, hit.End) - max(w.Start, hit.Start)
			if overlap > (w.End-w.Start)/2 {
				in = h
				break
			}
		}
		if in < 0 {
			for h, hit := range hits {
				if !placed[h] && hit.Start <= w.Start {
					out, placed[h] = append(out, name), true
				}
			}
			out = append(out, w.Text)
			continue
		}
		if !placed[in] {
			out, placed[in] = append(out, name), true
		}
	}
	for h := range hits {
		if !placed[h] {
			out = append(out, name)
		}
	}
	return strings.Join(out, " ")
}

// opensWithName reports whether the name opens the utterance: the spotter heard it (it
// fired) and, with the name put where it heard it (nameWhereSpotted), the name is among
// the transcript's first vocativeReach words ("Aria, ...", "Okay, Aria, ..."). The name
// policy takes such an utterance as addressed to the assistant whatever the transcriber
// made of the words after it, as a keyword-triggered assistant does with its wake word
// ("Aria's been great today" included: that is this baseline's known error). The
// spotter's own start time is not used: it often marks only the end of the name (a
// detection of 0.2 s inside a 0.45 s "Aria").
func opensWithName(text string, hits []sphinx.Word, name string) bool {
	if len(hits) == 0 {
		return false
	}
	ws := words(text)
	for i := 0; i < len(ws) && i < vocativeReach; i++ {
		if ws[i] == name {
			return true
		}
	}
	return false
}

// utterancePad is how much audio on each side of a Silero utterance the cascade hears
// with it. PocketSphinx starts and ends an utterance in silence; cut at the VAD's edges,
// the name's first and last phones were lost. Measured on the dev split's 177 turns that
// open with "Aria" (TestMeasureWakeSpellings, README.md "The pad and the wake word"): the
// spotter heard the name in the utterance holding it in 116 without the pad, 139 with 0.2 s.
const utterancePad = 0.2

// heardSpan is the samples [s, e) of an input of n samples that the cascade hears for
// the utterance ep: ep with pad seconds of what surrounds it on each side.
func heardSpan(ep timeline.Episode, pad float64, n int) (s, e int) {
	return max(0, int((ep.Start-pad)*rate)), min(int(math.Ceil((ep.End+pad)*rate)), n)
}

// defaultWakeWindow: several voices pause after a vocative "Aria," long enough (about
// 0.5 s) for the VAD to close the utterance, so the name arrives alone and the request
// in the next utterance.
const defaultWakeWindow = 1.5

// loneName reports whether an utterance is the name and nothing else: a wake word.
func loneName(text, name string) bool {
	ws := words(text)
	return len(ws) == 1 && ws[0] == name
}

// wakeMaxSeconds: an utterance this short (Silero's episode, without the pad) may be the
// name alone, and the wake spotter listens to it.
const wakeMaxSeconds = 0.8

// defaultWakeSpellings are the pronunciations the wake spotter knows: the dictionary's,
// and two without the r, as the dev split's Kokoro voices jf_gongitsune (A) and
// jf_tebukuro (C) say "Aria," before their pause (PocketSphinx's phone decoder heard
// "ow iy ah", "ay iy ih", "ow iy ih"; README.md "The pad and the wake word").
var defaultWakeSpellings = []string{"AA R IY AH", "AY IY IH", "OW IY IH"}

// defaultWakeThreshold is each pronunciation's detection threshold.
const defaultWakeThreshold = 1e-5

// loadWakeSpotter loads the wake spotter: PocketSphinx's keyphrase-list search over a
// dictionary that spells name each way in spellings (name, name(2), ...), every one at
// threshold. The dictionary and list are written to a new directory, which the caller
// removes once the spotter (and every decoder loaded from its model) is closed; on
// failure nothing is left behind.
func loadWakeSpotter(name string, spellings []string, threshold float64) (*sphinx.Decoder, string, error) {
	dir, err := os.MkdirTemp("", "cascade-wake-")
	if err != nil {
		return nil, "", err
	}
	word := strings.ReplaceAll(name, " ", "_")
	var dict, list strings.Builder
	for i, p := range spellings {
		w := word
		if i > 0 {
			w = fmt.Sprintf("%s(%d)", word, i+1)
		}
		fmt.Fprintf(&dict, "%s %s\n", w, p)
		fmt.Fprintf(&list, "%s /%g/\n", w, threshold)
	}
	m := sphinx.DefaultModel()
	m.Dict, m.Keyphrases, m.Options = filepath.Join(dir, "wake.dict"), filepath.Join(dir, "wake.kws"), spotterOptions
	err = os.WriteFile(m.Dict, []byte(dict.String()), 0o644)
	if err == nil {
		err = os.WriteFile(m.Keyphrases, []byte(list.String()), 0o644)
	}
	var d *sphinx.Decoder
	if err == nil {
		d, err = sphinx.Load(m)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	return d, dir, nil
}

// wakeOn: a lone name arms the assistant (the name policy, with a wake window).
func (s settings) wakeOn() bool { return s.policy == policyName && s.wake > 0 }

// wakeIdentity describes the wake-word rule for the cascade's identity.
func wakeIdentity(s settings) string {
	if !s.wakeOn() {
		return "off"
	}
	return fmt.Sprintf("utterances up to %g s spotted for %q (%s) at %g; the next utterance within %g s is heard whole", wakeMaxSeconds, s.names[0], strings.Join(s.wakeSpell, " | "), s.wakeThresh, s.wake)
}

// enUSPhones are the phones of the en-us acoustic model (those its dictionary spells
// with). A dictionary line with another phone is skipped by PocketSphinx without an
// error, so a pronunciation is checked against them first.
var enUSPhones = set(strings.Fields(enUSPhoneList)...)

const enUSPhoneList = "AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH UH UW V W Y Z ZH"
