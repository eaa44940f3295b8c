package main

import (
	"testing"

	"github.com/duplexmpe/duplexmpe/plugins/pocketsphinx/sphinx"
)

func TestNameWhereSpotted(t *testing.T) {
	w := func(text string, s, e float64) sphinx.Word { return sphinx.Word{Text: text, Start: s, End: e} }
	aria := func(s, e float64) sphinx.Word { return w("aria", s, e) }
	// "Aria, how much butter goes into the mash?" as PocketSphinx heard a neural voice.
	heard := []sphinx.Word{w("oh", 0.02, 0.2), w("yeah", 0.2, 0.45), w("how", 0.6, 0.8), w("much", 0.8, 1.0), w("but", 1.0, 1.2)}
	for _, c := range []struct {
		name string
		ws   []sphinx.Word
		hits []sphinx.Word
		want string
	}{
		{"the words heard for the name become the name", heard, []sphinx.Word{aria(0.0, 0.5)}, "aria how much but"},
		{"no detection, no name", heard, nil, "oh yeah how much but"},
		{"a word half outside the detection stays", heard, []sphinx.Word{aria(0.0, 0.3)}, "aria yeah how much but"},
		{"a detection over no word goes before the next word", []sphinx.Word{w("how", 0.6, 0.8)}, []sphinx.Word{aria(0.1, 0.5)}, "aria how"},
		{"a detection after every word closes the transcript", []sphinx.Word{w("what", 0.1, 0.3), w("time", 0.3, 0.6)}, []sphinx.Word{aria(0.7, 1.1)}, "what time aria"},
		{"two detections, two names", []sphinx.Word{w("are", 0.0, 0.2), w("you", 0.2, 0.4), w("said", 0.5, 0.7), w("area", 0.8, 1.2)},
			[]sphinx.Word{aria(0.0, 0.4), aria(0.8, 1.2)}, "aria said aria"},
	} {
		if got := nameWhereSpotted(c.ws, c.hits, "aria"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestOpensWithName(t *testing.T) {
	hit := []sphinx.Word{{Text: "aria", Start: 0.3, End: 0.5}}
	for _, c := range []struct {
		text string
		hits []sphinx.Word
		want bool
	}{
		{"aria how many teams signed up", hit, true},
		{"okay aria what time is it", hit, true},
		{"aria's keeping the tally", hit, false}, // the name with 's is not the name word itself
		{"so then aria said", hit, false},
		{"aria how many teams signed up", nil, false}, // the transcriber alone heard it
		{"", hit, false},
	} {
		if got := opensWithName(c.text, c.hits, "aria"); got != c.want {
			t.Errorf("opensWithName(%q, %d hits) = %v, want %v", c.text, len(c.hits), got, c.want)
		}
	}
}
