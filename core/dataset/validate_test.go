package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
)

func validPair() (Scenario, Scenario) {
	attrs := Attributes{Setting: "kitchen", Activity: "cooking dinner", Relationship: "roommates", Devices: "Aria and a phone assistant", Register: "casual"}
	turns := []Turn{
		{Speaker: "A", Text: "The pasta needs eleven minutes once the water boils.", Label: "N3"},
		{Speaker: "B", Text: "Sam, can you grab the colander?", Label: "N2", Addressee: "human"},
		{Speaker: "C", Text: "Aria, how many grams are in a pound?", Label: "N4_Q"},
		{Speaker: "A", Text: "It's about four hundred fifty, I looked it up.", Label: "N4_R"},
		{Speaker: "B", Text: "Aria, the water started boiling at six ten. When is the pasta done?", Label: "T"},
		{Speaker: "C", Text: "Hey Siri, play something calm.", Label: "N2", Addressee: "device"},
		{Speaker: "A", Text: "Aria has been a lifesaver this week.", Label: "N1"},
	}
	e := Scenario{PairID: "p1", Condition: "explicit", ScenarioID: "p1-explicit", Attributes: attrs,
		Speakers: []string{"A", "B", "C"}, Turns: turns, GoldAnswer: "6:21", TPosition: "middle"}
	im := e
	im.Condition, im.ScenarioID = "implicit", "p1-implicit"
	im.Turns = slices.Clone(turns)
	im.Turns[4].Text = "You keep the kitchen timers, so when is the pasta done if the water boiled at six ten?"
	return e, im
}

func rules(vs []Violation) []Rule {
	var out []Rule
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return out
}

func TestValidPairHasNoViolations(t *testing.T) {
	e, im := validPair()
	d := &Dataset{File: "x.jsonl", Scenarios: []Scenario{e, im}, Lines: []int{1, 2}}
	if vs := Validate(d); len(vs) != 0 {
		t.Fatalf("valid pair reported %v", vs)
	}
}

