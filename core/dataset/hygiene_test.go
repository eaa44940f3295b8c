package dataset

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/tests/reliability/damage"
)

func writeLines(t *testing.T, lines ...[]byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, bytes.Join(lines, []byte("\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func scenarioLine(t *testing.T, s Scenario) []byte {
	t.Helper()
	b, err := MarshalScenarios([]Scenario{s})
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// Before, a UTF-8 byte-order mark gave "invalid character 'ï'", and text that is not
// UTF-8 was turned into U+FFFD without a word.
func TestScenarioFileEncoding(t *testing.T) {
	e, im := validPair()
	good, other := scenarioLine(t, e), scenarioLine(t, im)

	path := writeLines(t, append([]byte("\xef\xbb\xbf"), good...), other)
	if d, err := Load(path); err != nil || len(d.Scenarios) != 2 {
		t.Fatalf("a leading BOM: %v", err)
	}

	latin1 := bytes.Replace(other, []byte("six ten"), []byte("six t\xe9n"), 1)
	path = writeLines(t, good, latin1)
	d, err := Load(path)
	var pes ParseErrors
	if !errors.As(err, &pes) || len(pes) != 1 || pes[0].Line != 2 || !strings.Contains(err.Error(), "not valid UTF-8") ||
		!strings.Contains(err.Error(), "save the file as UTF-8") || !strings.Contains(err.Error(), path+":2") {
		t.Fatalf("Latin-1 text: %v", err)
	}
	if len(d.Scenarios) != 1 {
		t.Fatalf("the good line was lost: %d scenarios", len(d.Scenarios))
	}

	path = writeLines(t, good, append([]byte("\xef\xbb\xbf"), other...))
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Fatalf("a BOM inside the file (two files pasted together): %v", err)
	}
}

// Before, a clip path outside the dataset (/etc/hostname, ../x.wav) was accepted and
// would have been played.
func TestClipPathsStayInsideTheDataset(t *testing.T) {
	for _, clip := range []string{"/etc/hostname", "../other/clips/a.wav", "clips/../../x.wav"} {
		e, im := validPair()
		e.Turns[2].Clip = clip
		path := writeLines(t, scenarioLine(t, e), scenarioLine(t, im))
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), "outside the dataset directory") || !strings.Contains(err.Error(), "scenario p1-explicit turn 2") ||
			!strings.Contains(err.Error(), path+":1") {
			t.Errorf("%s: err = %v", clip, err)
		}
		_, vs, err := ValidatePath(path)
		if err != nil || len(vs) == 0 || vs[0].Rule != RuleParse || !strings.Contains(vs[0].Hint, "inside the dataset directory") {
			t.Errorf("%s: validate: %v %v", clip, vs, err)
		}
	}
	if err := CheckClipPath("clips/ab.wav"); err != nil {
		t.Fatal(err)
	}
}

// Before, a 100 KB turn was synthesised into a 51-minute clip.
func TestTurnTextIsBounded(t *testing.T) {
	e, im := validPair()
	e.Turns[0].Text = strings.Repeat("The pasta needs eleven minutes. ", 100)
	im.Turns[0].Text = e.Turns[0].Text
	vs := Validate(&Dataset{File: "x.jsonl", Scenarios: []Scenario{e, im}, Lines: []int{1, 2}})
	if len(vs) != 2 || vs[0].Rule != RuleTurnText || vs[0].Turn != 0 || !strings.Contains(vs[0].Message, "at most 1000") {
		t.Fatalf("violations %v", vs)
	}
}

// builtDataset writes a small dataset as construct.Build would: 16-bit mono clips at
// 16 kHz, their sums in clips.sha256.
func builtDataset(t *testing.T) *Dataset {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ClipsDir), 0o755)
	e, im := validPair()
	sums := map[string]string{}
	write := func(rel string, secs float64, hz float64) float64 {
		n := int(secs * 16000)
		p := audio.PCM{Samples: make([]float32, n), Rate: 16000}
		for i := range p.Samples {
			p.Samples[i] = float32(0.3 * math.Sin(2*math.Pi*hz*float64(i)/16000))
		}
		path := filepath.Join(dir, rel)
		if err := audio.WriteWAV(path, p); err != nil {
			t.Fatal(err)
		}
		c, err := CheckClip(dir, path, 16000, "")
		if err != nil {
			t.Fatal(err)
		}
		sums[rel] = c.Sum
		return p.Duration()
	}
	for _, s := range []*Scenario{&e, &im} {
		for i := range s.Turns {
			rel := "clips/" + s.ScenarioID + "-" + string(rune('a'+i)) + ".wav"
			s.Turns[i].Clip, s.Turns[i].DurationS = rel, write(rel, 1.5+0.1*float64(i), 200+10*float64(i))
		}
	}
	pd := write("clips/preamble.wav", 2, 300)
	m := Manifest{Name: "t", TTS: &TTSInfo{Plugin: "flite"}, SampleRate: 16000,
		Preamble: &Preamble{Text: "duty", Clip: "clips/preamble.wav", DurationS: pd}}
	d, err := Save(dir, m, []Scenario{e, im})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteClipSums(dir, sums); err != nil {
		t.Fatal(err)
	}
	return d
}

// expectedRule is the rule each entry of the damage catalogue breaks.
var expectedRule = map[string]Rule{
	"8-bit": RuleClipFormat, "stereo": RuleClipFormat, "float": RuleClipFormat, "nan": RuleClipFormat,
	"1 s tone": RuleClipHash, "truncated": RuleClipUnreadable,
}

// Before, `dataset validate` said "valid" for a clip that was 8-bit, stereo, float, NaN
// or another sound of the right format.
func TestValidateCatchesDamagedClips(t *testing.T) {
	for _, c := range damage.Clips {
		want := expectedRule[c.Name]
		t.Run(c.Name, func(t *testing.T) {
			d := builtDataset(t)
			if vs := Validate(d); len(vs) != 0 {
				t.Fatalf("the fresh dataset has violations: %v", vs)
			}
			clip := d.Scenarios[0].Turns[2].Clip
			if err := c.Damage(d.ClipPath(clip)); err != nil {
				t.Fatal(err)
			}
			_, vs, err := ValidatePath(d.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(rules(vs), want) {
				t.Fatalf("violations %v; want %s", vs, want)
			}
			for _, v := range vs {
				if v.Rule == want && (v.ScenarioID != "p1-explicit" || v.Turn != 2 || !strings.Contains(v.Message, clip) ||
					!strings.Contains(v.Hint, "duplexmpe build")) {
					t.Errorf("violation %v does not name the scenario, turn and clip, and the fix", v)
				}
			}
		})
	}
	// The preamble too.
	d := builtDataset(t)
	if err := damage.Clips[0].Damage(d.PreamblePath()); err != nil {
		t.Fatal(err)
	}
	if vs := Validate(d); !slices.Contains(rules(vs), RulePreamble) {
		t.Fatalf("a damaged preamble: %v", vs)
	}
}

func TestClipSumsFileIsChecked(t *testing.T) {
	d := builtDataset(t)
	os.WriteFile(filepath.Join(d.Dir, ClipSumsFile), []byte("not a sum line\n"), 0o644)
	if vs := Validate(d); !slices.Contains(rules(vs), RuleClipHash) {
		t.Fatalf("a garbled clips.sha256: %v", vs)
	}
}
