package construct

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
)

const openV1Spec = "../../datasets/open-v1/authoring/release.json"

// The release in the repository is exactly what its authoring files compile to: nobody
// edited a split or the manifest by hand, and the manifest's hashes are current.
func TestOpenV1IsCompiledFromItsSources(t *testing.T) {
	spec, err := ReadReleaseSpec(openV1Spec)
	if err != nil {
		t.Fatal(err)
	}
	rf, err := CompileRelease(spec)
	if err != nil {
		t.Fatal(err)
	}
	if stale := StaleReleaseFiles(spec.Out, rf); len(stale) > 0 {
		t.Fatalf("stale release files %v: run 'duplexmpe dataset compile %s'", stale, "datasets/open-v1/authoring/release.json")
	}
	r := rf.Release
	if len(r.Splits) != 2 || r.Splits[0].Name != SplitDev || r.Splits[1].Name != SplitTest {
		t.Fatalf("splits %+v", r.Splits)
	}
	if r.Splits[0].Pairs < 40 || r.Splits[0].Pairs+r.Splits[1].Pairs < 400 {
		t.Errorf("dev %d pairs, test %d: want dev >= 40 and >= 400 in all", r.Splits[0].Pairs, r.Splits[1].Pairs)
	}
	// Every dev pair has an N4 event (the yield measure needs them).
	d, err := dataset.Load(filepath.Join(spec.Out, r.Splits[0].File))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range d.Scenarios {
		if !strings.Contains(labelsOf(s), "N4_Q") {
			t.Errorf("dev scenario %s has no N4 event", s.ScenarioID)
		}
	}
}