// Every rule has a failing example: the mutation breaks exactly that rule, and the
// violation names the scenario, the turn and the rule.
func TestEveryRuleHasAFailingExample(t *testing.T) {
	cases := []struct {
		rule   Rule
		turn   int
		mutate func(e, im *Scenario)
	}{
		{RuleScenarioID, -1, func(e, im *Scenario) { im.ScenarioID = e.ScenarioID }},
		{RulePairID, -1, func(e, im *Scenario) { e.PairID = ""; im.PairID = "" }},
		{RuleCondition, -1, func(e, im *Scenario) { e.Condition = "explicitt" }},
		{RuleAttributes, -1, func(e, im *Scenario) { e.Attributes.Register = " " }},
		{RuleSpeakers, -1, func(e, im *Scenario) { e.Speakers = []string{"A", "B", "C", "D", "E"} }},
		{RuleTurnSpeaker, 0, func(e, im *Scenario) { e.Turns[0].Speaker = "Z" }},
		{RuleTurnText, 1, func(e, im *Scenario) { e.Turns[1].Text = "  " }},
		{RuleLabel, 6, func(e, im *Scenario) { e.Turns[6].Label = "N5" }},
		{RuleTCount, -1, func(e, im *Scenario) { e.Turns[6].Label = "T"; e.Turns[6].Text = "Aria, and what is seven times six?" }},
		{RuleTFirst, 0, func(e, im *Scenario) { moveT(e, 0) }},
		{RuleTLast, 6, func(e, im *Scenario) { moveT(e, 6) }},
		{RuleTPosition, 4, func(e, im *Scenario) { e.TPosition = "early-middle" }},
		{RuleN4Question, 2, func(e, im *Scenario) { e.Turns[3].Label = "N3"; im.Turns[3].Label = "N3" }},
		{RuleN4Resolution, 3, func(e, im *Scenario) { e.Turns[2].Label = "N3"; im.Turns[2].Label = "N3" }},
		{RuleAddressee, 1, func(e, im *Scenario) { e.Turns[1].Addressee = ""; im.Turns[1].Addressee = "" }},
		{RuleGoldAnswer, -1, func(e, im *Scenario) { e.GoldAnswer = ""; im.GoldAnswer = "" }},
		{RuleExplicitName, 4, func(e, im *Scenario) { e.Turns[4].Text = "When is the pasta done?" }},
		{RuleImplicitName, 4, func(e, im *Scenario) { im.Turns[4].Text = "Aria, when is it done?" }},
		{RulePairMissing, -1, func(e, im *Scenario) { im.Condition = "explicit" }},
		{RulePairTurnCount, -1, func(e, im *Scenario) { im.Turns = im.Turns[:6] }},
		{RulePairLabels, 6, func(e, im *Scenario) { im.Turns[6].Label = "N3" }},
		{RulePairGold, -1, func(e, im *Scenario) { im.GoldAnswer = "6:22" }},
		{RulePairRewrite, 0, func(e, im *Scenario) { im.Turns[0].Text = "The pasta needs twelve minutes." }},
		{RulePairSameT, 4, func(e, im *Scenario) { im.Turns[4].Text = e.Turns[4].Text }},
		{RulePairTSpeaker, 4, func(e, im *Scenario) { im.Turns[4].Speaker = "A" }},
		{RulePairTPosition, -1, func(e, im *Scenario) { im.TPosition = "late-middle"; moveT(im, 5) }},
		{RulePairN4Edit, -1, func(e, im *Scenario) { im.Turns[3].Text = "Oh, it's six, the box says so." }},
		{RuleAnswerType, -1, func(e, im *Scenario) { e.AnswerType = "time"; im.AnswerType = "time" }},
	}
	// Issue 21: only the T position bucket and N4 edits are warnings; a different turn
	// count, label sequence or wording outside T and the turn before it is an error.
	warnings := map[Rule]bool{RulePairTPosition: true, RulePairN4Edit: true}
	for _, c := range cases {
		t.Run(string(c.rule), func(t *testing.T) {
			e, im := validPair()
			e.Turns, im.Turns = slices.Clone(e.Turns), slices.Clone(im.Turns)
			c.mutate(&e, &im)
			d := &Dataset{File: "set.jsonl", Scenarios: []Scenario{e, im}, Lines: []int{1, 2}}
			vs := Validate(d)
			if warnings[c.rule] {
				// A difference the paper allows: a warning, never an error.
				for _, v := range vs {
					if v.Rule == c.rule {
						t.Fatalf("%s reported as an error: %v", c.rule, v)
					}
				}
				vs = Warnings(d)
				for _, v := range vs {
					if !v.Warning {
						t.Errorf("Warnings returned a violation not marked as one: %v", v)
					}
				}
			}
			var hit *Violation
			for i := range vs {
				if vs[i].Rule == c.rule {
					hit = &vs[i]
					break
				}
			}
			if hit == nil {
				t.Fatalf("rule %s not reported; got %v", c.rule, vs)
			}
			if hit.Turn != c.turn {
				t.Errorf("turn = %d, want %d: %v", hit.Turn, c.turn, hit)
			}
			if hit.File != "set.jsonl" || hit.Line == 0 || hit.Hint == "" {
				t.Errorf("violation lacks file, line or hint: %+v", hit)
			}
			if c.rule != RulePairID && hit.ScenarioID == "" {
				t.Errorf("violation lacks the scenario id: %+v", hit)
			}
			s := hit.String()
			if !strings.Contains(s, string(c.rule)) || !strings.Contains(s, "set.jsonl:") {
				t.Errorf("String() = %q lacks the rule or file", s)
			}
		})
	}
}

