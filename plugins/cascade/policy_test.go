package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Transcripts as PocketSphinx gives them on flite speech of the shipped scenarios.
func TestAddressedByName(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"are you so when does the chicken comment", true},          // T, explicit
		{"are you how many tablespoons are in a quarter cup", true}, // N4_Q
		{"quick aria how much did the sourdough bring in", true},
		{"what time is it aria", true},
		{"aria is it going to rain tonight", true},
		{"aria can you set a timer", true},
		{"are you if we start the fire at sunset and it burns for half an hour when does it go out", true},
		{"are you saved us last week when i forgot the rice", false}, // N1
		{"aria found us this hotel so if it's bad blame her", false},
		{"aria tracks the register better than i do let her do it", false},
		{"aria told me the shop closes at six so no rush", false},
		{"my mom thinks aria writes my essays she doesn't", false},
		{"okay so when does the chicken come out aria saved us", false},
		{"aria's been playing the same three songs all afternoon", false},
		{"aria was taking notes the whole time she'll have it", false},
		{"aryan you are advice assistant in a room with several people", false}, // preamble
		{"since you're the one keeping the kitchen timers when does the chicken come out", false},
		{"nadia can you grab the lemons out of the fridge", false},
		{"", false},
	} {
		if got := addressedByName(c.text, defaultNames); got != c.want {
			t.Errorf("addressedByName(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func TestNumberPhrases(t *testing.T) {
	got := numberPhrases(words("a hundred and twenty miles left, then six thirty and 42 dollars, one and a half hours, two point five"))
	// "a" alone is not a number word: the first phrase starts at "hundred".
	want := []string{"hundred and twenty miles", "six thirty", "42 dollars", "one and a half hours", "two point five"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("numberPhrases = %q, want %q", got, want)
	}
}

func TestHeuristicAnswer(t *testing.T) {
	facts := []string{
		"okay the chicken goes in at six twenty done",
		"recipe says forty five minutes at four hundred",
		"these potatoes are never going to peel themselves",
	}
	// The fact sharing a content word ("chicken") wins over the more recent one.
	if got := heuristicAnswer("aria so when does the chicken come out", facts, defaultNames); !strings.HasPrefix(got, "It's six twenty as I heard okay the chicken") {
		t.Errorf("chicken: %q", got)
	}
	// No shared word: the most recent number phrase.
	if got := heuristicAnswer("aria how long is the drive", facts, defaultNames); !strings.HasPrefix(got, "It's four hundred as") {
		t.Errorf("drive: %q", got)
	}
	if got := heuristicAnswer("aria what is the potato plan", facts[2:], defaultNames); !strings.Contains(got, "potatoes") {
		t.Errorf("no number: %q", got)
	}
	// A long utterance is quoted by its first maxQuoted words only.
	long := "aryan you are advice assistant in a room with several people who are talking among themselves listen to the whole conversation answer it first"
	if got := heuristicAnswer("aria so when does the chicken come out", []string{long}, defaultNames); got != "It's first as I heard aryan you are advice assistant in a room with several people who." {
		t.Errorf("long fact: %q", got)
	}
	if got := heuristicAnswer("aria what time is it", nil, defaultNames); got != fallbackAnswer {
		t.Errorf("nothing heard: %q", got)
	}
}

func TestParseSettings(t *testing.T) {
	s, err := parseSettings(map[string]any{"names": []any{"Aria", "Are You"}, "end_silence": 0.5})
	if err != nil || strings.Join(s.names, ",") != "aria,are you" || s.vad.MergePause != 0.5 || s.policy != policyName {
		t.Errorf("settings %+v, %v", s, err)
	}
	s, err = parseSettings(map[string]any{"wake_pronunciations": []any{"aa r iy ah", " ow  iy ih "}, "wake_window": 0.0})
	if err != nil || strings.Join(s.wakeSpell, ",") != "AA R IY AH,OW IY IH" || s.wake != 0 || wakeIdentity(s) != "off" {
		t.Errorf("wake settings %q window %g (%s), %v", s.wakeSpell, s.wake, wakeIdentity(s), err)
	}
	_, err = parseSettings(map[string]any{"wake_pronunciations": []any{"AA R XX AH"}})
	if err == nil || !strings.Contains(err.Error(), `wake_pronunciations: "AA R XX AH" has "XX"`) {
		t.Errorf("an unknown phone: %v; want the pronunciation and the phone named", err)
	}
	for _, bad := range []map[string]any{
		{"policy": "keyword"},
		{"policy": "llm"}, // no endpoint
		{"names": []any{}},
		{"names": []any{"  "}},
		{"names": "aria"},
		{"threshold": 1.5},
		{"end_silence": "0.4"},
		{"compute_charge": -1.0},
		{"compute_charge": 2.0},                   // wall mode only
		{"compute": "wall", "asr_cost": 0.5},      // model mode only
		{"compute": "wall", "compute_fixed": 1.0}, // model mode only
		{"compute": "measured"},
		{"asr_cost": -0.1},
		{"voice": "-o"},
		{"llm_timeout": 0.0},
		{"spot_threshold": 0.0},
		{"spot": 3.0},
		{"policy": "llm", "endpoint": "http://localhost:1/v1", "spot": "hey aria"}, // the llm policy transcribes everything
		{"wake_pronunciations": []any{}},
		{"wake_pronunciations": []any{"  "}},
		{"wake_pronunciations": []any{"AA R XX AH"}}, // XX: no phone of the en-us model
		{"wake_pronunciations": []any{3.0}},
		{"wake_pronunciations": "AA R IY AH"},
		{"wake_window": -1.0},
		{"wake_window": 11.0},
		{"wake_threshold": 0.0},
	} {
		if _, err := parseSettings(bad); err == nil {
			t.Errorf("config %v accepted", bad)
		}
	}
}

// The name policy spots its name first by default; "" transcribes every utterance, and
// the llm policy always does (the spot default, as a host passes it, is accepted).
func TestSpotSettings(t *testing.T) {
	s, err := parseSettings(map[string]any{})
	if err != nil || s.spot != "aria" || s.spotThresh != defaultSpotThreshold {
		t.Errorf("defaults: spot %q threshold %g, %v", s.spot, s.spotThresh, err)
	}
	s, err = parseSettings(map[string]any{"spot": "Hey, Aria", "spot_threshold": 1e-10})
	if err != nil || s.spot != "hey aria" || s.spotThresh != 1e-10 || !strings.Contains(searchIdentity(s), `spotter "hey aria" (kws_threshold 1e-10 `) {
		t.Errorf("spot %q threshold %g (%s), %v", s.spot, s.spotThresh, searchIdentity(s), err)
	}
	s, err = parseSettings(map[string]any{"spot": ""})
	if err != nil || s.spot != "" || !strings.HasPrefix(searchIdentity(s), "every utterance transcribed") {
		t.Errorf("no spotting: %q (%s), %v", s.spot, searchIdentity(s), err)
	}
	s, err = parseSettings(map[string]any{"policy": "llm", "endpoint": "http://localhost:1/v1", "spot": defaultSpot})
	if err != nil || s.spot != "" {
		t.Errorf("llm policy: spot %q, %v", s.spot, err)
	}
}

func TestExtractJSON(t *testing.T) {
	for in, want := range map[string]string{
		"```json\n{\"respond\": true}\n```": `{"respond": true}`,
		`Sure: {"a": {"b": 1}} done`:        `{"a": {"b": 1}}`,
		"no object":                         "no object",
		"} {":                               "} {",
	} {
		if got := extractJSON(in); got != want {
			t.Errorf("extractJSON(%q) = %q, want %q", in, got, want)
		}
	}
}

// Transcripts and LLM replies come from outside: any text is handled without a panic,
// and an answer is always something to say.
func FuzzPolicy(f *testing.F) {
	for _, s := range []string{"are you so when does the chicken comment", "aria", "aria's", "are", "six twenty and", "{}", "\x00\xff aria what"} {
		f.Add(s, "okay the chicken goes in at six twenty")
	}
	f.Fuzz(func(t *testing.T, text, fact string) {
		addressedByName(text, defaultNames)
		numberPhrases(words(text))
		extractJSON(text)
		a := heuristicAnswer(text, []string{fact, text}, defaultNames)
		if strings.TrimSpace(a) == "" || !utf8.ValidString(a) && utf8.ValidString(text) && utf8.ValidString(fact) {
			t.Errorf("answer %q", a)
		}
	})
}
