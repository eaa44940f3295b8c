package viewer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/plan"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// earModel is an in-process model that keeps every input sample it is given: what it
// heard, to compare the rebuilt room channel with.
type earModel struct {
	format sdk.Format
	mu     sync.Mutex
	heard  map[string][]float32 // conversation id -> input
}

func (m *earModel) Describe(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "ear", Version: "1"}, nil
}
func (m *earModel) Configure(context.Context, map[string]any) error { return nil }
func (m *earModel) Start(_ context.Context, s sdk.ConversationStart) (sdk.Conversation, error) {
	return &earConv{m: m, id: s.ID}, nil
}

type earConv struct {
	m  *earModel
	id string
}

func (c *earConv) Format() sdk.Format { return c.m.format }
func (c *earConv) Step(_ context.Context, frame []float32) (sdk.Output, error) {
	c.m.mu.Lock()
	c.m.heard[c.id] = append(c.m.heard[c.id], frame...)
	c.m.mu.Unlock()
	return sdk.Output{}, nil
}
func (c *earConv) Close() error { return nil }

// noise is a deterministic clip: audio every rate converter has to work on.
func noise(seed uint64, rate int, seconds float64) audio.PCM {
	r := rand.New(rand.NewPCG(seed, 7))
	p := audio.PCM{Samples: make([]float32, int(seconds*float64(rate))), Rate: rate}
	for i := range p.Samples {
		p.Samples[i] = float32(0.4*math.Sin(float64(i)*0.05) + 0.1*(r.Float64()-0.5))
	}
	return p
}

