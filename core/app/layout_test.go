package app

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/plan"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
	"github.com/duplexmpe/duplexmpe/tools/clitest"
)

// planOfFirstPair plans the first shipped pair, not built, for two models, under
// protocol (HCL attributes of the evaluation's protocol block).
func planOfFirstPair(t *testing.T, protocolBlock string) (*PlanResult, *config.Evaluation, []dataset.Scenario) {
	t.Helper()
	dir := t.TempDir()
	clitest.FirstPair(t, dir)
	silent := plugintest.BuildGo(t, "../../plugins/silent")
	runFile := filepath.Join(dir, "run.hcl")
	clitest.WriteFile(t, runFile, fmt.Sprintf(`
plugin "flite" { source = %q }
plugin "a" { source = %q }
plugin "b" { source = %q }
plugin "asr" { source = %q }
plugin "judge" { source = %q }

dataset "one" {
  scenarios = "scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out       = "build/one"
}

evaluation "e" {
  dataset = dataset.one
  models  = [plugin.a, plugin.b]
  asr     = plugin.asr
  judge   = plugin.judge
  out     = "runs/e"
  protocol {
%s
  }
}
`, silent, silent, silent, silent, silent, protocolBlock))
	f, diags := config.Load(runFile, config.Options{Cwd: dir})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s, err := pluginstart.NewStarter(f, pluginstart.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ev := f.Evaluation("e")
	res, err := Plan(s, ev, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Load(filepath.Join(dir, "scenarios"))
	if err != nil {
		t.Fatal(err)
	}
	return res, ev, ds.Scenarios
}

// handLength is protocol section 3.3 written out for one conversation not built yet,
// independently of session.Lay: the preamble and preamble_gap, each turn (its words at
// flite's rate), after T the wait at its cap, after N4_Q n4_gap, after the last turn
// nothing, after any other turn_gap, then the tail.
func handLength(sc dataset.Scenario, p protocol.Params) float64 {
	s := float64(len(strings.Fields(construct.DefaultPreamble)))*plan.SecondsPerWord + p.PreambleGap
	for i, t := range sc.Turns {
		s += float64(len(strings.Fields(t.Text))) * plan.SecondsPerWord
		switch {
		case t.Label == protocol.LabelT:
			s += p.TWaitCap
		case i == len(sc.Turns)-1:
		case t.Label == protocol.LabelN4Q:
			s += p.N4Gap
		default:
			s += p.TurnGap
		}
	}
	return s + p.Tail
}

// Plan counts each conversation as the scheduler lays it out, and the disk that `run`
// checks before playing is the estimate's own: the run store's bytes of the items to
// play at the same rates (before, plan left turn_gap after T and after the last turn,
// counted the onset window instead of the wait, and run checked the disk against a
// formula nine times the estimate it printed).
func TestPlanCountsTheSchedulersLayoutAndTheDiskRunChecks(t *testing.T) {
	res, ev, scs := planOfFirstPair(t, "t_wait_cap = \"20s\"\n n4_gap = \"2.5s\"")
	if res.Conversations != 2 || res.Estimate.Total.Items != 4 || res.Estimate.Total.ToPlay() != 4 {
		t.Fatalf("plan: %d conversations, %+v", res.Conversations, res.Estimate.Total.Counts)
	}
	var want float64
	for _, sc := range scs {
		want += handLength(sc, ev.Protocol)
	}
	for _, m := range res.Estimate.Models {
		if got := m.AudioHours * 3600; math.Abs(got-want) > 0.01 {
			t.Errorf("model %s: plan counts %.3f s of conversation, the protocol's layout is %.3f s", m.Model, got, want)
		}
		if want := plan.ItemBytes(m.Rates, want/2) * 2; math.Abs(m.DiskBytesToPlay-want) > 1 || m.DiskBytesToPlay != m.DiskBytes {
			t.Errorf("model %s: disk to play %.0f, store %.0f; want both %.0f", m.Model, m.DiskBytesToPlay, m.DiskBytes, want)
		}
	}
	if tot := res.Estimate.Total; tot.DiskBytesToPlay != res.Estimate.Models[0].DiskBytesToPlay+res.Estimate.Models[1].DiskBytesToPlay {
		t.Errorf("total disk to play %.0f is not the models' sum", tot.DiskBytesToPlay)
	}
}

// The timing-cue control pads ordinary turns with a request's gap drawn per item: the
// plan counts the same pads, so the conversations grow by at least the difference.
func TestPlanCountsTheTimingControlsPads(t *testing.T) {
	plain, _, _ := planOfFirstPair(t, "")
	padded, _, _ := planOfFirstPair(t, "timing_control = true")
	if a, b := plain.Estimate.Total.AudioHours, padded.Estimate.Total.AudioHours; !(b > a) {
		t.Errorf("with the timing-cue control the plan counts %.4f h, without %.4f h; the pads are at least turn_gap", b, a)
	}
}
