package main

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/session"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/plugins/onnx-tts/synth"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Played by the real scheduler (core/session) and heard by Silero, the oracle answers T
// and N4_Q at the same moments in a clean set and in a room, where a bed of other
// people's speech and noise, 10 dB under the turns, plays under everything: it takes the
// set's background loop (dataset.json's room) back out of what it hears. Before it did,
// it heard no turn's end under the bed, and the bed stopped its answers as a human would.
func TestOracleAnswersTheSameInARoom(t *testing.T) {
	ctx := context.Background()
	tts := realTTS(t)
	det, err := vad.Open(vad.Options{})
	if err != nil {
		t.Skipf("no VAD here (%v): run make deps", err)
	}
	defer det.Close()

	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, dataset.ClipsDir), 0o755)
	say := func(text, voice string) audio.PCM {
		a, err := tts.Synthesize(ctx, text, voice)
		if err != nil {
			t.Fatal(err)
		}
		return audio.PCM{Samples: a.Samples, Rate: a.Rate}
	}
	lines := lockerScript
	sc := dataset.Scenario{PairID: "room-pair", Condition: "explicit", ScenarioID: "room-pair-explicit", GoldAnswer: "492", AnswerType: sdk.AnswerCode}
	var turns []session.Turn
	speechLUFS := 0.0
	for i, l := range lines {
		pcm := say(l.text, l.voice)
		clip := filepath.Join(dataset.ClipsDir, l.label+string(rune('a'+i))+".wav")
		if err := audio.WriteWAV(filepath.Join(dir, clip), pcm); err != nil {
			t.Fatal(err)
		}
		sc.Turns = append(sc.Turns, dataset.Turn{Speaker: string(rune('A' + i%3)), Text: l.text, Label: l.label, Clip: clip})
		turns = append(turns, session.Turn{Index: i, Label: l.label, Speaker: sc.Turns[i].Speaker, Text: l.text, Audio: pcm, GapAfterS: 0.4})
		if i == 0 {
			speechLUFS = audio.LoudnessLUFS(pcm)
		}
	}
	raw, _ := json.Marshal(sc)
	os.WriteFile(filepath.Join(dir, dataset.ScenariosFile), append(raw, '\n'), 0o644)

	// The bed: two other sentences at once, looped, with noise, 10 dB under the turns.
	a, b := say("We should book the table for eight before the weekend fills up.", "bm_lewis"), say("My sister keeps the spare keys in the blue tin by the door.", "af_nicole")
	bed := make([]float32, 7*a.Rate)
	rng := rand.New(rand.NewPCG(7, 29))
	for i := range bed {
		bed[i] = a.Samples[i%len(a.Samples)] + b.Samples[(i+a.Rate/3)%len(b.Samples)] + float32(rng.NormFloat64()*0.01)
	}
	bedPCM := audio.PCM{Samples: bed, Rate: a.Rate}
	bedLUFS := audio.LoudnessLUFS(bedPCM)
	gain := float32(math.Pow(10, (speechLUFS-10-bedLUFS)/20))
	for i := range bed {
		bed[i] *= gain
	}
	if err := audio.WriteWAV(filepath.Join(dir, dataset.ClipsDir, "bed.wav"), bedPCM); err != nil {
		t.Fatal(err)
	}
	bedPCM, err = audio.ReadWAV(filepath.Join(dir, dataset.ClipsDir, "bed.wav"))
	if err != nil {
		t.Fatal(err)
	}

	play := func(room bool) (turnsAt []float64, eps [][2]float64) {
		t.Helper()
		conv := session.Conversation{ID: sc.ScenarioID, PairID: sc.PairID, Preamble: say("Aria, you are the assistant in this room.", "bf_alice"), Turns: turns}
		m := dataset.Manifest{Name: "room-test"}
		if room {
			m.Room = &dataset.Room{Preset: "test", Background: &dataset.Background{Kind: "babble", Clip: filepath.Join(dataset.ClipsDir, "bed.wav")}}
			// As core/evaluate plays a room's conversation.
			conv.Background, conv.BackgroundAt = bedPCM, dataset.BedOffset(sc.PairID, len(bedPCM.Samples))
		}
		mraw, _ := json.Marshal(m)
		os.WriteFile(filepath.Join(dir, dataset.ManifestFile), mraw, 0o644)
		o := &oracle{tts: synth.New()}
		if err := o.Configure(ctx, map[string]any{"dataset": dir}); err != nil {
			t.Fatal(err)
		}
		rec, err := session.Run(ctx, o, conv, session.Options{Params: protocol.Defaults(), VAD: protocol.DefaultVAD(), Detector: det})
		if err != nil {
			t.Fatal(err)
		}
		if rec.Failure != "" {
			t.Fatalf("room %v: the conversation failed: %s", room, rec.Failure)
		}
		for _, tu := range rec.Timeline.Turns {
			turnsAt = append(turnsAt, tu.Start, tu.End)
		}
		for _, e := range rec.Episodes {
			eps = append(eps, [2]float64{e.Start, e.End})
		}
		return turnsAt, eps
	}
	for _, room := range []bool{false, true} {
		at, eps := play(room)
		tEnd, qEnd, rStart := at[2*1+1], at[2*3+1], at[2*4]
		if len(eps) != 2 {
			t.Fatalf("room %v: the model's episodes %v, want one after T (ends %.2f s) and one after N4_Q (ends %.2f s, resolved from %.2f s)", room, eps, tEnd, qEnd, rStart)
		}
		for _, c := range []struct {
			what        string
			got, want   float64
			early, late float64
		}{
			{"answer to T starts", eps[0][0], tEnd + 0.5, 0.1, 0.3},
			{"answer to N4_Q starts", eps[1][0], qEnd + 0.5, 0.1, 0.3},
			{"answer to N4_Q stops", eps[1][1], rStart, 0.3, 0.6},
		} {
			if c.got < c.want-c.early || c.got > c.want+c.late {
				t.Errorf("room %v: %s at %.2f s, want %.2f s (-%.1f, +%.1f)", room, c.what, c.got, c.want, c.early, c.late)
			}
		}
		if d := eps[0][1] - eps[0][0]; d < 0.8 {
			t.Errorf("room %v: the answer to T lasts %.2f s: not the spoken code", room, d)
		}
	}
}
