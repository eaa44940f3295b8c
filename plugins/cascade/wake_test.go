package main

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/plugins/pocketsphinx/sphinx"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// The wake-word rule, in process with the real Silero and PocketSphinx: a speaker says
// the name, pauses long enough for the VAD to close the utterance, and goes on. The
// request after "Aria." is answered; a statement after it is not, nor a request after
// another name; the name alone, with nothing after it, is not answered either. With
// wake_window = 0 the request after the pause is not answered (the name policy alone
// needs the name inside the utterance).
func TestWakeWordThenRequest(t *testing.T) {
	ctx := context.Background()
	say := func(voice, text string) []float32 {
		t.Helper()
		p, err := speak(ctx, "flite", voice, text, rate)
		if err != nil {
			t.Skip(err)
		}
		return p.Samples
	}
	silence := func(s float64) []float32 { return make([]float32, int(s*rate)) }
	join := func(parts ...[]float32) []float32 {
		var out []float32
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	aria, declan := say("awb", "Aria."), say("awb", "Declan.")
	request := say("awb", "What time is the exam tomorrow?")
	statement := say("awb", "The bus leaves at ten past eleven.")
	for _, c := range []struct {
		name     string
		config   map[string]any
		input    []float32
		answered bool
	}{
		{"name, pause, request", nil, join(silence(1), aria, silence(0.7), request, silence(4)), true},
		{"name, pause, statement", nil, join(silence(1), aria, silence(0.7), statement, silence(4)), false},
		{"other name, pause, request", nil, join(silence(1), declan, silence(0.7), request, silence(4)), false},
		{"name alone", nil, join(silence(1), aria, silence(4)), false},
		{"name, long pause, request", nil, join(silence(1), aria, silence(2.5), request, silence(4)), false},
		{"wake_window 0", map[string]any{"wake_window": 0.0}, join(silence(1), aria, silence(0.7), request, silence(4)), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &cascade{}
			if err := m.Configure(ctx, c.config); err != nil {
				t.Fatal(err)
			}
			defer m.closeLocked()
			conv, err := m.Start(ctx, sdk.ConversationStart{ID: c.name})
			if err != nil {
				t.Fatal(err)
			}
			defer conv.Close()
			var spoke []string
			var audible int
			for i := 0; i+frameSize <= len(c.input); i += frameSize {
				out, err := conv.Step(ctx, c.input[i:i+frameSize])
				if err != nil {
					t.Fatal(err)
				}
				if out.Text != "" {
					spoke = append(spoke, out.Text)
				}
				audible += len(out.Samples)
			}
			t.Logf("answers %q, %d samples", spoke, audible)
			if (audible > 0) != c.answered {
				t.Errorf("answered %v (%q); want %v", audible > 0, spoke, c.answered)
			}
		})
	}
}

// The wake spotter hears the name in every pronunciation it is given: flite saying "I
// eat" (AY IY T) is heard by the default list, which spells the name AY IY IH as the
// dev split's voice C says it, and not by the dictionary's pronunciation alone.
func TestWakeSpellings(t *testing.T) {
	ctx := context.Background()
	clip, err := speak(ctx, "flite", "kal16", "I eat.", rate)
	if err != nil {
		t.Skip(err)
	}
	samples := append(append(make([]float32, rate/5), clip.Samples...), make([]float32, rate/5)...)
	for _, c := range []struct {
		spellings []string
		fires     bool
	}{{defaultWakeSpellings, true}, {defaultWakeSpellings[:1], false}} {
		d, dir, err := loadWakeSpotter("aria", c.spellings, defaultWakeThreshold)
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		hits, err := d.TranscribeWords(samples)
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
		if (len(hits) > 0) != c.fires {
			t.Errorf("spellings %q: detections %v; want fired %v", c.spellings, hits, c.fires)
		}
	}
	// The spotter's files live as long as the plugin's configuration, and no longer.
	c := &cascade{}
	if err := c.Configure(ctx, nil); err != nil {
		t.Fatal(err)
	}
	dir := c.wakeDir
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the wake spotter's files: %v", err)
	}
	c.closeLocked()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the wake spotter's files %s outlive the plugin's configuration: %v", dir, err)
	}
	c = &cascade{}
	if err := c.Configure(ctx, map[string]any{"wake_pronunciations": []any{"AA R XX AH"}}); err == nil {
		c.closeLocked()
		t.Errorf("Configure accepted the unknown phone XX (PocketSphinx would skip the pronunciation silently)")
	}
}

// enUSPhoneList, which wake_pronunciations are checked against, is exactly the set of
// phones the en-us model's own dictionary spells with (read from the installed file).
func TestPhoneListIsTheDictionarys(t *testing.T) {
	raw, err := os.ReadFile(sphinx.DefaultDict)
	if err != nil {
		t.Skipf("pocketsphinx dictionary not available: %v", err)
	}
	used := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		for _, ph := range f[min(1, len(f)):] {
			used[ph] = true
		}
	}
	var got []string
	for ph := range used {
		got = append(got, ph)
	}
	slices.Sort(got)
	want := slices.Sorted(maps.Keys(enUSPhones))
	if !slices.Equal(got, want) {
		t.Errorf("the dictionary %s spells with %q; enUSPhoneList has %q", sphinx.DefaultDict, got, want)
	}
}