// Issue 11, finding 9: the paper's final versions may differ in wording and event counts
// after N4 edits. An implicit version with an extra N4 exchange has no error (it used to
// fail pair-turn-count and pair-labels); the difference is a pair-n4-edit warning.
// Issue 21: that is the only kind of difference outside T and the turn before it that
// passes (TestPairRulesAreStrictOutsideN4).
func TestPairRulesFollowThePaper(t *testing.T) {
	e, im := validPair()
	im.Turns = slices.Insert(slices.Clone(im.Turns), 5,
		Turn{Speaker: "C", Text: "Aria, is the oven on?", Label: "N4_Q"},
		Turn{Speaker: "A", Text: "It is, I checked.", Label: "N4_R"})
	im.TPosition = "middle"
	d := &Dataset{File: "set.jsonl", Scenarios: []Scenario{e, im}, Lines: []int{1, 2}}
	if vs := Validate(d); len(vs) != 0 {
		t.Errorf("a pair after N4 edits has errors: %v", vs)
	}
	ws := Warnings(d)
	if len(ws) != 1 || ws[0].Rule != RulePairN4Edit || !ws[0].Warning || ws[0].Line != 2 || !strings.Contains(ws[0].String(), "warning: [pair-n4-edit]") {
		t.Errorf("warnings %v, want one pair-n4-edit warning on line 2", ws)
	}
	if errs := ValidatePairs(d.Scenarios); len(errs) != 0 {
		t.Errorf("ValidatePairs: %v", errs)
	}
}

// Issue 21: an extra N3, a removed N2, a relabelled turn or a reworded N1 between the two
// versions is an error, not a warning.
func TestPairRulesAreStrictOutsideN4(t *testing.T) {
	cases := map[string]func(im *Scenario){
		"extra N3": func(im *Scenario) {
			im.Turns = slices.Insert(im.Turns, 1, Turn{Speaker: "B", Text: "Hm, where's the colander.", Label: "N3"})
		},
		"removed N2": func(im *Scenario) { im.Turns = slices.Delete(im.Turns, 1, 2) },
		"relabelled": func(im *Scenario) { im.Turns[6].Label = "N3" },
		"reworded N1": func(im *Scenario) {
			for i := range im.Turns {
				if im.Turns[i].Label == "N1" {
					im.Turns[i].Text += " Honestly."
				}
			}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			e, im := validPair()
			im.Turns = slices.Clone(im.Turns)
			mutate(&im)
			d := &Dataset{File: "set.jsonl", Scenarios: []Scenario{e, im}, Lines: []int{1, 2}}
			errs := ValidatePairs(d.Scenarios)
			if len(errs) == 0 {
				t.Fatalf("no pair error; warnings %v", Warnings(d))
			}
			for _, v := range errs {
				if v.Warning {
					t.Errorf("error marked as a warning: %v", v)
				}
			}
		})
	}
}

// moveT relabels so that T sits at index i (swapping with the turn there).
func moveT(s *Scenario, i int) {
	ti := s.TIndex()
	s.Turns[ti], s.Turns[i] = s.Turns[i], s.Turns[ti]
}

// answer_type is optional (open v1 has none); when stated it is one of sdk.AnswerTypes
// and both versions of a pair state the same.
func TestAnswerType(t *testing.T) {
	e, im := validPair()
	e.AnswerType, im.AnswerType = "clock_time", "clock_time"
	d := &Dataset{File: "x.jsonl", Scenarios: []Scenario{e, im}, Lines: []int{1, 2}}
	if vs := Validate(d); len(vs) != 0 {
		t.Fatalf("a valid answer_type reported %v", vs)
	}
	im.AnswerType = "duration"
	d.Scenarios = []Scenario{e, im}
	vs := Validate(d)
	if len(vs) != 1 || vs[0].Rule != RulePairGold || !strings.Contains(vs[0].Message, "answer_type") {
		t.Fatalf("versions with different answer types: got %v, want one pair-gold violation naming answer_type", vs)
	}
}

func TestSpeakerWhoNeverTalks(t *testing.T) {
	e, _ := validPair()
	e.Speakers = []string{"A", "B", "C", "D"}
	vs := ValidateScenario(&e)
	if len(vs) != 1 || vs[0].Rule != RuleSpeakers || !strings.Contains(vs[0].Message, `"D" never talks`) {
		t.Fatalf("got %v", vs)
	}
}