// roomDataset writes a one-scenario dataset: a 22.05 kHz preamble and 16 kHz turns.
func roomDataset(t *testing.T, dir string, bed bool) *dataset.Dataset {
	t.Helper()
	clip := func(name string, p audio.PCM) string {
		t.Helper()
		if err := audio.WriteWAVAs(filepath.Join(dir, "clips", name), p, audio.Float32); err != nil {
			t.Fatal(err)
		}
		return "clips/" + name
	}
	os.MkdirAll(filepath.Join(dir, "clips"), 0o755)
	sc := dataset.Scenario{PairID: "p1", Condition: protocol.Explicit, ScenarioID: "p1-explicit", GoldAnswer: "seven", TPosition: "middle",
		Speakers: []string{"A", "B"},
		Turns: []dataset.Turn{
			{Speaker: "A", Text: "Nice weather.", Label: protocol.LabelN1, Clip: clip("a.wav", noise(1, 16000, 1.3))},
			{Speaker: "B", Text: "Aria, what is three plus four?", Label: protocol.LabelT, Clip: clip("b.wav", noise(2, 16000, 1.7))},
			{Speaker: "A", Text: "Let us see.", Label: protocol.LabelN3, Clip: clip("c.wav", noise(3, 16000, 0.9))},
		}}
	m := dataset.Manifest{Name: "room", Preamble: &dataset.Preamble{Text: "You are Aria.", Clip: clip("pre.wav", noise(4, 22050, 2.1))}}
	if bed {
		// A room's background loop, at a rate of its own and shorter than a conversation.
		m.Room = &dataset.Room{Preset: "living-room", Background: &dataset.Background{Kind: "babble", Clip: clip("bed.wav", noise(5, 22050, 3.3))}}
	}
	if _, err := dataset.Save(dir, m, []dataset.Scenario{sc}); err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// play runs the real evaluation loop of models over ds into a new run directory.
func play(t *testing.T, det *vad.Detector, ds *dataset.Dataset, models []*evaluate.Model) (string, *store.Store, protocol.Params) {
	t.Helper()
	p := protocol.Defaults()
	p.TOnsetWindow, p.Tail = 1, 0.5
	opts := evaluate.Options{Params: p, VAD: protocol.DefaultVAD(), Detector: det}
	runDir := filepath.Join(t.TempDir(), "run")
	man, err := evaluate.NewManifest("room", ds, models, opts)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Create(runDir, man)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := evaluate.Run(context.Background(), ds, models, st, opts); err != nil {
		t.Fatal(err)
	}
	return runDir, st, p
}

// The room channel rebuilt from the dataset and the stored record is, sample for sample,
// the input the model was given: the real evaluation loop plays the conversation to a
// model that keeps what it hears, at a rate the clips must be resampled to (24 kHz) and
// at theirs (16 kHz).
func TestRoomIsWhatTheModelHeard(t *testing.T) {
	det, err := vad.Open(vad.Options{})
	if err != nil {
		t.Skipf("no VAD here (%v): run make deps", err)
	}
	defer det.Close()
	for _, bed := range []bool{false, true} {
		t.Run(fmt.Sprintf("background=%v", bed), func(t *testing.T) { roomIsWhatTheModelHeard(t, det, bed) })
	}
}

func roomIsWhatTheModelHeard(t *testing.T, det *vad.Detector, bed bool) {
	dir := t.TempDir()
	ds := roomDataset(t, filepath.Join(dir, "ds"), bed)
	ears := map[string]*earModel{
		"ear24": {format: sdk.Format{InputRate: 24000, OutputRate: 24000, FrameSize: 1920}, heard: map[string][]float32{}},
		"ear16": {format: sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 2560}, heard: map[string][]float32{}},
	}
	var models []*evaluate.Model
	for _, name := range []string{"ear16", "ear24"} {
		models = append(models, &evaluate.Model{Name: name, Model: ears[name], Info: sdk.Info{Name: "ear", Version: "1"}})
	}
	runDir, _, _ := play(t, det, ds, models)
	room := openRoom(ds.Dir)
	convs := Read(runDir)
	if len(convs) != 2 {
		t.Fatalf("%d conversations stored, want 2", len(convs))
	}
	for _, c := range convs {
		got, err := room.rebuild(c)
		if err != nil {
			t.Fatalf("%s: %v", c.Row.Model, err)
		}
		heard := ears[c.Row.Model].heard["p1-explicit"]
		if got.Rate != ears[c.Row.Model].format.InputRate || len(got.Samples) != len(heard) {
			t.Fatalf("%s: rebuilt %d samples at %d Hz, the model heard %d", c.Row.Model, len(got.Samples), got.Rate, len(heard))
		}
		silent := 0
		for _, v := range heard {
			if v == 0 {
				silent++
			}
		}
		if bed && silent > len(heard)/100 || !bed && silent < len(heard)/10 {
			t.Fatalf("%s: %d of %d input samples are silent with background=%v", c.Row.Model, silent, len(heard), bed)
		}
		for i := range heard {
			if got.Samples[i] != heard[i] {
				t.Fatalf("%s: sample %d (%.4f s) rebuilt as %g, heard %g", c.Row.Model, i, float64(i)/float64(got.Rate), got.Samples[i], heard[i])
			}
		}
		if sc, err := room.scenario(c); err != nil || sc.GoldAnswer != "seven" {
			t.Errorf("%s: the played scenario is not found: %v", c.Row.Model, err)
		}
	}

	// A clip changed after the run is not passed off as what played.
	if err := audio.WriteWAVAs(filepath.Join(ds.Dir, "clips", "b.wav"), noise(9, 16000, 1.7), audio.Float32); err != nil {
		t.Fatal(err)
	}
	if _, err := openRoom(ds.Dir).rebuild(convs[0]); err == nil || !strings.Contains(err.Error(), "differs from the clip played") {
		t.Errorf("a changed clip: %v", err)
	}
	// So is a scenario whose text changed.
	b, _ := os.ReadFile(ds.File)
	os.WriteFile(ds.File, []byte(strings.Replace(string(b), "seven", "eight", 1)), 0o644)
	if _, err := openRoom(ds.Dir).scenario(convs[0]); err == nil || !strings.Contains(err.Error(), "differs from the one played") {
		t.Errorf("a changed scenario: %v", err)
	}
}

// toneModel answers every frame with a loud 440 Hz tone: audio that Silero does not take
// for speech.
type toneModel struct{ earModel }

func (m *toneModel) Start(_ context.Context, s sdk.ConversationStart) (sdk.Conversation, error) {
	return &toneConv{f: m.format}, nil
}

type toneConv struct {
	f sdk.Format
	n int
}

func (c *toneConv) Format() sdk.Format { return c.f }
func (c *toneConv) Step(context.Context, []float32) (sdk.Output, error) {
	out := make([]float32, c.f.FrameSize*c.f.OutputRate/c.f.InputRate)
	for i := range out {
		out[i] = float32(0.3 * math.Sin(2*math.Pi*440*float64(c.n)/float64(c.f.OutputRate)))
		c.n++
	}
	return sdk.Output{Samples: out}, nil
}
func (c *toneConv) Close() error { return nil }

