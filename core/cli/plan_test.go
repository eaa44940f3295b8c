package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/plan"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/tools/clitest"
)

// The paper's run file: open v1's test split (389 pairs) for six models, planned without starting
// any plugin (its GPU models are not even installed here).
func TestPlanOfThePaperRun(t *testing.T) {
	paper, err := filepath.Abs("../../examples/runs/paper.hcl")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runInDir(t, t.TempDir(), nil, "plan", paper)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "plan", out,
		`Plan: evaluation "paper"`,
		"6 models x 778 conversations x 1 repeat = 4668 items: 0 done, 4668 to play",
		"model", "items", "done", "to play", "audio h", "disk", "play time", "score time",
		"minicpm_o", "778", "moshi", "flm_audio", "voila", "freeze_omni", "cascade", "total", "4668",
		"disk when done:", "note: model minicpm_o: no measured play rate", "--rtf minicpm_o=")

	// The whole paper run (open v1 test, 389 pairs, 4,668 items) fits well under 30 GB at the
	// default disk rate (the beeper's FLAC audio, the most of the baselines measured).
	code, out, errs = runInDir(t, t.TempDir(), nil, "plan", paper, "--json")
	var whole []struct {
		Total struct {
			Items       int      `json:"items"`
			DiskBytes   *float64 `json:"disk_bytes"`
			ReportBytes float64  `json:"report_bytes"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &whole); code != ExitOK || err != nil || len(whole) != 1 {
		t.Fatalf("--json: exit %d, %v\n%s\n%s", code, err, out, errs)
	}
	if w := whole[0].Total; w.Items != 4668 || w.DiskBytes == nil || *w.DiskBytes <= 0 || *w.DiskBytes > 30e9 {
		t.Fatalf("the paper run: %d items, disk %v; want 4668 items in well under 30 GB", w.Items, w.DiskBytes)
	}
	// The report is counted apart: a page per conversation, and the viewer's recordings
	// within their budget (at 64 kB a second of conversation, all of them would be ten
	// times the store at this scale).
	if w, want := whole[0].Total, 4668*plan.ReportBytesPerItem+plan.RecordingsBudget; math.Abs(w.ReportBytes-want) > 1 || w.ReportBytes > *w.DiskBytes {
		t.Errorf("the paper run's report: %.0f bytes, want the pages and the recordings budget, %.0f, beside %.0f for the store", w.ReportBytes, float64(want), *w.DiskBytes)
	}

	code, out, errs = runInDir(t, t.TempDir(), nil, "plan", paper, "--json", "--rtf", "moshi=0.5", "--shard", "1/4")
	if code != ExitOK {
		t.Fatalf("--json: exit %d\n%s", code, errs)
	}
	var plans []struct {
		Shard    string `json:"shard"`
		Fits     bool   `json:"fits"`
		PerModel []struct {
			Model       string   `json:"model"`
			Items       int      `json:"items"`
			AudioHours  float64  `json:"audio_hours"`
			DiskBytes   *float64 `json:"disk_bytes"`
			PlaySeconds *float64 `json:"play_s"`
			Rates       plan.Rates
		} `json:"per_model"`
		Total struct {
			Items       int      `json:"items"`
			DiskBytes   *float64 `json:"disk_bytes"`
			PlaySeconds *float64 `json:"play_s"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	p := plans[0]
	// A quarter of the 778 conversations for each of the six models: the shard split
	// keeps a conversation's items together, so every model gets the same count.
	if p.Shard != "1/4" || p.Total.Items != 6*p.PerModel[0].Items || p.Total.DiskBytes == nil || p.Total.PlaySeconds != nil {
		t.Fatalf("shard %s: %d items, disk %v, play %v; want six models' items, a disk, an unknown play time", p.Shard, p.Total.Items, p.Total.DiskBytes, p.Total.PlaySeconds)
	}
	for _, m := range p.PerModel {
		if m.Items < 778/4-20 || m.Items > 778/4+20 || m.Items != p.PerModel[0].Items || m.DiskBytes == nil || *m.DiskBytes <= 0 {
			t.Errorf("%s: %d items, disk %v", m.Model, m.Items, m.DiskBytes)
		}
		if m.Model == "moshi" {
			want := m.AudioHours*3600*0.5 + float64(m.Items)*plan.Defaults.PlayOverheadS
			if m.PlaySeconds == nil || math.Abs(*m.PlaySeconds-want) > 1e-6*want {
				t.Errorf("moshi play %v s with --rtf 0.5, want %.0f", m.PlaySeconds, want)
			}
		}
	}
}

// A run store that already holds some conversations, of a dataset not built: plan
// measures the model's rates on them, and counts every item as to play (the item ids
// need the built clips), saying so.
func TestPlanCountsWhatTheStoreHolds(t *testing.T) {
	dir := unbuiltRun(t, "")
	st, err := store.Create(filepath.Join(dir, "runs", "e"), store.Manifest{Name: "e", Harness: provenance.Harness{Version: "x"}, Params: protocol.Defaults(), VAD: protocol.DefaultVAD()})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(failure string) *record.Record {
		return &record.Record{Format: sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1280},
			Timeline: timeline.Timeline{Duration: 80}, Audible: audio.PCM{Samples: make([]float32, 1000*1280), Rate: 16000},
			Frames: 1000, Latency: record.Latency{Frames: 1000, Mean: 0.001}, Failure: failure}
	}
	for i, sc := range []string{"hand-01-explicit", "hand-01-implicit", "hand-02-explicit", "hand-02-implicit"} {
		id := strings.Repeat("0", 31) + string(rune('1'+i))
		failure := ""
		if i == 3 {
			failure = "plugin exited"
		}
		if err := st.Save(store.Meta{ID: id, Model: "silent", ScenarioID: sc}, rec(failure)); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runInDir(t, dir, nil, "plan", "run.hcl")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "plan", out, "1 model x 24 conversations x 1 repeat = 24 items: 0 done, 24 to play",
		"silent", "24", "0", "24", "measured on 3 items", "fits", "note: the dataset is not built")
	if strings.Contains(out, "no measured play rate") {
		t.Errorf("the stored conversations gave no play rate:\n%s", out)
	}
}

