package evaluate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/progress"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/plugins/always-talk/speech"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// The loop runs the baseline plugins as real processes over real gRPC, with the real
// Silero detector, on a small synthetic dataset of real (flite) speech.

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "evaluate-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	build := exec.Command("go", "build", "-o", dir+"/", "../../plugins/silent", "../../plugins/always-talk")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the baseline plugins:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	pluginhost.KillAll()
	os.RemoveAll(dir)
	plugintest.RemoveBuilt()
	os.Exit(code)
}

var (
	detOnce sync.Once
	det     *vad.Detector
	detErr  error
)

func options(t *testing.T) evaluate.Options {
	t.Helper()
	detOnce.Do(func() { det, detErr = vad.Open(vad.Options{}) })
	if detErr != nil {
		t.Fatalf("%v\n(these tests run the real Silero model: run `make deps` first)", detErr)
	}
	p := protocol.Defaults()
	p.TOnsetWindow, p.TEndSilence, p.TWaitCap, p.Tail = 1, 0.5, 2, 0.5
	return evaluate.Options{Params: p, VAD: protocol.DefaultVAD(), Detector: det, Seed: 1}
}

// smallDataset writes two pairs (four scenarios) of three turns each, 0.6 s clips cut
// from the baselines' flite recording, and a 0.8 s preamble.
func smallDataset(t *testing.T) *dataset.Dataset {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "clips"), 0o755)
	v, err := speech.Voice(16000)
	if err != nil {
		t.Fatal(err)
	}
	clip := func(name string, from, secs float64) string {
		rel := "clips/" + name + ".wav"
		pcm := audio.PCM{Samples: v[int(from*16000):int((from+secs)*16000)], Rate: 16000}
		if err := audio.WriteWAV(filepath.Join(dir, rel), pcm); err != nil {
			t.Fatal(err)
		}
		return rel
	}
	pre := clip("preamble", 0, 0.8)
	var scs []dataset.Scenario
	for p := 0; p < 2; p++ {
		for ci, cond := range []string{protocol.Explicit, protocol.Implicit} {
			sc := dataset.Scenario{
				PairID: fmt.Sprintf("p%d", p), Condition: cond, ScenarioID: fmt.Sprintf("p%d-%s", p, cond),
				Speakers: []string{"A", "B", "C"}, GoldAnswer: "nine", TPosition: "middle",
			}
			for ti, label := range []string{protocol.LabelN1, protocol.LabelT, protocol.LabelN3} {
				start := 1 + float64(p*3+ti)*0.6 + float64(ci)*0.05
				sc.Turns = append(sc.Turns, dataset.Turn{Speaker: sc.Speakers[ti], Text: "words", Label: label,
					Clip: clip(fmt.Sprintf("p%d%s%d", p, cond, ti), start, 0.6), DurationS: 0.6})
			}
			scs = append(scs, sc)
		}
	}
	ds, err := dataset.Save(dir, dataset.Manifest{Name: "small", Preamble: &dataset.Preamble{Text: "duty", Clip: pre}}, scs)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func startModel(t *testing.T, name string) *evaluate.Model {
	return startModelFrom(t, name, filepath.Join(binDir, name))
}

