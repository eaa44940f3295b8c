package dataset

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// Before, control characters passed `dataset validate` and were printed raw (an ESC
// sequence cleared the screen and set the terminal title), and 200 KB scenario ids and
// gold answers were accepted. Now every string of a scenario, the optional fields
// (gold_accepted, names, cue) included, is checked for control characters (tab and
// newline allowed in text), ids and answers for length, and a violation prints escaped.
func TestControlCharactersAndLengthsAreViolations(t *testing.T) {
	esc := "\x1b[2J\x1b]0;owned\x07"
	cases := []struct {
		name string
		edit func(s *Scenario)
		rule Rule
	}{
		{"scenario_id", func(s *Scenario) { s.ScenarioID += esc }, RuleControlChar},
		{"pair_id", func(s *Scenario) { s.PairID += "\r" }, RuleControlChar},
		{"turn text", func(s *Scenario) { s.Turns[0].Text += esc }, RuleControlChar},
		{"speaker", func(s *Scenario) { s.Turns[0].Speaker += "\x00" }, RuleControlChar},
		{"gold_answer", func(s *Scenario) { s.GoldAnswer += "\x1b" }, RuleControlChar},
		{"gold_accepted", func(s *Scenario) { s.GoldAccepted = []string{"ok", "bad\x1b"} }, RuleControlChar},
		{"names", func(s *Scenario) { s.Names = map[string]string{"A": "Sam\x1b"} }, RuleControlChar},
		{"cue", func(s *Scenario) { s.Cue = "the timer\x7f" }, RuleControlChar},
		{"attribute", func(s *Scenario) { s.Attributes.Setting += "\u009b" }, RuleControlChar},
		{"bidi override", func(s *Scenario) { s.Turns[0].Text += "\u202e" }, RuleControlChar},
		{"long scenario_id", func(s *Scenario) { s.ScenarioID = strings.Repeat("x", 200<<10) }, RuleLength},
		{"zero-width pair_id", func(s *Scenario) { s.PairID += "\u200b" }, RuleControlChar},
		{"zero-width joiner in a speaker", func(s *Scenario) { s.Turns[0].Speaker += "\u200d" }, RuleControlChar},
		{"no-break space in scenario_id", func(s *Scenario) { s.ScenarioID += "\u00a0x" }, RuleControlChar},
		{"byte-order mark in a label", func(s *Scenario) { s.Turns[0].Label = "\ufeff" + s.Turns[0].Label }, RuleControlChar},
		{"long gold_answer", func(s *Scenario) { s.GoldAnswer = strings.Repeat("eleven ", 30000) }, RuleLength},
		{"long gold_accepted", func(s *Scenario) { s.GoldAccepted = []string{strings.Repeat("a", MaxAnswerLength+1)} }, RuleLength},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := validPair()
			c.edit(&s)
			var got []Violation
			for _, v := range ValidateScenario(&s) {
				if v.Rule == c.rule {
					got = append(got, v)
				}
			}
			if len(got) == 0 {
				t.Fatalf("no %s violation: %v", c.rule, ValidateScenario(&s))
			}
			for _, v := range ValidateScenario(&s) {
				if strings.ContainsAny(v.String(), "\x1b\x00\r\x07\x7f\u009b\u202e") {
					t.Errorf("a violation prints a raw control character: %q", v.String())
				}
				if n := len(v.String()); n > 4<<10 {
					t.Errorf("a violation is %d bytes long: a long id must be shortened, not echoed whole", n)
				}
			}
		})
	}
	// Tabs and newlines in text are allowed; a clean pair has no such violation.
	s, _ := validPair()
	s.Turns[0].Text = "Line one,\tthen\nline two."
	s.GoldAnswer = "eleven\tminutes"
	for _, v := range ValidateScenario(&s) {
		if v.Rule == RuleControlChar || v.Rule == RuleLength {
			t.Errorf("tab or newline in text refused: %v", v)
		}
	}
}

// Before, "café" spelled with a combining accent (NFD) and with é (NFC) were two
// scenario ids, and two speakers, that print alike. Now ids and labels are read in NFC.
func TestIDsAreReadInNFC(t *testing.T) {
	s, _ := validPair()
	nfc, nfd := "caf\u00e9", "cafe\u0301"
	s.ScenarioID, s.Speakers[0] = nfd+"-1", nfd
	for i := range s.Turns {
		if s.Turns[i].Speaker == "A" {
			s.Turns[i].Speaker = nfd
		}
	}
	line, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseScenario(line)
	if err != nil {
		t.Fatal(err)
	}
	if got.ScenarioID != nfc+"-1" || got.Speakers[0] != nfc {
		t.Errorf("read as %q and %q, want the NFC spellings %q and %q", got.ScenarioID, got.Speakers[0], nfc+"-1", nfc)
	}
	for i, tu := range got.Turns {
		if strings.Contains(tu.Speaker, "\u0301") {
			t.Errorf("turn %d's speaker %q is still NFD", i, tu.Speaker)
		}
	}
}

// Before, nothing bounded a scenario: 10,010 short turns took the host past 4 GB 171 s
// into play. Now a scenario of more than protocol.MaxTurns turns, or more than
// protocol.MaxScenarioSeconds of audio, is a violation naming the scenario.
func TestScenarioBounds(t *testing.T) {
	s, _ := validPair()
	for len(s.Turns) <= protocol.MaxTurns {
		s.Turns = append(s.Turns, Turn{Speaker: "A", Text: "And another thing.", Label: "N3"})
	}
	checkSize := func(what string, want string) {
		t.Helper()
		for _, v := range ValidateScenario(&s) {
			if v.Rule == RuleScenarioSize {
				if !strings.Contains(v.String(), "scenario "+s.ScenarioID) || !strings.Contains(v.String(), want) {
					t.Errorf("%s: %q does not name the scenario and %q", what, v.String(), want)
				}
				return
			}
		}
		t.Errorf("%s: no %s violation", what, RuleScenarioSize)
	}
	checkSize("too many turns", "at most 100")
	s, _ = validPair()
	for i := range s.Turns {
		s.Turns[i].DurationS = 119 // each within a clip's bound; 903 s with the gaps
		s.Turns[i].GapAfterS = 10
	}
	checkSize("too much audio", "at most 900 s")
	s, _ = validPair()
	for _, v := range ValidateScenario(&s) {
		if v.Rule == RuleScenarioSize {
			t.Errorf("a valid pair: %v", v)
		}
	}
}
