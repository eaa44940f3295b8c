package plan

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/sdk"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// The estimate is the sum over items of each rate times what it applies to: counts by
// status, audio of every item and of those to play, disk of every item, play time of
// those not done, score time of every item. A stale item (of an earlier plan, kept on
// disk) is counted apart and costs nothing.
func TestEstimateSumsRatesOverItems(t *testing.T) {
	items := []Item{
		{Model: "a", Scenario: "s1", Status: store.StateDone, AudioS: 100},
		{Model: "a", Scenario: "s2", Status: store.StateTodo, AudioS: 80},
		{Model: "a", Scenario: "s3", Status: store.StateFailed, AudioS: 60},
		{Model: "b", Scenario: "s1", Status: store.StateStale, AudioS: 100},
		{Model: "b", Scenario: "s2", Status: store.StateDamaged, AudioS: 80},
	}
	rates := map[string]Rates{"a": {RTF: 0.5, Source: "measured"}}
	defaults := Rates{PlayOverheadS: 2, DiskPerAudioS: 1000, DiskPerItem: 10, ScorePerItemS: 3, Source: "defaults"}
	est := EstimateItems(items, rates, defaults)
	if len(est.Models) != 2 || est.Models[0].Model != "a" || est.Models[1].Model != "b" {
		t.Fatalf("models %+v", est.Models)
	}
	a, b := est.Models[0], est.Models[1]
	if a.Counts != (Counts{Items: 3, Done: 1, Todo: 1, Failed: 1}) || b.Counts != (Counts{Items: 1, Stale: 1, Damaged: 1}) {
		t.Errorf("counts a %+v, b %+v", a.Counts, b.Counts)
	}
	if a.ToPlay() != 2 || b.ToPlay() != 1 || est.Total.ToPlay() != 3 || est.Total.Items != 4 || est.Total.Stale != 1 {
		t.Errorf("to play: %d, %d, total %d of %d", a.ToPlay(), b.ToPlay(), est.Total.ToPlay(), est.Total.Items)
	}
	if !near(a.AudioHours, 240.0/3600) || !near(a.AudioHoursToPlay, 140.0/3600) {
		t.Errorf("audio hours %v, to play %v", a.AudioHours, a.AudioHoursToPlay)
	}
	if !near(a.DiskBytes, 3*10+240*1000) || !near(a.ScoreSeconds, 9) {
		t.Errorf("disk %v, score %v", a.DiskBytes, a.ScoreSeconds)
	}
	if !near(a.ReportBytes, 3*ReportBytesPerItem+240*ReportBytesPerAudioS) || !near(est.Total.ReportBytes, 4*ReportBytesPerItem+320*ReportBytesPerAudioS) {
		t.Errorf("report bytes %v, total %v: every item's viewer recording counts, within the budget", a.ReportBytes, est.Total.ReportBytes)
	}
	if !near(a.PlaySeconds, (80*0.5+2)+(60*0.5+2)) {
		t.Errorf("play %v: the done item must not count, the failed one must", a.PlaySeconds)
	}
	// b has no play rate: its play time, and so the total's, is unknown, never 0.
	if !math.IsNaN(b.PlaySeconds) || !math.IsNaN(est.Total.PlaySeconds) {
		t.Errorf("play time without a rate: %v, total %v; want unknown", b.PlaySeconds, est.Total.PlaySeconds)
	}
	if !near(est.Total.DiskBytes, a.DiskBytes+b.DiskBytes) || a.Rates.Source != "measured; defaults" {
		t.Errorf("total disk %v; a's rates from %q", est.Total.DiskBytes, a.Rates.Source)
	}
}

// Measure reads real run directories as the store writes them: the model's compute per
// second played, the FLAC audio per second, the other files per item; a run written

// Over the recordings budget the report counts its pages and the budget, each model its
// share of it: 3 models of 4 hours of conversation would be 2.8 GB of recordings.
func TestReportBytesAreCappedByTheRecordingsBudget(t *testing.T) {
	var items []Item
	for i, m := range []string{"a", "a", "b", "c"} {
		items = append(items, Item{Model: m, Scenario: fmt.Sprint("s", i), Status: store.StateTodo, AudioS: 3 * 3600})
	}
	est := EstimateItems(items, nil, Defaults)
	all := 4 * 3 * 3600 * ReportBytesPerAudioS
	if all <= RecordingsBudget {
		t.Fatalf("the items make %d bytes of recordings, within the budget of %d", all, RecordingsBudget)
	}
	if want := 4*ReportBytesPerItem + RecordingsBudget; !near(est.Total.ReportBytes, want) {
		t.Errorf("report bytes %v, want the pages and the budget: %v", est.Total.ReportBytes, float64(want))
	}
	a, b := est.Models[0].ReportBytes, est.Models[1].ReportBytes
	if !near(a-2*ReportBytesPerItem, 2*(b-ReportBytesPerItem)) {
		t.Errorf("a has twice b's audio: recordings %v and %v", a-2*ReportBytesPerItem, b-ReportBytesPerItem)
	}
}