func startModelFrom(t *testing.T, name, bin string) *evaluate.Model {
	t.Helper()
	ctx := context.Background()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: name, Source: bin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	cfg := map[string]any{"frame_ms": 80.0}
	if err := c.Configure(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	m, err := evaluate.NewModel(ctx, name, c, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Info.Name != name || evaluate.ModelConcurrency(m) != 4 {
		t.Fatalf("described as %+v", m.Info)
	}
	return m
}

func newStore(t *testing.T, ds *dataset.Dataset, models []*evaluate.Model, opts evaluate.Options) *store.Store {
	t.Helper()
	man, err := evaluate.NewManifest("test", ds, models, opts)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Create(filepath.Join(t.TempDir(), "run"), man)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestRunAndResume(t *testing.T) {
	ds := smallDataset(t)
	models := []*evaluate.Model{startModel(t, "silent"), startModel(t, "always-talk")}
	opts := options(t)
	st := newStore(t, ds, models, opts)
	var log bytes.Buffer
	opts.Progress = progress.New(progress.Lines(&log), "playing", "", "conversations")

	sum, err := evaluate.Run(context.Background(), ds, models, st, opts)
	opts.Progress.Finish(err == nil)
	if err != nil {
		t.Fatal(err)
	}
	// The first and the last line (a line every 30 s between them is core/progress's,
	// tested there on a fake clock).
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) < 2 || lines[0] != "playing: 0/8 conversations, 0%, -, time left unknown; silent 0/4, always-talk 0/4" ||
		!strings.HasPrefix(lines[len(lines)-1], "playing: 8/8 conversations, 100%, ") ||
		!strings.HasSuffix(lines[len(lines)-1], ", done; silent 4/4, always-talk 4/4") {
		t.Errorf("progress off a terminal:\n%s", log.String())
	}
	if sum.Total != (evaluate.Counts{Planned: 8, Done: 8}) {
		t.Errorf("first run %+v, want 8 planned and done", sum.Total)
	}
	items, _ := evaluate.Plan(ds, models, opts)
	for _, it := range items {
		got, err := st.Load(it.Meta.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Meta.Model != it.Meta.Model || got.Meta.ScenarioID != it.Meta.ScenarioID || len(got.Record.Timeline.Turns) != 3 {
			t.Errorf("stored item %+v for %+v", got.Meta, it.Meta)
		}
		speaks := len(got.Record.Episodes) > 0
		if speaks != (it.Meta.Model == "always-talk") {
			t.Errorf("%s on %s: episodes %v", it.Meta.Model, it.Meta.ScenarioID, got.Record.Episodes)
		}
	}

	log.Reset()
	opts.Progress = progress.New(progress.Lines(&log), "playing", "", "conversations")
	sum, err = evaluate.Run(context.Background(), ds, models, st, opts)
	opts.Progress.Finish(err == nil)
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(log.String(), "\n"); first != "playing: 8/8 conversations, 100%, -, done; silent 4/4, always-talk 4/4" {
		t.Errorf("resumed: progress starts %q, want everything done", first)
	}
	if sum.Total != (evaluate.Counts{Planned: 8, Reused: 8}) || sum.Models["silent"].Reused != 4 {
		t.Errorf("resumed run %+v, want all 8 reused", sum.Total)
	}
}

// killer kills the plugin process in the middle of one conversation.
type killer struct {
	sdk.Model
	client *pluginhost.Client
	conv   string
	frame  int
	remove string // a file to delete before the kill
}

func (k *killer) Start(ctx context.Context, req sdk.ConversationStart) (sdk.Conversation, error) {
	c, err := k.Model.Start(ctx, req)
	if err != nil || req.ID != k.conv {
		return c, err
	}
	return &killingConv{Conversation: c, k: k}, nil
}

type killingConv struct {
	sdk.Conversation
	k *killer
	n int
}

func (c *killingConv) Step(ctx context.Context, frame []float32) (sdk.Output, error) {
	if c.n == c.k.frame {
		if c.k.remove != "" {
			os.Remove(c.k.remove) // the restart will find no executable
		}
		syscall.Kill(c.k.client.Pid(), syscall.SIGKILL)
	}
	c.n++
	return c.Conversation.Step(ctx, frame)
}

func TestPluginCrashFailsOneConversation(t *testing.T) {
	ds := smallDataset(t)
	m := startModel(t, "silent")
	pid := m.Process.(*pluginhost.Client).Pid()
	m.Model = &killer{Model: m.Model, client: m.Process.(*pluginhost.Client), conv: "p0-implicit", frame: 5}
	m.Concurrency = 1 // with more, the crash also fails the conversations in flight beside it
	models := []*evaluate.Model{m}
	opts := options(t)
	st := newStore(t, ds, models, opts)

	sum, err := evaluate.Run(context.Background(), ds, models, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Total != (evaluate.Counts{Planned: 4, Done: 3, Failed: 1, Restarts: 1}) {
		t.Errorf("summary %+v, want 3 done, 1 failed, 1 restart", sum.Total)
	}
	if m.Process.(*pluginhost.Client).Pid() == pid || m.Process.(*pluginhost.Client).Exited() {
		t.Error("the plugin was not restarted")
	}
	items, _ := evaluate.Plan(ds, models, opts)
	for _, it := range items {
		want := store.Done
		if it.Meta.ScenarioID == "p0-implicit" {
			want = store.Failed
			got, err := st.Load(it.Meta.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got.Record.Failure, "model failed at frame 5") {
				t.Errorf("failure %q, want it to name frame 5", got.Record.Failure)
			}
		}
		if st.Status(it.Meta.ID) != want {
			t.Errorf("%s: %v, want %v", it.Meta.ScenarioID, st.Status(it.Meta.ID), want)
		}
	}

	// Resume: the failed conversation is played again (the killer only strikes once).
	m.Model = m.Model.(*killer).Model
	sum, err = evaluate.Run(context.Background(), ds, models, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Total != (evaluate.Counts{Planned: 4, Reused: 3, Done: 1}) {
		t.Errorf("resumed %+v, want 3 reused and the failed one done", sum.Total)
	}
}

// A plugin that dies and cannot be restarted stops its own model only.
func TestDeadPluginStopsOnlyItsModel(t *testing.T) {
	ds := smallDataset(t)
	bin := filepath.Join(t.TempDir(), "silent")
	data, err := os.ReadFile(filepath.Join(binDir, "silent"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	dying := startModelFrom(t, "silent", bin)
	dying.Model = &killer{Model: dying.Model, client: dying.Process.(*pluginhost.Client), conv: "p0-implicit", frame: 5, remove: bin}
	dying.Concurrency = 1
	models := []*evaluate.Model{dying, startModel(t, "always-talk")}
	opts := options(t)
	st := newStore(t, ds, models, opts)
	sum, err := evaluate.Run(context.Background(), ds, models, st, opts)
	if err == nil || !strings.Contains(err.Error(), "model silent: the plugin process died and could not be restarted") {
		t.Fatalf("err = %v, want one naming the silent model", err)
	}
	if got := *sum.Models["silent"]; got != (evaluate.Counts{Planned: 4, Done: 1, Failed: 1}) {
		t.Errorf("silent: %+v, want 1 done, 1 failed, 2 left", got)
	}
	if got := *sum.Models["always-talk"]; got != (evaluate.Counts{Planned: 4, Done: 4}) {
		t.Errorf("always-talk: %+v, want all 4 done", got)
	}
}

// canceller is an in-process silent model that cancels the run in its second
// conversation.
type canceller struct {
	cancel context.CancelFunc
	starts int
}

func (c *canceller) Start(context.Context, sdk.ConversationStart) (sdk.Conversation, error) {
	c.starts++
	return &cancelConv{c: c, n: c.starts}, nil
}

type cancelConv struct {
	c    *canceller
	n, k int
}

func (c *cancelConv) Format() sdk.Format { return speech.DefaultFormat }
func (c *cancelConv) Step(context.Context, []float32) (sdk.Output, error) {
	c.k++
	if c.n == 2 && c.k == 10 {
		c.c.cancel()
	}
	return sdk.Output{}, nil
}
func (c *cancelConv) Close() error { return nil }

func TestCancelKeepsFinishedItems(t *testing.T) {
	ds := smallDataset(t)
	ctx, cancel := context.WithCancel(context.Background())
	models := []*evaluate.Model{{Name: "inproc", Model: &canceller{cancel: cancel}, Info: sdk.Info{Name: "inproc", Version: "0"}}}
	opts := options(t)
	st := newStore(t, ds, models, opts)
	sum, err := evaluate.Run(ctx, ds, models, st, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if sum.Total.Done != 1 {
		t.Errorf("summary %+v, want the first conversation done", sum.Total)
	}
	items, _ := evaluate.Plan(ds, models, opts)
	statuses := map[store.Status]int{}
	for _, it := range items {
		statuses[st.Status(it.Meta.ID)]++
	}
	if statuses[store.Done] != 1 || statuses[store.Missing] != 3 {
		t.Errorf("statuses %v, want 1 done and 3 missing", statuses)
	}
	// The shard record lists the whole plan, so merge can name the 3 items still owed.
	recs, err := st.Shards()
	if err != nil || len(recs) != 1 || recs[0].Shard() != store.All || len(recs[0].Items) != len(items) {
		t.Errorf("shard records %+v (%v), want one record of 0/1 with the %d planned items", recs, err, len(items))
	}
}

func TestShardsPartitionThePlan(t *testing.T) {
	ds := smallDataset(t)
	models := []*evaluate.Model{
		{Name: "a", Model: &canceller{}, Info: sdk.Info{Name: "x", Version: "1"}},
		{Name: "b", Model: &canceller{}, Info: sdk.Info{Name: "x", Version: "1"}},
	}
	opts := options(t)
	all, err := evaluate.Plan(ds, models, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 8 {
		t.Fatalf("%d items, want 8", len(all))
	}
	seen := map[string]int{}
	for i := 0; i < 3; i++ {
		opts.Shard = store.Shard{Index: i, Count: 3}
		part, err := evaluate.Plan(ds, models, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range part {
			seen[it.Meta.ID]++
		}
	}
	for _, it := range all {
		if seen[it.Meta.ID] != 1 {
			t.Errorf("item %s is in %d shards", it.Meta.ID, seen[it.Meta.ID])
		}
	}
	if len(seen) != len(all) {
		t.Errorf("the shards hold %d items, the plan %d", len(seen), len(all))
	}
	// A changed clip changes the ids of the items that play it, and only those.
	before := map[string]bool{}
	for _, it := range all {
		before[it.Meta.ID] = true
	}
	sc := ds.Scenarios[3]
	audio.WriteWAV(ds.ClipPath(sc.Turns[1].Clip), audio.PCM{Samples: make([]float32, 100), Rate: 16000})
	opts.Shard = store.All
	again, _ := evaluate.Plan(ds, models, opts)
	for _, it := range again {
		if changed := !before[it.Meta.ID]; changed != (it.Meta.ScenarioID == sc.ScenarioID) {
			t.Errorf("%s %s: id changed = %v", it.Meta.Model, it.Meta.ScenarioID, changed)
		}
	}
}

func TestInstructionNeedsTheCapability(t *testing.T) {
	ds := smallDataset(t)
	m := &evaluate.Model{Name: "a", Model: &canceller{}, Instruction: "You are Aria."}
	if _, err := evaluate.Plan(ds, []*evaluate.Model{m}, options(t)); err == nil || !strings.Contains(err.Error(), "model.instruction") {
		t.Errorf("err = %v, want a refusal naming the capability", err)
	}
	m.Info.Capabilities = []string{"model.instruction"}
	if _, err := evaluate.Plan(ds, []*evaluate.Model{m}, options(t)); err != nil {
		t.Error(err)
	}
}

func TestPlanNamesAMissingClip(t *testing.T) {
	ds := smallDataset(t)
	os.Remove(ds.ClipPath(ds.Scenarios[2].Turns[1].Clip))
	_, err := evaluate.Plan(ds, []*evaluate.Model{{Name: "a", Model: &canceller{}}}, options(t))
	if err == nil || !strings.Contains(err.Error(), "scenario p1-explicit turn 1") {
		t.Errorf("err = %v, want it to name scenario p1-explicit turn 1", err)
	}
}

// gauge is an in-process silent model that records how many conversations run at once.
type gauge struct {
	mu       sync.Mutex
	now, max int
	// target: a conversation's first Step waits (at most 30 s, a bound on a hang) until
	// this many have been open at once, so that the maximum seen does not depend on how
	// the machine schedules them.
	target int
}

func (g *gauge) Start(context.Context, sdk.ConversationStart) (sdk.Conversation, error) {
	g.mu.Lock()
	g.now++
	g.max = max(g.max, g.now)
	g.mu.Unlock()
	return &gaugeConv{g: g}, nil
}

type gaugeConv struct {
	g       *gauge
	stepped bool
}

func (c *gaugeConv) Format() sdk.Format { return speech.DefaultFormat }
func (c *gaugeConv) Step(context.Context, []float32) (sdk.Output, error) {
	if !c.stepped {
		c.stepped = true
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			c.g.mu.Lock()
			reached := c.g.max >= c.g.target
			c.g.mu.Unlock()
			if reached {
				break
			}
		}
	}
	return sdk.Output{}, nil
}
func (c *gaugeConv) Close() error {
	c.g.mu.Lock()
	c.g.now--
	c.g.mu.Unlock()
	return nil
}

func TestConcurrencyLimits(t *testing.T) {
	if n := evaluate.ModelConcurrency(&evaluate.Model{Info: sdk.Info{Capabilities: []string{"model.text", "model.concurrency=3"}}}); n != 3 {
		t.Errorf("declared concurrency read as %d, want 3", n)
	}
	if n := evaluate.ModelConcurrency(&evaluate.Model{Concurrency: 2, Info: sdk.Info{Capabilities: []string{"model.concurrency=3"}}}); n != 2 {
		t.Errorf("configured concurrency read as %d, want 2", n)
	}
	if n := evaluate.ModelConcurrency(&evaluate.Model{Info: sdk.Info{Capabilities: []string{"model.concurrency=x"}}}); n != 1 {
		t.Errorf("a bad capability gives %d, want 1", n)
	}

	ds := smallDataset(t)
	cases := []struct {
		per, total, want int
	}{{1, 0, 1}, {4, 0, 4}, {4, 2, 2}}
	for _, c := range cases {
		g := &gauge{target: c.want}
		models := []*evaluate.Model{{Name: "g", Model: g, Concurrency: c.per}}
		opts := options(t)
		opts.Concurrency = c.total
		sum, err := evaluate.Run(context.Background(), ds, models, newStore(t, ds, models, opts), opts)
		if err != nil || sum.Total.Done != 4 {
			t.Fatalf("%+v %v", sum.Total, err)
		}
		if g.max != c.want {
			t.Errorf("per-model %d, total %d: %d conversations at once, want %d", c.per, c.total, g.max, c.want)
		}
	}
}