func TestNonN2AddresseeIsReported(t *testing.T) {
	e, _ := validPair()
	e.Turns = slices.Clone(e.Turns)
	e.Turns[0].Addressee = "human"
	vs := ValidateScenario(&e)
	if !slices.Contains(rules(vs), RuleAddressee) {
		t.Fatalf("got %v", vs)
	}
	e.Turns[0].Addressee = "none"
	if vs := ValidateScenario(&e); len(vs) != 0 {
		t.Fatalf(`"none" on a non-N2 turn is allowed; got %v`, vs)
	}
}

func TestTBucket(t *testing.T) {
	// 12 turns: T may sit at 1..10, cut into thirds.
	want := map[int]string{1: "early-middle", 4: "early-middle", 5: "middle", 7: "middle", 8: "late-middle", 10: "late-middle"}
	for i, b := range want {
		if got, ok := TBucket(i, 12); !ok || got != b {
			t.Errorf("TBucket(%d, 12) = %q, %v; want %q", i, got, ok, b)
		}
	}
	for _, i := range []int{0, 11} {
		if _, ok := TBucket(i, 12); ok {
			t.Errorf("TBucket(%d, 12) accepted an impossible T index", i)
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParseErrorsNameFileAndLine(t *testing.T) {
	e, im := validPair()
	raw, err := MarshalScenarios([]Scenario{e, im})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	bad := lines[0] + "\n" + `{"pair_id": "p2", "lable": "T"}` + "\n" + "not json\n" + lines[1]
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, bad)
	d, vs, err := ValidatePath(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Scenarios) != 2 || d.Lines[1] != 5 {
		t.Fatalf("readable scenarios and their lines: %d %v", len(d.Scenarios), d.Lines)
	}
	var parse []Violation
	for _, v := range vs {
		if v.Rule == RuleParse {
			parse = append(parse, v)
		}
	}
	if len(parse) != 2 || parse[0].Line != 3 || parse[1].Line != 4 || !strings.Contains(parse[0].Message, "lable") {
		t.Fatalf("parse violations: %v", parse)
	}
	if !strings.HasPrefix(parse[0].String(), path+":3: ") {
		t.Errorf("parse violation %q does not start with file:line", parse[0].String())
	}
	if len(vs) != 2 {
		t.Errorf("the readable pair should be valid; got %v", vs)
	}
}

func TestLoadMissingPath(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope"))
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("err = %v", err)
	}
}

func TestSaveLoadRoundTripAndManifestChecks(t *testing.T) {
	e, im := validPair()
	dir := t.TempDir()
	if _, err := Save(dir, Manifest{Name: "t", Generator: Generator{Kind: "file"}}, []Scenario{e, im}); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Manifest == nil || d.Manifest.Counts.Pairs != 1 || d.Manifest.Counts.Explicit != 1 || !strings.HasPrefix(d.Manifest.ContentHash, "sha256:") {
		t.Fatalf("manifest = %+v", d.Manifest)
	}
	if !slices.EqualFunc(d.Scenarios, []Scenario{e, im}, func(a, b Scenario) bool { return a.ScenarioID == b.ScenarioID && len(a.Turns) == len(b.Turns) }) {
		t.Fatalf("round trip lost scenarios")
	}
	if vs := Validate(d); len(vs) != 0 {
		t.Fatalf("saved set reported %v", vs)
	}
	// Editing scenarios.jsonl after the build breaks the hash and the counts.
	raw, _ := os.ReadFile(filepath.Join(dir, ScenariosFile))
	first := strings.SplitAfter(string(raw), "\n")[0]
	writeFile(t, filepath.Join(dir, ScenariosFile), first)
	d, err = Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := rules(Validate(d))
	for _, r := range []Rule{RuleManifestHash, RuleManifestCounts, RulePairMissing} {
		if !slices.Contains(got, r) {
			t.Errorf("edited set: %s not reported (got %v)", r, got)
		}
	}
}

func TestManifestSyntaxErrorNamesLine(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ManifestFile), "{\n  \"name\": \"x\",\n  oops\n}\n")
	writeFile(t, filepath.Join(dir, ScenariosFile), "")
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "dataset.json: line 3") {
		t.Fatalf("err = %v", err)
	}
}