// scoredViewerRun plays the room dataset to a silent model (ear) and a 440 Hz tone model
// (tone) through the real evaluation loop and real Silero, and scores the conversations
// as the score command does (no ASR or judge: every window is silent or not); edit, when
// given, changes a verdict before it is saved. ids are the items, items their verdicts.
func scoredViewerRun(t *testing.T, edit func(model string, sc *score.Scored)) (runDir string, ds *dataset.Dataset, ids []string, items []score.Scored, p protocol.Params) {
	t.Helper()
	det, err := vad.Open(vad.Options{})
	if err != nil {
		t.Skipf("no VAD here (%v): run make deps", err)
	}
	defer det.Close()
	dir := t.TempDir()
	ds = roomDataset(t, filepath.Join(dir, "ds"), false)
	f := sdk.Format{InputRate: 24000, OutputRate: 24000, FrameSize: 1920}
	models := []*evaluate.Model{
		{Name: "ear", Model: &earModel{format: f, heard: map[string][]float32{}}, Info: sdk.Info{Name: "ear", Version: "1"}},
		{Name: "tone", Model: &toneModel{earModel{format: f}}, Info: sdk.Info{Name: "tone", Version: "1"}},
	}
	runDir, st, p := play(t, det, ds, models)
	ids, _ = st.IDs()
	for _, id := range ids {
		it, err := st.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		sc := score.Score(score.Item{Model: it.Meta.Model, Condition: it.Meta.Condition, PairID: it.Meta.PairID, ScenarioID: it.Meta.ScenarioID,
			TPosition: it.Meta.TPosition, Timeline: it.Record.Timeline, Episodes: it.Record.Episodes}, p)
		if edit != nil {
			edit(it.Meta.Model, &sc)
		}
		if err := st.SaveVerdicts(id, map[string]any{"key": "k", "scored": sc}); err != nil {
			t.Fatal(err)
		}
		items = append(items, sc)
	}
	return runDir, ds, ids, items, p
}

// writeViewer writes the viewer of a scored run as the report does.
func writeViewer(t *testing.T, runDir string, ds *dataset.Dataset, p protocol.Params, budget int64) map[string]AudioInfo {
	t.Helper()
	audio, _, err := Write(runDir, Read(runDir), Options{Protocol: p, Dataset: ds, RecordingsBudget: budget, Report: "report.html"})
	if err != nil {
		t.Fatal(err)
	}
	return audio
}

// pageOf is the viewer page of item id, as written into runDir.
func pageOf(t *testing.T, runDir, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(runDir, ViewerDir, pageName(id)))
	if err != nil {
		t.Fatalf("the page of item %s: %v", id, err)
	}
	return string(b)
}

// Write on a run directory writes a page and a stereo recording per conversation,
// reuses the recordings when nothing changed, drops those of items that are gone, and
// gives report.html's no-speech diagnostic its facts: the tone model emitted audio in
// which the VAD found no speech.
func TestViewerPagesRecordingsAndTheNoSpeechDiagnostic(t *testing.T) {
	runDir, ds, ids, _, p := scoredViewerRun(t, nil)
	facts := writeViewer(t, runDir, ds, p, 1<<30)
	for _, id := range ids {
		conv := pageOf(t, runDir, id)
		for _, want := range []string{`<svg class="timeline"`, `<audio id="player"`, `src="` + id + `.wav"`, "gold answer:</b> seven", `href="../report.html#explore?`} {
			if !strings.Contains(conv, want) {
				t.Errorf("page of %s lacks %q", id, want)
			}
		}
	}
	for _, c := range Read(runDir) {
		a := facts[c.Row.ID]
		if noSpeech := a.Emitted() && len(c.Episodes) == 0; noSpeech != (c.Row.Model == "tone") {
			t.Errorf("%s: emitted audio %v (peak %.1f dBFS) with %d speech episodes", c.Row.Model, a.Emitted(), a.PeakDBFS, len(c.Episodes))
		}
		// The diagnostic points at the file the store wrote, which duplexmpe vad reads.
		if a.File != store.AudibleFLAC {
			t.Errorf("%s: the audio facts name %q, not the item's %s", c.Row.Model, a.File, store.AudibleFLAC)
		}
	}

	// Re-rendering reuses every recording; an item that is gone loses its files.
	wav := filepath.Join(runDir, ViewerDir, ids[0]+".wav")
	// duplexmpe plan counts the recordings at the rate they are written.
	if w, err := audio.StatWAV(wav); err != nil || w.Rate*w.Channels*w.Bits/8 != plan.ReportBytesPerAudioS {
		t.Errorf("the recording is %+v (%v): %d bytes a second, plan counts %d", w, err, w.Rate*w.Channels*w.Bits/8, plan.ReportBytesPerAudioS)
	}
	before, _ := os.Stat(wav)
	writeViewer(t, runDir, ds, p, 1<<30)
	if after, _ := os.Stat(wav); !after.ModTime().Equal(before.ModTime()) {
		t.Error("an unchanged recording was made again")
	}
	os.RemoveAll(filepath.Join(runDir, "items", ids[1]))
	writeViewer(t, runDir, ds, p, 1<<30)
	for _, ext := range []string{".html", ".wav", ".audio.json"} {
		if _, err := os.Stat(filepath.Join(runDir, ViewerDir, ids[1]+ext)); err == nil {
			t.Errorf("the viewer still has %s%s of a removed item", ids[1], ext)
		}
	}
}