// A run file with repeats = 3 is planned as three plays of every conversation, before
// anything is built or played (TestPlanCountsTheRepeatsTheRunPlays plans it against a
// run directory).
func TestPlanCountsRepeats(t *testing.T) {
	dir := unbuiltRun(t, "repeats = 3")
	code, out, errs := runInDir(t, dir, nil, "plan", "run.hcl", "--json")
	var plans []struct {
		Repeats int `json:"repeats"`
		Total   struct {
			Items            int     `json:"items"`
			Todo             int     `json:"todo"`
			AudioHours       float64 `json:"audio_hours"`
			AudioHoursToPlay float64 `json:"audio_hours_to_play"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &plans); code != ExitOK || err != nil || len(plans) != 1 {
		t.Fatalf("plan --json: exit %d, %v\n%s\n%s", code, err, out, errs)
	}
	if p := plans[0]; p.Repeats != 3 || p.Total.Items != 72 || p.Total.Todo != 72 || p.Total.AudioHours != p.Total.AudioHoursToPlay {
		t.Errorf("24 conversations x 3 repeats: repeats %d, %d items, %d to play, %.2f of %.2f audio hours to play; want 3, 72, 72, all",
			p.Repeats, p.Total.Items, p.Total.Todo, p.Total.AudioHoursToPlay, p.Total.AudioHours)
	}
}

// unbuiltRun writes dir/run.hcl: the shipped scenarios, not built, played by the silent
// baseline into runs/e, with extra in the evaluation block; it returns dir.
func unbuiltRun(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	scenarios, err := filepath.Abs("../../examples/scenarios")
	if err != nil {
		t.Fatal(err)
	}
	clitest.WriteFile(t, filepath.Join(dir, "run.hcl"), `
plugin "flite" { source = "bin/flite" }
plugin "silent" { source = "bin/silent" }
plugin "asr" { source = "bin/asr" }
plugin "judge" { source = "bin/judge" }
dataset "shipped" {
  scenarios = "`+scenarios+`"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out       = "build/none"
}
evaluation "e" {
  dataset = dataset.shipped
  models  = [plugin.silent]
  asr     = plugin.asr
  judge   = plugin.judge
  out     = "runs/e"
  `+extra+`
}
`)
	return dir
}

// Issues 29 and 30: plan took no --limit. plan --limit N plans what `run --limit N`
// plays (the first N pairs, both conditions of each) and estimates the dataset build it
// needs: the distinct lines of those scenarios not built yet and the preamble, their
// seconds of speech, and the CPU at the stated synthesis rate.
func TestPlanLimit(t *testing.T) {
	dir := unbuiltRun(t, "")
	type planJSON struct {
		Limit int `json:"limit"`
		Total struct {
			Items int `json:"items"`
			Todo  int `json:"todo"`
		} `json:"total"`
		Build plan.Build `json:"build"`
	}
	planOf := func(args ...string) planJSON {
		t.Helper()
		code, out, errs := runInDir(t, dir, nil, append([]string{"plan", "run.hcl", "--json"}, args...)...)
		var plans []planJSON
		if err := json.Unmarshal([]byte(out), &plans); code != ExitOK || err != nil || len(plans) != 1 {
			t.Fatalf("plan --json %v: exit %d, %v\n%s\n%s", args, code, err, out, errs)
		}
		return plans[0]
	}
	all, two := planOf(), planOf("--limit", "2")

	// The expected build, counted here from the scripts: the first two pairs' distinct
	// (speaker, line) and the preamble.
	d, err := dataset.Load("../../examples/scenarios")
	if err != nil {
		t.Fatal(err)
	}
	pairs, lines, seconds := map[string]bool{}, map[string]bool{}, 0.0
	for _, sc := range d.Scenarios {
		if !pairs[sc.PairID] && len(pairs) == 2 {
			continue
		}
		pairs[sc.PairID] = true
		for _, tr := range sc.Turns {
			if k := tr.Speaker + "|" + tr.Text; !lines[k] {
				lines[k] = true
				seconds += float64(len(strings.Fields(tr.Text))) * plan.SecondsPerWord
			}
		}
	}
	seconds += float64(len(strings.Fields(construct.DefaultPreamble))) * plan.SecondsPerWord
	allPairs := map[string]bool{}
	for _, sc := range d.Scenarios {
		allPairs[sc.PairID] = true
	}

	if two.Limit != 2 || two.Total.Items != 4 || two.Total.Todo != 4 {
		t.Errorf("--limit 2: limit %d, %d items, %d to play; want 2, 4 (two pairs, both conditions), 4", two.Limit, two.Total.Items, two.Total.Todo)
	}
	b := two.Build
	if b.Pairs != 2 || b.OfPairs != len(allPairs) || b.Clips != len(lines)+1 || math.Abs(b.AudioS-seconds) > 1e-6 {
		t.Errorf("--limit 2 build: %+v; want 2 of %d pairs, %d clips, %.3f s of speech", b, len(allPairs), len(lines)+1, seconds)
	}
	if math.Abs(b.CPUSeconds-b.AudioS*plan.SynthesisCPUPerAudioS) > 1e-6 {
		t.Errorf("build CPU %.3f s is not %.3f s of speech at %.1f CPU-s per s", b.CPUSeconds, b.AudioS, plan.SynthesisCPUPerAudioS)
	}
	if all.Limit != 0 || all.Total.Items != 2*len(allPairs) || all.Build.Pairs != len(allPairs) || all.Build.Clips <= b.Clips || all.Build.AudioS <= b.AudioS {
		t.Errorf("without --limit: %+v; want every pair, more clips and speech than --limit 2", all)
	}

	code, out, _ := runInDir(t, dir, nil, "plan", "run.hcl", "--limit", "2")
	for _, want := range []string{fmt.Sprintf("--limit 2: the first 2 of %d pairs", len(allPairs)), fmt.Sprintf("dataset build: %d clips to synthesise", len(lines)+1), "an estimate: 1.3 CPU-s per second of speech"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("plan --limit 2: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	if code, _, errs := runInDir(t, dir, nil, "plan", "run.hcl", "--limit", "0"); code != ExitUsage {
		t.Errorf("--limit 0: exit %d, want 2\n%s", code, errs)
	}
}
