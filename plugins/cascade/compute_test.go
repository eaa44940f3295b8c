package main

import (
	"math"
	"strings"
	"testing"
)

// The cost model charges what was done, never the clock: the same work costs the same,
// and each figure adds what the README says.
func TestCostModel(t *testing.T) {
	m := defaultCostModel()
	b := m.newBill()
	b.transcribed(cachedTranscript{text: "x", modelS: m.asr * 2.5}, false)
	b.endpointRequest()
	b.synthesised(3)
	want := defaultAnswerCost + defaultASRCost*2.5 + defaultEndpointCost + defaultTTSCost*3
	if got := b.total(); math.Abs(got-want) > 1e-12 {
		t.Errorf("total %g, want %g", got, want)
	}
	// A cached transcript costs what it cost the first time.
	c := m.newBill()
	c.transcribed(cachedTranscript{text: "x", modelS: m.asr * 2.5}, true)
	c.endpointRequest()
	c.synthesised(3)
	if c.total() != b.total() {
		t.Errorf("cached %g, uncached %g", c.total(), b.total())
	}
	m.fixed = 1.5
	if got := m.newBill().total(); got != 1.5 {
		t.Errorf("fixed: %g", got)
	}
	w := defaultCostModel()
	w.mode, w.charge = computeWall, 2
	wb := w.newBill()
	wb.transcribed(cachedTranscript{modelS: 9, wallS: 0.25}, true)
	wb.synthesised(100) // modelled costs are not charged in wall mode
	if got := wb.total(); got < 0.5 || got > 0.5+60 {
		t.Errorf("wall: %g, want 2 x (0.25 cached + the little wall time since)", got)
	}
	for _, c := range []struct {
		m    costModel
		want string
	}{
		{defaultCostModel(), "model: 0.1 s per answer + 0.05 s per s spotted + 0.35 s per s transcribed + 0.05 s per s synthesised + 1 s per endpoint request"},
		{costModel{mode: computeModel, fixed: 1.2}, "model: fixed 1.2 s per answer"},
		{costModel{mode: computeWall, charge: 1}, "wall: 1 x measured wall time"},
	} {
		if got := c.m.identity(); got != c.want {
			t.Errorf("identity %q, want %q", got, c.want)
		}
	}
}

func TestComputeSettings(t *testing.T) {
	s, err := parseSettings(map[string]any{"asr_cost": 0.6, "tts_cost": 0.0, "answer_cost": 0.2, "endpoint_cost": 2.0})
	if err != nil || s.cost.mode != computeModel || s.cost.asr != 0.6 || s.cost.tts != 0 || s.cost.answer != 0.2 || s.cost.endpoint != 2 {
		t.Errorf("model settings %+v, %v", s.cost, err)
	}
	s, err = parseSettings(map[string]any{"compute": "wall", "compute_charge": 0.5})
	if err != nil || s.cost.mode != computeWall || s.cost.charge != 0.5 || !strings.HasPrefix(s.cost.identity(), "wall:") {
		t.Errorf("wall settings %+v, %v", s.cost, err)
	}
	// Defaults of the other mode passed explicitly (as a host does) are fine.
	if _, err := parseSettings(map[string]any{"compute": "wall", "asr_cost": defaultASRCost, "compute_fixed": 0.0}); err != nil {
		t.Errorf("explicit defaults: %v", err)
	}
	if _, err := parseSettings(map[string]any{"compute_charge": 2.0}); err == nil || !strings.Contains(err.Error(), `compute = "wall"`) {
		t.Errorf("compute_charge without wall mode: %v", err)
	}
	if _, err := parseSettings(map[string]any{"compute": "wall", "spot_cost": 0.2}); err == nil || !strings.Contains(err.Error(), "spot_cost") {
		t.Errorf("spot_cost in wall mode: %v", err)
	}
}

func TestTranscriptCache(t *testing.T) {
	c := newTranscripts()
	a, b := []float32{0, 0.5, -1}, []float32{0, 0.5, -0.999}
	if audioKey(hearSpotted, a) == audioKey(hearSpotted, b) || audioKey(hearSpotted, a) != audioKey(hearSpotted, []float32{0, 0.5, -1}) {
		t.Fatal("audioKey is not a key of the exact samples")
	}
	if audioKey(hearSpotted, a) == audioKey(hearWakeFirst, a) || audioKey(hearSpotted, a) == audioKey(hearWhole, a) || audioKey(hearWakeFirst, a) == audioKey(hearWhole, a) {
		t.Fatal("audioKey does not tell the ways of hearing apart: an utterance heard whole would reuse its spotted transcript")
	}
	c.put(audioKey(hearSpotted, a), cachedTranscript{text: "first", modelS: 1})
	c.put(audioKey(hearSpotted, a), cachedTranscript{text: "second", modelS: 2})
	if got, ok := c.get(audioKey(hearSpotted, a)); !ok || got.text != "first" {
		t.Errorf("get = %+v, %v", got, ok)
	}
	if _, ok := c.get(audioKey(hearSpotted, b)); ok {
		t.Error("hit for other audio")
	}
	for i := range maxCachedTranscripts + 10 {
		c.put(audioKey(hearSpotted, []float32{float32(i)}), cachedTranscript{})
	}
	if len(c.m) != maxCachedTranscripts || len(c.order) != maxCachedTranscripts {
		t.Errorf("cache holds %d (%d in order), bound %d", len(c.m), len(c.order), maxCachedTranscripts)
	}
}