// The clip rules, on a pair with real WAV files.
func TestClipRules(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ClipsDir), 0o755)
	e, im := validPair()
	e.Turns, im.Turns = slices.Clone(e.Turns), slices.Clone(im.Turns)
	for _, s := range []*Scenario{&e, &im} {
		for i := range s.Turns {
			rel := fmt.Sprintf("%s/%s-%d.wav", ClipsDir, s.Condition, i)
			if err := audio.WriteWAV(filepath.Join(dir, rel), audio.PCM{Samples: make([]float32, 1600*(i+1)), Rate: 16000}); err != nil {
				t.Fatal(err)
			}
			s.Turns[i].Clip, s.Turns[i].DurationS = rel, 0.1*float64(i+1)
		}
	}
	audio.WriteWAV(filepath.Join(dir, ClipsDir, "pre.wav"), audio.PCM{Samples: make([]float32, 160), Rate: 16000})
	m := Manifest{Name: "t", Preamble: &Preamble{Text: "hello", Clip: ClipsDir + "/pre.wav", DurationS: 0.01}}
	if _, err := Save(dir, m, []Scenario{e, im}); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if vs := Validate(d); len(vs) != 0 {
		t.Fatalf("synthesised pair reported %v", vs)
	}

	d.Scenarios[0].Turns[0].Clip = ""                         // clip-missing
	d.Scenarios[0].Turns[1].DurationS = 0.5                   // clip-duration
	os.Remove(filepath.Join(dir, ClipsDir, "implicit-2.wav")) // clip-unreadable
	os.WriteFile(filepath.Join(dir, ClipsDir, "implicit-3.wav"), []byte("RIFF....WAVEjunk"), 0o644)
	os.Remove(filepath.Join(dir, ClipsDir, "pre.wav")) // preamble
	got := map[Rule][]int{}
	for _, v := range Validate(d) {
		got[v.Rule] = append(got[v.Rule], v.Turn)
	}
	want := map[Rule][]int{RuleClipMissing: {0}, RuleClipDuration: {1}, RuleClipUnreadable: {2, 3}, RulePreamble: {-1}}
	for r, turns := range want {
		if !slices.Equal(got[r], turns) {
			t.Errorf("%s at turns %v, want %v (all: %v)", r, got[r], turns, got)
		}
	}
}

func TestStatWAVRejectsTruncatedData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.wav")
	audio.WriteWAV(path, audio.PCM{Samples: make([]float32, 1000), Rate: 16000})
	info, err := StatWAV(path)
	if err != nil || info.Frames != 1000 || info.Rate != 16000 {
		t.Fatalf("info %+v, err %v", info, err)
	}
	raw, _ := os.ReadFile(path)
	os.WriteFile(path, raw[:len(raw)-10], 0o644)
	if _, err := StatWAV(path); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("truncated file: err = %v", err)
	}
}

func FuzzReadScenarios(f *testing.F) {
	e, im := validPair()
	raw, _ := MarshalScenarios([]Scenario{e, im})
	f.Add(string(raw))
	f.Add("{}\n\n{\"turns\": [1]}\n")
	f.Add("{\"pair_id\":\"x\"} {\"pair_id\":\"y\"}\n")
	f.Fuzz(func(t *testing.T, s string) {
		scs, lines, err := ReadScenarios(strings.NewReader(s), "f.jsonl")
		if len(scs) != len(lines) {
			t.Fatalf("%d scenarios, %d lines", len(scs), len(lines))
		}
		var pes ParseErrors
		if err != nil && !errors.As(err, &pes) {
			t.Fatalf("error of type %T", err)
		}
		d := &Dataset{File: "f.jsonl", Scenarios: scs, Lines: lines}
		_ = Validate(d) // never panics
		_ = ComputeStats(d)
	})
}

func FuzzStatWAV(f *testing.F) {
	var b bytes.Buffer
	audio.EncodeWAV(&b, audio.PCM{Samples: make([]float32, 10), Rate: 8000})
	f.Add(b.Bytes())
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEfmt "))
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, _ = readWAVHeader(bytes.NewReader(raw), int64(len(raw)))
	})
}
