package main

import (
	"context"
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk"
)

// The spotter decides what is transcribed, in process with the real PocketSphinx: an
// utterance without the name (flite speech) is not transcribed (empty transcript,
// charged the spotting only) and one naming Aria is, charged both; each result is cached
// and a hit charges the same. With spot = "" every utterance is transcribed.
func TestSpotterGatesTranscription(t *testing.T) {
	ctx := context.Background()
	plain, err := speak(ctx, "flite", "kal16", "Okay, the chicken goes in at six twenty. Done.", rate)
	if err != nil {
		t.Skip(err)
	}
	named, err := speak(ctx, "flite", "awb", "Aria, so when does the chicken come out?", rate)
	if err != nil {
		t.Fatal(err)
	}
	listen := func(config map[string]any) (*conversation, func()) {
		c := &cascade{}
		if err := c.Configure(ctx, config); err != nil {
			t.Fatalf("Configure %v: %v", config, err)
		}
		conv, err := c.Start(ctx, sdk.ConversationStart{ID: "spot"})
		if err != nil {
			t.Fatal(err)
		}
		return conv.(*conversation), func() { conv.Close(); c.closeLocked() }
	}
	m := defaultCostModel()
	conv, done := listen(map[string]any{})
	defer done()
	for _, c := range []struct {
		name    string
		samples []float32
		heard   bool
	}{{"plain", plain.Samples, false}, {"named", named.Samples, true}} {
		seconds := float64(len(c.samples)) / rate
		want := m.spot * seconds
		if c.heard {
			want += m.asr * seconds
		}
		for _, round := range []string{"first", "cached"} {
			b := m.newBill()
			got, err := conv.transcribe(c.samples, hearSpotted, b)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s (%s): %q, charged %.3f s", c.name, round, got.text, b.modelS)
			if (got.text != "") != c.heard || b.modelS != want {
				t.Errorf("%s (%s): transcript %q charged %g s; want transcribed %v, charged %g s", c.name, round, got.text, b.modelS, c.heard, want)
			}
		}
	}
	if got, _ := conv.transcribe(named.Samples, hearSpotted, m.newBill()); !addressedByName(got.text, defaultNames) {
		t.Errorf("the named request %q is not addressed to Aria", got.text)
	}
	all, doneAll := listen(map[string]any{"spot": ""})
	defer doneAll()
	if got, err := all.transcribe(plain.Samples, hearSpotted, m.newBill()); err != nil || got.text == "" {
		t.Errorf("spot \"\": the plain utterance gave %q, %v; want its transcript", got.text, err)
	}
}
