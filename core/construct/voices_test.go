package construct

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
)

// testPool is twelve voices with F0 medians like the English pool's: six women, six men.
var testPool = map[string]float64{
	"w1": 180, "w2": 195, "w3": 210, "w4": 225, "w5": 240, "w6": 260,
	"m1": 90, "m2": 98, "m3": 105, "m4": 112, "m5": 122, "m6": 135,
}

// sexes gives each voice its sex by its first letter (w: female, else male); of flite's
// voices, slt and (for the draw only: flite has one woman) rms count as women.
func sexes(f0 map[string]float64) map[string]string {
	out := map[string]string{}
	for v := range f0 {
		out[v] = "male"
		if v[0] == 'w' || v == "slt" || v == "rms" {
			out[v] = "female"
		}
	}
	return out
}

func openV1(t *testing.T, split string) *dataset.Dataset {
	t.Helper()
	d, err := dataset.Load("../../datasets/open-v1/" + split)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// withVoices is d with a manifest that gives its pairs the drawn voices.
func withVoices(d *dataset.Dataset, drawn map[string]map[string]string) *dataset.Dataset {
	out := *d
	out.Manifest = &dataset.Manifest{PairVoices: drawn}
	return &out
}

// The draw over open v1 (dev and test): every pair gets one map for both versions,
// no voice twice in a scenario, no two speakers closer than the minimum, and every
// voice's share of T, N4_Q and N1 within 5 points of its share of turns.
func TestDrawVoicesBalancedAndApart(t *testing.T) {
	for _, split := range []string{"dev", "test"} {
		d := openV1(t, split)
		pool := dataset.VoicePool{F0: testPool, Sex: sexes(testPool), Seed: 1, MinSemitones: 2}
		drawn, err := DrawVoices(d.Scenarios, pool)
		if err != nil {
			t.Fatalf("%s: %v", split, err)
		}
		for _, s := range d.Scenarios {
			m := drawn[s.PairID]
			seen := map[string]string{}
			for _, sp := range s.Speakers {
				v, ok := m[sp]
				if !ok {
					t.Fatalf("%s: %s speaker %s has no voice", split, s.ScenarioID, sp)
				}
				if want := dataset.SpeakerSex[sp]; sexes(testPool)[v] != want {
					t.Errorf("%s: %s speaker %s (%s) has voice %s", split, s.ScenarioID, sp, want, v)
				}
				if other, dup := seen[v]; dup {
					t.Errorf("%s: %s speakers %s and %s share %s", split, s.ScenarioID, other, sp, v)
				}
				for w := range seen {
					if st := math.Abs(12 * math.Log2(testPool[v]/testPool[w])); st < 2 {
						t.Errorf("%s: %s voices %s and %s are %.2f semitones apart", split, s.ScenarioID, v, w, st)
					}
				}
				seen[v] = sp
			}
		}
		shares, totals, err := dataset.VoiceShares(withVoices(d, drawn))
		if err != nil {
			t.Fatal(err)
		}
		if len(shares) != len(testPool) {
			t.Errorf("%s: %d voices speak, want all %d", split, len(shares), len(testPool))
		}
		for _, v := range shares {
			if gap, l := v.Gap(totals); gap > dataset.ShareTolerance {
				t.Errorf("%s: %s speaks %.3f of turns but %.3f of %s", split, v.Voice, v.TurnShare, v.LabelShare[l], l)
			}
		}
	}
}

// The same seed draws the same voices; another seed draws others; the draw of a pair
// does not depend on the order of the scenarios.
func TestDrawVoicesDeterministic(t *testing.T) {
	d := openV1(t, "dev")
	pool := dataset.VoicePool{F0: testPool, Sex: sexes(testPool), Seed: 7, MinSemitones: 2}
	a, err := DrawVoices(d.Scenarios, pool)
	if err != nil {
		t.Fatal(err)
	}
	rev := make([]dataset.Scenario, len(d.Scenarios))
	for i, s := range d.Scenarios {
		rev[len(rev)-1-i] = s
	}
	b, err := DrawVoices(rev, pool)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("the draw depends on the scenarios' order")
	}
	pool.Seed = 8
	c, err := DrawVoices(d.Scenarios, pool)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a, c) {
		t.Error("seeds 7 and 8 drew the same voices")
	}
}

// The fixed letter -> voice map the benchmark used (one voice per speaker letter)
// fails the share check on open v1's dev split: the check can fail, and the draw is
// what passes it.
func TestFixedVoicesFailShareCheck(t *testing.T) {
	d := openV1(t, "dev")
	out := *d
	out.Manifest = &dataset.Manifest{Voices: map[string]string{"A": "a", "B": "b", "C": "c", "D": "d"}}
	shares, totals, err := dataset.VoiceShares(&out)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for _, v := range shares {
		g, _ := v.Gap(totals)
		worst = math.Max(worst, g)
	}
	if worst <= dataset.ShareTolerance {
		t.Errorf("the fixed map's worst gap is %.3f; expected it above %.2f", worst, dataset.ShareTolerance)
	}
}

