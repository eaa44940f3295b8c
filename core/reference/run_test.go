package reference

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/stats"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// plugins builds the rule LLM (testdata/rulellm) and the real lexical judge once.
func plugins(t *testing.T) (llmBin, judgeBin string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "duplexmpe-reference-")
		if buildErr != nil {
			return
		}
		for name, pkg := range map[string]string{"rulellm": "./testdata/rulellm", "lexical-judge": "../../plugins/lexical-judge"} {
			out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, name), pkg).CombinedOutput()
			if err != nil {
				buildErr = err
				t.Logf("%s", out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "rulellm"), filepath.Join(binDir, "lexical-judge")
}

func start(t *testing.T, name, bin string, cfg map[string]any) *pluginhost.Client {
	t.Helper()
	ctx := context.Background()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: name, Source: bin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	if err := c.Configure(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	return c
}

func shipped(t *testing.T) []dataset.Scenario {
	t.Helper()
	d, err := dataset.Load("../../examples/scenarios")
	if err != nil {
		t.Fatal(err)
	}
	return d.Scenarios
}

const (
	garbleT  = "Aria, if we start the fire" // hand-07 explicit T: no parsed reply, so no response
	garbleN3 = "These potatoes"             // an N3 turn of hand-01, both versions: a broken silence
)

var respondAlso = []string{"you up there on the fence post", "You had the ranger's times"} // hand-04 and hand-07 implicit T

var namesAria = regexp.MustCompile(`(?i)\baria\b`)

func TestRunThroughRealPlugins(t *testing.T) {
	llmBin, judgeBin := plugins(t)
	scs := shipped(t)

	// Answers: the gold answer for the explicit T of even-numbered pairs, a wrong one
	// for the others.
	answers := map[string]string{}
	wantCorrect := map[string]bool{}
	for i, sc := range scs {
		tt := sc.Turns[sc.TIndex()]
		if i%4 == 0 {
			answers[tt.Text] = "It is " + sc.GoldAnswer + "."
			wantCorrect[sc.ScenarioID] = true
		} else {
			answers[tt.Text] = "Purple elephants."
		}
	}
	dir := t.TempDir()
	raw, _ := json.Marshal(answers)
	os.WriteFile(filepath.Join(dir, "answers.json"), raw, 0o644)

	llmc := start(t, "rule", llmBin, map[string]any{
		"answers": filepath.Join(dir, "answers.json"), "fail": "",
		"garble": []any{garbleT, garbleN3}, "respond_also": []any{respondAlso[0], respondAlso[1]}})
	judgec := start(t, "lexical", judgeBin, map[string]any{})
	llm, err := llmc.LLM()
	if err != nil {
		t.Fatal(err)
	}
	judge, err := judgec.Judge()
	if err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	scenarios := 0
	ds, err := Run(ctx, llm, judge, scs, Options{Duty: "You are Aria.", Retries: 2}, func() { scenarios++ })
	if err != nil {
		t.Fatal(err)
	}
	turns := 0
	for _, sc := range scs {
		turns += len(sc.Turns)
	}
	if len(ds) != turns || scenarios != len(scs) {
		t.Fatalf("%d decisions for %d turns, %d scenarios done of %d", len(ds), turns, scenarios, len(scs))
	}

	// What the rule implies, worked out here from the scripts.
	type want struct{ tK, tN, accK, silK, silN, unparseable int }
	wants := map[string]*want{"explicit": {}, "implicit": {}}
	respondT := map[string]map[string]bool{}
	for _, sc := range scs {
		w := wants[sc.Condition]
		for ti, turn := range sc.Turns {
			garbled := strings.Contains(turn.Text, garbleT) || strings.Contains(turn.Text, garbleN3)
			respond := !garbled && (namesAria.MatchString(turn.Text) || strings.Contains(turn.Text, respondAlso[0]) || strings.Contains(turn.Text, respondAlso[1]))
			if garbled {
				w.unparseable++
			}
			switch turn.Label {
			case "T":
				w.tN++
				if respond {
					w.tK++
					if wantCorrect[sc.ScenarioID] {
						w.accK++
					}
				}
				if respondT[sc.PairID] == nil {
					respondT[sc.PairID] = map[string]bool{}
				}
				respondT[sc.PairID][sc.Condition] = respond
			case "N1", "N2", "N3":
				w.silN++
				if !respond && !garbled {
					w.silK++
				}
			}
			d := ds[0]
			for _, x := range ds {
				if x.ScenarioID == sc.ScenarioID && x.Turn == ti {
					d = x
				}
			}
			if garbled && (d.Decision != Unparseable || d.Attempts != 3 || d.Error == "" || d.Raw == "") {
				t.Errorf("%s turn %d: garbled reply recorded as %+v", sc.ScenarioID, ti, d)
			}
			if !garbled && d.Attempts != 1 {
				t.Errorf("%s turn %d: %d attempts for a clean reply", sc.ScenarioID, ti, d.Attempts)
			}
		}
	}

	s := Summarize(ds)
	if len(s.Entries) != 2 || s.Entries[0].Condition != "explicit" || s.Entries[1].Condition != "implicit" {
		t.Fatalf("entries %+v", s.Entries)
	}
	for _, e := range s.Entries {
		w := wants[e.Condition]
		if e.Response.K != w.tK || e.Response.N != w.tN {
			t.Errorf("%s response %d/%d, want %d/%d", e.Condition, e.Response.K, e.Response.N, w.tK, w.tN)
		}
		if e.Accuracy.K != w.accK || e.Accuracy.N != w.tK {
			t.Errorf("%s accuracy %d/%d, want %d/%d", e.Condition, e.Accuracy.K, e.Accuracy.N, w.accK, w.tK)
		}
		if e.Silence.K != w.silK || e.Silence.N != w.silN {
			t.Errorf("%s silence %d/%d, want %d/%d", e.Condition, e.Silence.K, e.Silence.N, w.silK, w.silN)
		}
		if e.Unparseable != w.unparseable {
			t.Errorf("%s unparseable %d, want %d", e.Condition, e.Unparseable, w.unparseable)
		}
		if n1 := e.SilenceByLabel["N1"]; n1.N == 0 || n1.K == n1.N {
			t.Errorf("%s N1 silence %+v: naming Aria without a request should fail some", e.Condition, n1)
		}
		lo, hi := stats.Wilson(e.Silence.K, e.Silence.N, 0.95)
		if e.Silence.Lo != lo || e.Silence.Hi != hi {
			t.Errorf("%s silence interval [%v, %v], want [%v, %v]", e.Condition, e.Silence.Lo, e.Silence.Hi, lo, hi)
		}
	}
	if ex, im := s.Entries[0].Response.Rate, s.Entries[1].Response.Rate; !(ex > im) {
		t.Errorf("explicit response %.3f is not above implicit %.3f", ex, im)
	}

	var b, c int
	for _, r := range respondT {
		if r["explicit"] && !r["implicit"] {
			b++
		}
		if r["implicit"] && !r["explicit"] {
			c++
		}
	}
	m := s.Paired.Response
	if s.Paired.Pairs != 12 || m.B != b || m.C != c || b != 10 || c != 1 {
		t.Fatalf("paired %+v, want 12 pairs b=%d c=%d (10 and 1 by the rules)", s.Paired, b, c)
	}
	if m.P != stats.McNemarExact(10, 1) || math.Abs(m.Difference-9.0/12) > 1e-12 {
		t.Errorf("p %v difference %v", m.P, m.Difference)
	}
	if math.Abs(m.RateFirst-float64(wants["explicit"].tK)/12) > 1e-12 || math.Abs(m.RateSecond-float64(wants["implicit"].tK)/12) > 1e-12 {
		t.Errorf("paired rates %v %v", m.RateFirst, m.RateSecond)
	}

	// A second run by the same deterministic rule agrees on every decision.
	again, err := Run(ctx, llm, judge, scs[:4], Options{Duty: "You are Aria.", Retries: 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := Agree(ds, again)
	if g.Turns == 0 || g.Agree != g.Turns || g.Rate != 1 || g.OnlyOne != len(ds)-len(again) {
		t.Errorf("agreement %+v", g)
	}
	for _, d := range again {
		if d.Decision == Unparseable && d.Attempts != 1 {
			t.Errorf("retries 0 asked %d times", d.Attempts)
		}
	}
}

func TestRunStopsOnPluginErrorNamingTheTurn(t *testing.T) {
	llmBin, judgeBin := plugins(t)
	scs := shipped(t)[:2]
	llmc := start(t, "rule", llmBin, map[string]any{"answers": "", "fail": "chicken goes in", "garble": []any{}, "respond_also": []any{}})
	judgec := start(t, "lexical", judgeBin, map[string]any{})
	llm, _ := llmc.LLM()
	judge, _ := judgec.Judge()
	ds, err := Run(context.Background(), llm, judge, scs, Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), "scenario hand-01-explicit turn 0: llm:") {
		t.Fatalf("error %v", err)
	}
	if len(ds) != 0 {
		t.Errorf("%d decisions before the first turn failed", len(ds))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, llm, judge, scs, Options{}, nil); err != context.Canceled {
		t.Errorf("cancelled run: %v", err)
	}
}
