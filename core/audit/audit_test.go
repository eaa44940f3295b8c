package audit

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
)

const openV1 = "../../datasets/open-v1"

func checkNamed(t *testing.T, r *Report, name string) Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, r.Checks)
	return Check{}
}

// The audit on open v1 finds the shortcuts issue 28 measured there, so it cannot go
// blind without this test failing: the text labeller agrees with about 96.8% of the
// labels and finds nearly every implicit request at under 2% false alarms; stock frames
// repeat; no cue_text; the name alone is almost never a trap; B asks 56% of the requests
// while speaking 29% of the turns; from 2.5 s a pause responder answers every request
// and speaks into no N1-N3 window.
func TestOpenV1FailsTheAudit(t *testing.T) {
	r, err := Path(openV1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc := r.TextScore
	if sc.Turns < 9000 || sc.Implicit < 380 {
		t.Fatalf("the text check was not scored on v1's test split: %+v", sc)
	}
	if a := sc.Agreement(); math.Abs(a-0.968) > 0.02 {
		t.Errorf("labeller agreement %.3f, the issue measured 0.968", a)
	}
	if sc.Recall() < 0.8 || sc.FalseAlarmRate() > TextMaxFalseAlarm {
		t.Errorf("labeller finds %.3f of implicit requests at %.3f false alarms; v1's stock frames give over 0.8 under 0.02", sc.Recall(), sc.FalseAlarmRate())
	}
	if c := checkNamed(t, r, "text"); c.Pass {
		t.Errorf("text check passes on v1: %+v", c)
	}
	if c := checkNamed(t, r, "phrases"); c.Pass || !strings.Contains(c.Detail, "you're keeping the") {
		t.Errorf("phrase check on v1: %+v; want a failure naming \"you're keeping the\"", c)
	}
	if c := checkNamed(t, r, "cue_text"); c.Pass || !strings.HasPrefix(c.Value, "0/430") {
		t.Errorf("cue_text check on v1: %+v", c)
	}
	if c := checkNamed(t, r, "name"); c.Pass {
		t.Errorf("name check passes on v1: %+v", c)
	}
	c := checkNamed(t, r, "who asks T")
	if c.Pass || !strings.HasPrefix(c.Value, "B off by") || !strings.Contains(c.Detail, "B 55.6%") {
		t.Errorf("who-asks T on v1: %+v; the issue measured B 239 of 430 (55.6%%)", c)
	}
	if c := checkNamed(t, r, "pause"); c.Pass {
		t.Errorf("pause check passes on v1: %+v", c)
	}
	for _, p := range r.Pause {
		if p.Threshold >= 2.5 && (p.Missed != 0 || p.Intrudes != 0) {
			t.Errorf("at %g s the pause responder misses %.3f and intrudes %.3f; v1's gaps stop at 2.498 s, so 0 and 0", p.Threshold, p.Missed, p.Intrudes)
		}
	}
	if c := checkNamed(t, r, "answers"); !c.NotRun || r.Failed() != len(r.Checks)-1 {
		t.Errorf("answers %+v; failed %d of %d checks", c, r.Failed(), len(r.Checks))
	}
}

// Lapses close the pause shortcut: v1's authoring recompiled with a lapse share passes
// the pause check (at every threshold the responder speaks into >= 10% of N1-N3
// windows), and without one it fails as v1 does.
func TestLapsesPassThePauseCheck(t *testing.T) {
	for _, c := range []struct {
		share float64
		pass  bool
	}{{0, false}, {0.2, true}} {
		all := compileV1(t, c.share)
		chk, rows := pauseCheck(all)
		if chk.Pass != c.pass {
			t.Errorf("lapse share %g: pause check pass %v, want %v\n%s", c.share, chk.Pass, c.pass, chk.Detail)
		}
		if c.share > 0 {
			t.Logf("lapse share %g:\n%s", c.share, chk.Detail)
			if last := rows[len(rows)-1]; last.Intrudes < PauseMinIntrusion {
				t.Errorf("at 4.5 s the responder intrudes on %.3f", last.Intrudes)
			}
		}
	}
}

func compileV1(t *testing.T, share float64) []dataset.Scenario {
	t.Helper()
	spec, err := construct.ReadReleaseSpec(filepath.Join(openV1, "authoring", "release.json"))
	if err != nil {
		t.Fatal(err)
	}
	spec.LapseShare = share
	rf, err := construct.CompileRelease(spec)
	if err != nil {
		t.Fatal(err)
	}
	var all []dataset.Scenario
	for _, sp := range rf.Release.Splits {
		d, err := dataset.LoadScenariosBytes(rf.Files[sp.File], sp.File)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, d.Scenarios...)
	}
	return all
}