// A pool whose voices cannot be kept apart is an error naming the pair.
func TestDrawVoicesTooClose(t *testing.T) {
	d := openV1(t, "dev")
	f0 := map[string]float64{"m1": 100, "m2": 101, "m3": 102, "w1": 200, "w2": 201, "w3": 202}
	pool := dataset.VoicePool{F0: f0, Sex: sexes(f0), Seed: 1, MinSemitones: 2}
	if _, err := DrawVoices(d.Scenarios, pool); err == nil {
		t.Fatal("voices a semitone apart accepted at a 2-semitone minimum")
	}
	pool.MinSemitones = 0
	if _, err := DrawVoices(d.Scenarios, pool); err != nil {
		t.Fatalf("minimum 0: %v", err)
	}
}

// A build from a pool: every turn is spoken in its pair's drawn voice (its clip key is
// that voice's), the manifest records the pool and the draw and no fixed map, and the
// narrator, outside the pool, speaks the preamble.
func TestBuildFromVoicePool(t *testing.T) {
	tts, info := startFlite(t)
	scs, err := Generate(GenerateSpec{Pairs: 2, Seed: 5, FourSpeakerShare: 1})
	if err != nil {
		t.Fatal(err)
	}
	f0 := map[string]float64{"kal16": 91, "rms": 102, "awb": 128, "slt": 169}
	pool := &dataset.VoicePool{F0: f0, Sex: sexes(f0), Seed: 4, MinSemitones: 1}
	spec := BuildSpec{Name: "t", Out: t.TempDir(), Scenarios: scs, Generator: dataset.Generator{Kind: "procedural"}, TTS: info,
		VoicePool: pool, PreambleVoice: "kal", SampleRate: 16000}
	d, _, err := Build(context.Background(), spec, tts, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := d.Manifest
	want, err := DrawVoices(scs, *pool)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.PairVoices, want) || m.VoicePool == nil || m.VoicePool.Seed != 4 || m.Voices != nil || m.Preamble.Voice != "kal" {
		t.Fatalf("manifest voices %v, pool %+v, fixed %v, narrator %s", m.PairVoices, m.VoicePool, m.Voices, m.Preamble.Voice)
	}
	for _, s := range d.Scenarios {
		for _, tu := range s.Turns {
			v := want[s.PairID][tu.Speaker]
			if tu.Clip != ClipRel(ClipKeyLoudness(info, v, tu.Text, 16000, DefaultLoudness)) {
				t.Fatalf("%s: turn of %s is not its clip in voice %s", s.ScenarioID, tu.Speaker, v)
			}
		}
	}
	spec.PreambleVoice = "slt"
	if _, _, err := Build(context.Background(), spec, tts, nil); err == nil || !strings.Contains(err.Error(), "in the voice pool") {
		t.Errorf("a narrator in the pool: %v", err)
	}
}

// A partial build (run --limit) makes only its pairs' clips and the preamble, leaves
// the whole set's files unwritten, and keys every clip as the full build does: the full
// build after it synthesises only the rest, and the pair built first has the same clips
// in both. With a voice pool, the pair's voices are those of the whole set's draw.
func TestPartialBuildIsPartOfTheFullBuild(t *testing.T) {
	tts, info := startFlite(t)
	scs, err := Generate(GenerateSpec{Pairs: 3, Seed: 9, FourSpeakerShare: 0})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	f0 := map[string]float64{"kal16": 91, "rms": 102, "awb": 128, "slt": 169}
	pool := &dataset.VoicePool{F0: f0, Sex: sexes(f0), Seed: 2, MinSemitones: 1}
	spec := BuildSpec{Name: "t", Out: out, Scenarios: scs, Generator: dataset.Generator{Kind: "procedural"}, TTS: info,
		VoicePool: pool, PreambleVoice: "kal", SampleRate: 16000, Pairs: 1}
	first := &counting{TTS: tts}
	part, rep, err := Build(context.Background(), spec, first, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pairs != 3 || rep.Built != 1 || len(part.Scenarios) != 2 || part.Scenarios[0].PairID != scs[0].PairID {
		t.Fatalf("report %+v, %d scenarios", rep, len(part.Scenarios))
	}
	for _, f := range []string{dataset.ScenariosFile, dataset.ManifestFile, dataset.ClipSumsFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("the partial build wrote %s", f)
		}
	}
	if _, err := os.Stat(part.File); err != nil || filepath.Base(part.File) != dataset.PartialScenariosFile {
		t.Errorf("partial file %s: %v", part.File, err)
	}
	// What a plugin reads of it (the oracle: the scenarios and the room): the same set.
	back, err := dataset.LoadPartial(out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Scenarios, part.Scenarios) || !reflect.DeepEqual(back.Manifest, part.Manifest) || back.ContentHash != part.ContentHash {
		t.Errorf("LoadPartial reads another set than the partial build made: manifest %+v", back.Manifest)
	}
	spec.Pairs = 0
	second := &counting{TTS: tts}
	full, frep, err := Build(context.Background(), spec, second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if frep.Reused != rep.Clips || frep.Synthesised != frep.Clips-rep.Clips || int(first.calls.Load()) != rep.Clips {
		t.Errorf("partial %+v (%d calls), then full %+v", rep, first.calls.Load(), frep)
	}
	for i := range part.Scenarios {
		if !reflect.DeepEqual(part.Scenarios[i], full.Scenarios[i]) {
			t.Errorf("scenario %s differs between the partial and the full build", part.Scenarios[i].ScenarioID)
		}
	}
	if !reflect.DeepEqual(part.Manifest.PairVoices, full.Manifest.PairVoices) {
		t.Error("the partial build drew other voices")
	}
}
