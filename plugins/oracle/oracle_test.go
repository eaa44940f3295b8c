package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/plugins/onnx-tts/synth"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// lockerScript is the conversation the oracle's tests play: its code is the gold (492),
// and an N4_Q a human resolves.
var lockerScript = []struct{ label, voice, text string }{
	{"N2", "bm_george", "The parcel locker code is four nine two, and it expires tonight."},
	{"T", "af_bella", "Aria, what's the locker code again?"},
	{"N2", "bf_emma", "I'll go down after dinner, it's only across the road."},
	{"N4_Q", "am_michael", "Aria, is the post office open on Sundays?"},
	{"N4_R", "af_bella", "No, never on Sundays, I checked last week."},
	{"N2", "bm_george", "Fine, tomorrow morning then, before work."},
}

// realTTS is onnx-tts's synthesiser on the fetched voices, or a skip.
func realTTS(t *testing.T) *synth.Plugin {
	t.Helper()
	tts := synth.New()
	if err := tts.Configure(context.Background(), map[string]any{}); err != nil {
		t.Skipf("onnx-tts cannot start here (%v): make deps", err)
	}
	return tts
}

// A conversation laid out as the scheduler lays it: the oracle answers T with the gold
// answer delay_ms after T's clip ends and is silent before; it answers N4_Q the same way
// and stops within a few hops of the human's resolution; it never speaks elsewhere. The
// clips and the answers are real Kokoro speech.
func TestOracleAnswersAtTheEndOfTAndYieldsAfterN4(t *testing.T) {
	ctx := context.Background()
	tts := realTTS(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "clips"), 0o755)
	lines := lockerScript
	sc := dataset.Scenario{PairID: "p", Condition: "explicit", ScenarioID: "p-explicit", GoldAnswer: "492", AnswerType: sdk.AnswerCode}
	var room []float32 // the input, at 24 kHz
	const rate = 24000
	at := func() float64 { return float64(len(room)) / rate }
	silence := func(s float64) { room = append(room, make([]float32, int(s*rate))...) }
	var tEnd, qEnd, rStart float64
	silence(1.5)
	for i, l := range lines {
		a, err := tts.Synthesize(ctx, l.text, l.voice)
		if err != nil {
			t.Fatal(err)
		}
		clip := filepath.Join("clips", l.label+string(rune('a'+i))+".wav")
		if err := audio.WriteWAV(filepath.Join(dir, clip), audio.PCM{Samples: a.Samples, Rate: a.Rate}); err != nil {
			t.Fatal(err)
		}
		sc.Turns = append(sc.Turns, dataset.Turn{Speaker: "A", Text: l.text, Label: l.label, Clip: clip})
		if l.label == "N4_R" {
			// The resolution is heard from its first sound, after the clip's own lead.
			lead := len(audio.Resample(audio.PCM{Samples: a.Samples, Rate: a.Rate}, rate).Samples) - len(trimLead(audio.Resample(audio.PCM{Samples: a.Samples, Rate: a.Rate}, rate).Samples, rate))
			rStart = at() + float64(lead)/rate
		}
		room = append(room, audio.Resample(audio.PCM{Samples: a.Samples, Rate: a.Rate}, rate).Samples...)
		switch l.label {
		case "T":
			tEnd = at()
			silence(6) // the wait after T; the oracle's answer is over long before it ends
		case "N4_Q":
			qEnd = at()
			silence(3) // n4_gap
		default:
			silence(0.7)
		}
	}
	raw, _ := json.Marshal(sc)
	os.WriteFile(filepath.Join(dir, dataset.ScenariosFile), append(raw, '\n'), 0o644)

	o := &oracle{tts: synth.New()}
	if err := o.Configure(ctx, map[string]any{"dataset": dir, "voice": "af_heart"}); err != nil {
		t.Fatal(err)
	}
	c, err := o.Start(ctx, sdk.ConversationStart{ID: "p-explicit"})
	if err != nil {
		t.Fatal(err)
	}
	f := c.Format()
	var out []float32
	for k := 0; (k+1)*f.FrameSize <= len(room); k++ {
		o, err := c.Step(ctx, room[k*f.FrameSize:(k+1)*f.FrameSize])
		if err != nil {
			t.Fatal(err)
		}
		n := int(int64(k+1)*int64(f.FrameSize)*int64(f.OutputRate)/int64(f.InputRate)) - len(out)
		if o.Samples != nil && len(o.Samples) != n {
			t.Fatalf("frame %d: %d output samples, want %d", k, len(o.Samples), n)
		}
		if o.Samples == nil {
			o.Samples = make([]float32, n)
		}
		out = append(out, o.Samples...)
	}
	// The episodes of the output: runs of samples above 0.01 merged across 600 ms (the
	// pauses between the sentences of an answer).
	var eps [][2]float64
	last := -1.0
	for i, x := range out {
		if math.Abs(float64(x)) < 0.01 {
			continue
		}
		s := float64(i) / float64(f.OutputRate)
		if len(eps) > 0 && s-last < 0.6 {
			eps[len(eps)-1][1] = s
		} else {
			eps = append(eps, [2]float64{s, s})
		}
		last = s
	}
	if len(eps) != 2 {
		t.Fatalf("output episodes %v, want one answer after T (ends %.3f s) and one after N4_Q (ends %.3f s, resolved from %.3f s)", eps, tEnd, qEnd, rStart)
	}
	frame := float64(f.FrameSize) / float64(f.InputRate)
	for _, c := range []struct {
		what        string
		got, want   float64
		early, late float64
	}{
		{"answer to T starts", eps[0][0], tEnd + 0.5, 0.05, frame + 0.1},
		{"answer to N4_Q starts", eps[1][0], qEnd + 0.5, 0.05, frame + 0.1},
		{"answer to N4_Q stops", eps[1][1], rStart, 0.5, frame + 0.1},
	} {
		if c.got < c.want-c.early || c.got > c.want+c.late {
			t.Errorf("%s at %.3f s, want %.3f s (-%.2f, +%.2f)", c.what, c.got, c.want, c.early, c.late)
		}
	}
	if eps[0][1]-eps[0][0] < 0.5 {
		t.Errorf("the answer to T lasts %.2f s: not the spoken code", eps[0][1]-eps[0][0])
	}
}

// A scenario the config's dataset does not hold, or a dataset without clips, is refused
// with a message that says what to do.
func TestOracleRefusesWhatItCannotAnswer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sc := dataset.Scenario{ScenarioID: "p-explicit", GoldAnswer: "7", Turns: []dataset.Turn{{Label: "N2", Text: "hi"}, {Label: "T", Text: "Aria, what?"}}}
	raw, _ := json.Marshal(sc)
	os.WriteFile(filepath.Join(dir, dataset.ScenariosFile), append(raw, '\n'), 0o644)
	o := &oracle{tts: realTTS(t)}
	if err := o.Configure(ctx, map[string]any{}); err == nil {
		t.Error("no dataset configured: accepted")
	}
	if err := o.Configure(ctx, map[string]any{"dataset": t.TempDir()}); err == nil {
		t.Error("a folder without scenarios: accepted")
	}
	if err := o.Configure(ctx, map[string]any{"dataset": dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Start(ctx, sdk.ConversationStart{ID: "other"}); err == nil {
		t.Error("a scenario not in the dataset: started")
	}
	if _, err := o.Start(ctx, sdk.ConversationStart{ID: "p-explicit"}); err == nil {
		t.Error("a scenario without clips: started")
	}
}