// The recordings go within the budget, the conversations with a failed decision first:
// with room for one, the tone model's conversation (its T turn got no answer) has its
// recording and the ear model's, earlier in item order but with no decision failed, does
// not; its page plays the item's audible.flac instead and says how to raise the budget.
func TestRecordingsBudgetGoesToFailedConversationsFirst(t *testing.T) {
	runDir, ds, _, _, p := scoredViewerRun(t, func(model string, sc *score.Scored) {
		if model == "ear" {
			sc.Events = nil // no decision, so none failed: this one goes last
		} else if !hasFailure(&Conv{Scored: sc}) {
			t.Fatalf("the tone model's conversation has no failed decision: %+v", sc.Events)
		}
	})
	byModel := map[string]string{}
	for _, c := range Read(runDir) {
		byModel[c.Row.Model] = c.Row.ID
	}
	ear, tone := byModel["ear"], byModel["tone"]
	vdir := filepath.Join(runDir, ViewerDir)
	size := func(id string) int64 {
		fi, err := os.Stat(filepath.Join(vdir, id+".wav"))
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	render := func(budget int64) {
		t.Helper()
		writeViewer(t, runDir, ds, p, budget)
	}
	render(1 << 30) // a budget that holds both
	sEar, sTone := size(ear), size(tone)
	if sEar <= 44 || sTone <= 44 {
		t.Fatalf("recordings of %d and %d bytes under the default budget", sEar, sTone)
	}

	for _, c := range []struct {
		budget        int64
		earWav, toneW bool
	}{
		{sEar + sTone - 1, false, true}, // room for one: the failed conversation's
		{sTone - 1, false, false},       // room for none
		{sEar + sTone, true, true},      // raised again: both come back
	} {
		render(c.budget)
		var used int64
		for id, want := range map[string]bool{ear: c.earWav, tone: c.toneW} {
			page := pageOf(t, runDir, id)
			has := size(id) > 0
			if has != want {
				t.Errorf("budget %d: %s has a recording %v, want %v", c.budget, id, has, want)
			}
			if has {
				used += size(id)
				if !strings.Contains(page, `src="`+id+`.wav"`) || strings.Contains(page, `id="left-out"`) {
					t.Errorf("budget %d: the page of %s does not play its recording", c.budget, id)
				}
				continue
			}
			audible := "../items/" + id + "/" + store.AudibleFLAC
			if !strings.Contains(page, `<audio id="player" controls preload="metadata" src="`+audible+`">`) {
				t.Errorf("budget %d: the page of %s without its recording does not play %s", c.budget, id, audible)
			}
			if _, err := os.Stat(filepath.Join(vdir, filepath.FromSlash(audible))); err != nil {
				t.Errorf("budget %d: the page of %s links %s: %v", c.budget, id, audible, err)
			}
			if !strings.Contains(page, `id="left-out"`) || !strings.Contains(page, "--recordings-budget") {
				t.Errorf("budget %d: the page of %s does not say the recording was left out and how to raise the budget", c.budget, id)
			}
		}
		if used > c.budget {
			t.Errorf("budget %d: the recordings take %d bytes", c.budget, used)
		}
	}
}

// The budget is spent in one order whatever the workers do: failed conversations first,
// each group in item order.
func TestRecordingOrderPutsFailuresFirst(t *testing.T) {
	pass := &score.Scored{Events: []score.Event{{Label: "N4", N4: &score.N4Verdict{Eligible: false, Outcome: score.N4NoOnsetInGap}}}}
	fail := &score.Scored{Events: []score.Event{{Label: "N1", Silence: &score.SilenceVerdict{Speech: []score.Span{{Start: 1, End: 6}}, SpeechMS: 5000}}}}
	convs := []*Conv{{Scored: pass}, {Scored: fail}, {}, {Failure: "the model crashed"}, {Scored: pass}}
	got := recordingOrder(convs)
	if want := []int{1, 3, 0, 2, 4}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// openRoom is the room of the dataset in dir, read as a report reads it (LoadDataset).
func openRoom(dir string) *roomSource { return newRoom(LoadDataset(dir)) }
