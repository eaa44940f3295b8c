package main

import (
	"context"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/session"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// These tests run the cascade as a real plugin process over real gRPC, with the real
// Silero, PocketSphinx and flite, on conversations spoken by flite.

// pluginBin builds the cascade plugin once per test binary.
func pluginBin(t testing.TB) string {
	t.Helper()
	return plugintest.BuildGo(t, ".")
}

func TestMain(m *testing.M) {
	code := m.Run()
	pluginhost.KillAll()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

var (
	detOnce sync.Once
	det     *vad.Detector
	detErr  error
)

func detector(t testing.TB) *vad.Detector {
	t.Helper()
	detOnce.Do(func() { det, detErr = vad.Open(vad.Options{}) })
	if detErr != nil {
		t.Fatalf("%v\n(these tests run the real Silero model: run `make deps` first)", detErr)
	}
	return det
}

func startCascade(t testing.TB, config map[string]any, env map[string]string) sdk.Model {
	t.Helper()
	ctx := context.Background()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "cascade", Source: pluginBin(t), Env: env}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	if err := c.Configure(ctx, config); err != nil {
		t.Fatal(err)
	}
	m, err := c.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func testLogger(t testing.TB) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug, Output: tWriter{t}})
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// The voices of bench.hcl's shipped dataset.
var voices = map[string]string{"A": "kal16", "B": "awb", "C": "rms", "D": "slt"}

type line struct{ label, speaker, text string }

func spokenConversation(t testing.TB, id, preamble string, lines []line) session.Conversation {
	t.Helper()
	ctx := context.Background()
	conv := session.Conversation{ID: id}
	p, err := speak(ctx, "flite", "slt", preamble, rate)
	if err != nil {
		t.Fatal(err)
	}
	conv.Preamble = p
	for i, l := range lines {
		a, err := speak(ctx, "flite", voices[l.speaker], l.text, rate)
		if err != nil {
			t.Fatal(err)
		}
		addressee := ""
		if l.label == protocol.LabelN2 {
			addressee = "human"
		}
		conv.Turns = append(conv.Turns, session.Turn{Index: i, Label: l.label, Speaker: l.speaker, Text: l.text, Addressee: addressee, Audio: a})
	}
	return conv
}

func play(t testing.TB, m sdk.Model, conv session.Conversation) (*record.Record, []score.Event) {
	t.Helper()
	p := protocol.Defaults()
	rec, err := session.Run(context.Background(), m, conv, session.Options{Params: p, VAD: protocol.DefaultVAD(), Detector: detector(t)})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Failed() {
		t.Fatalf("%s failed: %s", conv.ID, rec.Failure)
	}
	return rec, score.Events(rec.Timeline, rec.Episodes, p)
}

// The first sentence of the default preamble: it names Aria without asking anything.
const shortPreamble = "Hello, Aria. You are a voice assistant in a room with several people."

// One conversation holds the three behaviours: an N4 question to Aria answered in the
// gap and flushed when the resolution starts, an N1 mention left alone, and the explicit
// T answered from the facts said before it.
var explicitLines = []line{
	{protocol.LabelN3, "A", "Okay, the chicken goes in at six twenty. Done."},
	{protocol.LabelN4Q, "A", "Aria, how many tablespoons are in a quarter cup?"},
	{protocol.LabelN4R, "C", "It's four, I just checked the measuring spoons."},
	{protocol.LabelN1, "A", "Aria saved us last week when I forgot the rice."},
	{protocol.LabelT, "B", "Aria, so when does the chicken come out?"},
	{protocol.LabelN3, "B", "These potatoes are never going to peel themselves."},
}

// implicit is explicitLines with the T turn carrying a cue instead of the name.
func implicit(lines []line) []line {
	out := append([]line(nil), lines...)
	for i := range out {
		if out[i].label == protocol.LabelT {
			out[i].text = "Since you're the one keeping the kitchen timers, when does the chicken come out?"
		}
	}
	return out
}

func eventsByLabel(events []score.Event, label string) []score.Event {
	var out []score.Event
	for _, ev := range events {
		if ev.Label == label {
			out = append(out, ev)
		}
	}
	return out
}

func hasText(rec *record.Record, text string) bool {
	for _, p := range rec.Text {
		if strings.Contains(p.Text, text) {
			return true
		}
	}
	return false
}

// The name policy through the real scheduler and scorer: the explicit T is answered
// (fresh onset); the N4 question to Aria is answered in the
// gap and the answer is flushed when the resolution starts (eligible, yielded); the N1
// mention, the N3 self-talk and the preamble naming Aria get no answer. (The implicit
// version of a T is left alone: TestShippedPairThroughScheduler.)
//
// The compute is charged by the default cost model, so the timing, and the test, do not
// depend on the machine's load.
func TestNamePolicyThroughScheduler(t *testing.T) {
	m := startCascade(t, map[string]any{}, nil)
	rec, events := play(t, m, spokenConversation(t, "explicit", shortPreamble, explicitLines))
	logRecord(t, rec, events)
	if tv := eventsByLabel(events, protocol.LabelT)[0].T; !tv.FreshOnset {
		t.Errorf("explicit T: no fresh onset: %+v", tv)
	}
	n4 := eventsByLabel(events, protocol.LabelN4Q)[0].N4
	if !n4.Eligible || n4.Yield != score.YieldPass {
		t.Errorf("N4: want an eligible event (answering at the resolution) that yields: %+v", n4)
	}
	if !hasText(rec, "[barge-in]") {
		t.Errorf("no flush (barge-in) in the text channel: %v", rec.Text)
	}
	for _, l := range []string{protocol.LabelN1, protocol.LabelN3} {
		for _, ev := range eventsByLabel(events, l) {
			if len(ev.Silence.Speech) > 0 {
				t.Errorf("%s turn %d: spoke in the silence window: %+v", l, ev.Turn, ev.Silence)
			}
		}
	}
	if len(rec.Episodes) > 0 && rec.Episodes[0].Start < rec.Timeline.Turns[0].Start {
		t.Errorf("answered the preamble: episodes %v", rec.Episodes)
	}
}