// before the FLAC store is measured as the store would write it now.
func TestMeasureReadsRunDirectories(t *testing.T) {
	root := t.TempDir()
	m := store.Manifest{Name: "r", Harness: provenance.Harness{Version: "x"}, Params: protocol.Defaults(), VAD: protocol.DefaultVAD()}
	flacRun, err := store.Create(filepath.Join(root, "new"), m)
	if err != nil {
		t.Fatal(err)
	}
	const frames, frameSize, rate = 250, 1280, 16000 // 20 s
	speech := make([]float32, frames*frameSize)
	for i := range speech {
		if i < len(speech)/2 {
			speech[i] = float32(0.3 * math.Sin(float64(i)/5) * math.Sin(float64(i)/900))
		}
	}
	rec := func(samples []float32) *record.Record {
		return &record.Record{
			Format:   sdk.Format{InputRate: rate, OutputRate: rate, FrameSize: frameSize},
			Timeline: timeline.Timeline{Duration: 20},
			Audible:  audio.PCM{Samples: samples, Rate: rate},
			Frames:   frames,
			Latency:  record.Latency{Frames: frames, Mean: 0.04}, // 10 s of compute for 20 s
		}
	}
	for _, id := range []string{"00000000000000000000000000000001", "00000000000000000000000000000002"} {
		if err := flacRun.Save(store.Meta{ID: id, Model: "talker", ScenarioID: id}, rec(speech)); err != nil {
			t.Fatal(err)
		}
	}
	// An unfinished item is not a measurement.
	if err := flacRun.Save(store.Meta{ID: "00000000000000000000000000000003", Model: "talker", ScenarioID: "x"}, rec(speech)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(flacRun.ItemDir("00000000000000000000000000000003"), "done"))

	got, err := Measure(flacRun.Dir(), filepath.Join(root, "missing"))
	if err != nil {
		t.Fatal(err)
	}
	r, ok := got["talker"]
	if !ok || !near(r.RTF, 0.5) {
		t.Fatalf("rates %+v; want RTF 0.5", got)
	}
	fi, err := os.Stat(filepath.Join(flacRun.ItemDir("00000000000000000000000000000001"), store.AudibleFLAC))
	if err != nil {
		t.Fatal(err)
	}
	if !near(r.DiskPerAudioS, float64(fi.Size())/20) {
		t.Errorf("audio %v bytes/s, want %v (the FLAC file over 20 s)", r.DiskPerAudioS, float64(fi.Size())/20)
	}
	if r.DiskPerItem < 500 || r.DiskPerItem > 20e3 {
		t.Errorf("other files %v bytes per item", r.DiskPerItem)
	}

	// The same item written as float32 WAV (a run from before) measures the same, but
	// for the FLAC file's comments.
	old := filepath.Join(root, "old")
	oldRun, err := store.Create(old, m)
	if err != nil {
		t.Fatal(err)
	}
	id := "00000000000000000000000000000001"
	if err := oldRun.Save(store.Meta{ID: id, Model: "talker", ScenarioID: id}, rec(speech)); err != nil {
		t.Fatal(err)
	}
	dir := oldRun.ItemDir(id)
	os.Remove(filepath.Join(dir, store.AudibleFLAC))
	if err := audio.WriteWAVAs(filepath.Join(dir, store.AudibleWAV), audio.PCM{Samples: speech, Rate: rate}, audio.Float32); err != nil {
		t.Fatal(err)
	}
	got, err = Measure(old)
	if err != nil {
		t.Fatal(err)
	}
	if o := got["talker"]; math.Abs(o.DiskPerAudioS/r.DiskPerAudioS-1) > 0.01 || !near(o.RTF, 0.5) {
		t.Errorf("old run: %+v; want the FLAC rate %v", o, r.DiskPerAudioS)
	}
}