// The whole release meets every construction goal of dataset lint (docs/datasheet.md).
func TestOpenV1Lints(t *testing.T) {
	grid, err := dataset.LoadGrid("../../datasets/open-v1/authoring/grid.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := dataset.LoadAny("../../datasets/open-v1")
	if err != nil {
		t.Fatal(err)
	}
	rep := dataset.Lint(d, grid)
	if rep.Failed() > 0 {
		var b bytes.Buffer
		rep.Print(&b)
		t.Fatalf("lint:\n%s", b.String())
	}
}

func labelsOf(s dataset.Scenario) string {
	var l []string
	for _, t := range s.Turns {
		l = append(l, t.Label)
	}
	return strings.Join(l, " ")
}

const goodSource = `{"pair_id":"x-1","attributes":{"setting":"kitchen","activity":"cooking dinner","relationship":"roommates","devices":"Aria and a smart speaker (Alexa)","register":"casual"},"names":{"A":"Nadia","B":"Tom","C":"Priya"},"turns":[{"speaker":"A","text":"Tom, the chicken went in at twenty to six.","label":"N2","addressee":"human"},{"speaker":"C","text":"Aria has been keeping every timer tonight.","label":"N1"},{"speaker":"B","label":"T","explicit":"Aria, it needs ninety-five minutes, so when does it come out?","implicit":"You're on timer duty, so if it needs ninety-five minutes, when does it come out?"},{"speaker":"C","text":"Alexa, play something mellow.","label":"N2","addressee":"device"},{"speaker":"A","text":"Where did I put the peeler... there.","label":"N3"}],"implicit_previous":null,"cue":"role","cue_evidence":"turn 1 gives Aria the timers","gold_answer":"7:15","gold_accepted":["quarter past seven"],"gold_derivation":"5:40 + 95 min","context_turns":[0]}`

func TestCompilePair(t *testing.T) {
	srcs, lines, err := ReadPairSources(strings.NewReader(goodSource+"\n"), "src.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	scs, err := Compile(srcs, []string{"src.jsonl"}, lines, CompileSpec{GapSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) != 2 {
		t.Fatalf("%d scenarios", len(scs))
	}
	e, im := scs[0], scs[1]
	if e.ScenarioID != "x-1-explicit" || im.ScenarioID != "x-1-implicit" || e.Condition != "explicit" || im.Condition != "implicit" {
		t.Errorf("ids %s %s", e.ScenarioID, im.ScenarioID)
	}
	if !strings.HasPrefix(e.Turns[2].Text, "Aria,") || !strings.HasPrefix(im.Turns[2].Text, "You're on timer duty") {
		t.Errorf("T texts %q / %q", e.Turns[2].Text, im.Turns[2].Text)
	}
	if e.Cue != "" || im.Cue != "role" || e.TPosition != "middle" || len(e.GoldAccepted) != 1 || e.Names["B"] != "Tom" {
		t.Errorf("explicit %+v", e)
	}
	// Natural gaps on ordinary turns only (not T, not the last), the same in both versions.
	for i := range e.Turns {
		ordinary := i != 2 && i != len(e.Turns)-1
		if (e.Turns[i].GapAfterS > 0) != ordinary || e.Turns[i].GapAfterS != im.Turns[i].GapAfterS {
			t.Errorf("turn %d gaps %g / %g", i, e.Turns[i].GapAfterS, im.Turns[i].GapAfterS)
		}
	}
	d := &dataset.Dataset{File: "x", Scenarios: scs, Lines: []int{1, 2}}
	if vs := dataset.Validate(d); len(vs) > 0 {
		t.Errorf("compiled pair breaks rules: %v", vs)
	}
}

// Each problem of a source is an error naming its file, line and pair.
func TestCompileReportsEveryProblem(t *testing.T) {
	bad := map[string]string{
		"unknown key":          strings.Replace(goodSource, `"cue":`, `"cu":"x","cue":`, 1),
		"T without implicit":   strings.Replace(goodSource, `"implicit":"You're on timer duty, so if it needs ninety-five minutes, when does it come out?"`, `"implicit":""`, 1),
		"unknown cue":          strings.Replace(goodSource, `"cue":"role"`, `"cue":"position"`, 1),
		"setup without text":   strings.Replace(goodSource, `"cue":"role"`, `"cue":"setup"`, 1),
		"context by asker":     strings.Replace(goodSource, `"context_turns":[0]`, `"context_turns":[0,2]`, 1),
		"name missing":         strings.Replace(goodSource, `"C":"Priya"`, `"D":"Priya"`, 1),
		"text on T":            strings.Replace(goodSource, `"label":"T",`, `"label":"T","text":"x",`, 1),
		"context not before T": strings.Replace(goodSource, `"context_turns":[0]`, `"context_turns":[3]`, 1),
	}
	for name, line := range bad {
		t.Run(name, func(t *testing.T) {
			in := goodSource + "\n\n" + line + "\n"
			srcs, lines, err := ReadPairSources(strings.NewReader(strings.Replace(in, `"x-1"`, `"x-0"`, 1)), "src.jsonl")
			if err == nil {
				files := make([]string, len(srcs))
				for i := range files {
					files[i] = "src.jsonl"
				}
				_, err = Compile(srcs, files, lines, CompileSpec{})
			}
			var se SourceErrors
			if !errors.As(err, &se) || len(se) != 1 || se[0].Line != 3 || !strings.Contains(se[0].Error(), "src.jsonl:3:") {
				t.Fatalf("got %v, want one error at src.jsonl:3", err)
			}
		})
	}
}

// The natural gaps: a pure function of seed, pair and turn; most a few hundred ms, about
// one in five a pause of 1.2-2.5 s, none outside [NaturalGapMin, NaturalLongMax].
func TestNaturalGapDistribution(t *testing.T) {
	var gs []float64
	long := 0
	for p := 0; p < 400; p++ {
		for i := 0; i < 12; i++ {
			g := NaturalGap(1, "p"+string(rune('a'+p%26))+string(rune('a'+p/26)), i)
			if g != NaturalGap(1, "p"+string(rune('a'+p%26))+string(rune('a'+p/26)), i) {
				t.Fatal("not deterministic")
			}
			if g < NaturalGapMin || g > NaturalLongMax {
				t.Fatalf("gap %g out of range", g)
			}
			if g > NaturalLongMin {
				long++
			}
			gs = append(gs, g)
		}
	}
	sort.Float64s(gs)
	share := float64(long) / float64(len(gs))
	if math.Abs(share-NaturalLongShare) > 0.03 {
		t.Errorf("share of pauses over %g s: %.3f, want about %g", NaturalLongMin, share, NaturalLongShare)
	}
	// The median of all gaps sits a little above the short gaps' median (the long tail).
	if med := gs[len(gs)/2]; med < NaturalGapMedian || med > 0.5 {
		t.Errorf("median gap %.3f", med)
	}
	if NaturalGap(1, "pa", 3) == NaturalGap(2, "pa", 3) && NaturalGap(1, "pb", 3) == NaturalGap(2, "pb", 3) {
		t.Error("the seed does not change the gaps")
	}
}

func TestVerifyRelease(t *testing.T) {
	dir := t.TempDir()
	srcDir := filepath.Join(dir, "authoring")
	os.MkdirAll(srcDir, 0o755)
	// Two pairs: x-2 is x-1 with another duration in T.
	second := strings.ReplaceAll(strings.Replace(goodSource, `"x-1"`, `"x-2"`, 1), "ninety-five", "eighty")
	os.WriteFile(filepath.Join(srcDir, "a.jsonl"), []byte(goodSource+"\n"+second+"\n"), 0o644)
	os.WriteFile(filepath.Join(srcDir, "dev.txt"), []byte("# dev\nx-1\n"), 0o644)
	os.WriteFile(filepath.Join(srcDir, "release.json"), []byte(`{"name":"t","version":"0.1","licence":"CC-BY-4.0","gap_seed":1,"sources":["a.jsonl"],"dev":"dev.txt","out":".."}`), 0o644)
	spec, err := ReadReleaseSpec(filepath.Join(srcDir, "release.json"))
	if err != nil {
		t.Fatal(err)
	}
	rf, err := CompileRelease(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteRelease(dir, rf); err != nil {
		t.Fatal(err)
	}
	r, err := dataset.LoadRelease(dir)
	if err != nil {
		t.Fatal(err)
	}
	load := func() *dataset.Dataset {
		d, err := dataset.Load(filepath.Join(dir, "dev", dataset.ScenariosFile))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// As released; with clips and durations a build adds: verified.
	d := load()
	for i := range d.Scenarios {
		for j := range d.Scenarios[i].Turns {
			d.Scenarios[i].Turns[j].Clip, d.Scenarios[i].Turns[j].DurationS = "clips/x.wav", 1.5
		}
	}
	if sp, probs := dataset.VerifyRelease(d, r); sp == nil || sp.Name != "dev" || len(probs) > 0 {
		t.Fatalf("split %v, problems %v", sp, probs)
	}
	// A changed gold answer, a missing version: each named.
	d = load()
	d.Scenarios[0].GoldAnswer = "7:16"
	d.Scenarios = d.Scenarios[:1]
	_, probs := dataset.VerifyRelease(d, r)
	if len(probs) != 2 || !strings.Contains(probs[0], "x-1-explicit differs") || !strings.Contains(probs[1], "x-1-implicit of split dev is missing") {
		t.Fatalf("problems %v", probs)
	}
	if got, split := dataset.ReleaseOf(filepath.Join(dir, "dev", dataset.ScenariosFile), r.Splits[0].SHA256); got == nil || split.Name != "dev" {
		t.Errorf("ReleaseOf did not find the dev split")
	}
	if got, _ := dataset.ReleaseOf(filepath.Join(dir, "dev", dataset.ScenariosFile), "sha256:00"); got != nil {
		t.Errorf("ReleaseOf matched another content")
	}
	if stale := StaleReleaseFiles(dir, rf); len(stale) != 0 {
		t.Errorf("stale %v right after writing", stale)
	}
	os.WriteFile(filepath.Join(dir, "test", dataset.ScenariosFile), []byte("\n"), 0o644)
	if stale := StaleReleaseFiles(dir, rf); len(stale) != 1 || stale[0] != "test/scenarios.jsonl" {
		t.Errorf("stale %v, want the edited test split", stale)
	}
}