func logRecord(t *testing.T, rec *record.Record, events []score.Event) {
	t.Helper()
	t.Logf("%s: episodes %v, text %v", rec.ConversationID, rec.Episodes, rec.Text)
	for _, ev := range events {
		t.Logf("  %s %.2f-%.2f t=%+v n4=%+v", ev.Label, ev.Start, ev.End, ev.T, ev.N4)
	}
}

// The cascade's record is a function of the conversation: played again in the same
// process, after another conversation and with its utterances' transcripts now cached,
// and in a fresh process, it gives the same audible samples, text and episodes, bit for
// bit. (With the default cost model nothing it does reads the clock, so the machine's
// speed and load cannot move an answer either.)
func TestSameConversationSameRecord(t *testing.T) {
	conv := spokenConversation(t, "explicit", shortPreamble, explicitLines)
	other := spokenConversation(t, "implicit", shortPreamble, implicit(explicitLines))
	m := startCascade(t, map[string]any{}, nil)
	first, _ := play(t, m, conv)
	play(t, m, other)
	again, _ := play(t, m, conv)
	fresh, _ := play(t, startCascade(t, map[string]any{}, nil), conv)
	for name, rec := range map[string]*record.Record{"again": again, "fresh process": fresh} {
		if !slices.Equal(float32Bits(rec.Audible.Samples), float32Bits(first.Audible.Samples)) ||
			!reflect.DeepEqual(rec.Text, first.Text) || !reflect.DeepEqual(rec.Episodes, first.Episodes) {
			t.Errorf("%s: the record differs from the first play:\n text %v\n vs  %v\n episodes %v\n vs %v", name, rec.Text, first.Text, rec.Episodes, first.Episodes)
		}
	}
	if len(first.Episodes) == 0 {
		t.Error("the cascade never spoke: nothing was compared")
	}
}

func float32Bits(s []float32) []uint32 {
	out := make([]uint32, len(s))
	for i, v := range s {
		out[i] = math.Float32bits(v)
	}
	return out
}

// startedTogether holds every Start until n conversations are open, so that they are
// played side by side in the plugin process whatever the scheduler does.
type startedTogether struct {
	sdk.Model
	open *sync.WaitGroup
}

func (m startedTogether) Start(ctx context.Context, req sdk.ConversationStart) (sdk.Conversation, error) {
	c, err := m.Model.Start(ctx, req)
	m.open.Done()
	m.open.Wait()
	return c, err
}

// Conversations played side by side in one process (sharing its detector, decoder pool
// and transcript cache) give, bit for bit, the records they give played one at a time in
// another process. The plugin declares how many it holds: one per core, at most 8.
func TestConversationsSideBySide(t *testing.T) {
	ctx := context.Background()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "cascade", Source: pluginBin(t)}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	if err := c.Configure(ctx, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	info, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := sdk.Concurrency(info.Capabilities); n != maxConversations || n < 1 || n > 8 {
		t.Errorf("declares %d conversations at once (%v), want %d", n, info.Capabilities, maxConversations)
	}
	m, err := c.Model()
	if err != nil {
		t.Fatal(err)
	}

	convs := []session.Conversation{
		spokenConversation(t, "explicit", shortPreamble, explicitLines),
		spokenConversation(t, "implicit", shortPreamble, implicit(explicitLines)),
	}
	convs = append(convs, convs[0]) // the same conversation twice at once, too
	alone := startCascade(t, map[string]any{}, nil)
	var want []*record.Record
	for _, conv := range convs {
		rec, _ := play(t, alone, conv)
		want = append(want, rec)
	}

	open := &sync.WaitGroup{}
	open.Add(len(convs))
	together := startedTogether{Model: m, open: open}
	got := make([]*record.Record, len(convs))
	errs := make([]error, len(convs))
	var wg sync.WaitGroup
	for i, conv := range convs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = session.Run(ctx, together, conv, session.Options{Params: protocol.Defaults(), VAD: protocol.DefaultVAD(), Detector: detector(t)})
		}()
	}
	wg.Wait()
	spoke := false
	for i := range convs {
		if errs[i] != nil {
			t.Fatalf("%s side by side: %v", convs[i].ID, errs[i])
		}
		g, w := got[i], want[i]
		if g.Failed() {
			t.Fatalf("%s side by side failed: %s", convs[i].ID, g.Failure)
		}
		if !slices.Equal(float32Bits(g.Audible.Samples), float32Bits(w.Audible.Samples)) ||
			!reflect.DeepEqual(g.Text, w.Text) || !reflect.DeepEqual(g.Episodes, w.Episodes) || !reflect.DeepEqual(g.Timeline, w.Timeline) {
			t.Errorf("%s: played side by side it differs from one at a time:\n text %v\n vs   %v\n episodes %v\n vs %v", convs[i].ID, g.Text, w.Text, g.Episodes, w.Episodes)
		}
		spoke = spoke || len(w.Episodes) > 0
	}
	if !spoke {
		t.Error("the cascade never spoke: nothing was compared")
	}
}
