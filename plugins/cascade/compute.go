package main

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"time"
)

// How the compute an answer takes is charged to virtual time.
const (
	// computeModel (the default) charges a modelled cost, a function of what was done
	// (seconds transcribed, seconds synthesised, endpoint requests), never of the wall
	// clock: the same conversation gives the same answer times on any machine under any
	// load.
	computeModel = "model"
	// computeWall charges the measured wall time, times compute_charge: as slow as this
	// machine is now. Results depend on the machine and its load; no test uses it.
	computeWall = "wall"
)

// The default cost model, measured on one core of the 2-core development machine
// (BenchmarkComputeCost reports the CPU seconds behind each figure):
//   - spotting the name (PocketSphinx's keyphrase search, every other frame): 0.018 to
//     0.03 CPU s per second of speech; charged 0.05;
//   - PocketSphinx's two-pass search, bounded (asr.go): 0.24 CPU s per second of flite
//     speech against 0.33 for the library's defaults, whose wall time on a busy core was
//     up to 0.64 (plugins/pocketsphinx/README.md); charged 0.35, so that an answered
//     utterance, spotted and transcribed, is charged 0.4 s per s as before spotting was
//     added (the answers start when they did);
//   - flite: about 0.02 CPU s per second of speech plus the process start; charged 0.05;
//   - deciding (the name policy's text rules, the heuristic answer) and starting flite:
//     milliseconds; charged 0.1 s per answer;
//   - an endpoint request: a local 7-8B model answers a short prompt in about a second;
//     charged 1 s per request (policy decision or answer).
const (
	defaultAnswerCost   = 0.1
	defaultSpotCost     = 0.05
	defaultASRCost      = 0.35
	defaultTTSCost      = 0.05
	defaultEndpointCost = 1.0
)

// costModel is the compute setting of one cascade.
type costModel struct {
	mode     string
	answer   float64 // virtual s per answer
	spot     float64 // virtual s per second of utterance spotted
	asr      float64 // virtual s per second of utterance transcribed
	tts      float64 // virtual s per second of answer synthesised
	endpoint float64 // virtual s per endpoint request
	fixed    float64 // > 0: every answer costs exactly this instead (mode model)
	charge   float64 // virtual s per measured wall second (mode wall)
}

func defaultCostModel() costModel {
	return costModel{mode: computeModel, answer: defaultAnswerCost, spot: defaultSpotCost, asr: defaultASRCost, tts: defaultTTSCost,
		endpoint: defaultEndpointCost, charge: 1}
}

// identity describes the cost model in the plugin's identity: a change of any figure is
// a change of behaviour.
func (m costModel) identity() string {
	switch {
	case m.mode == computeWall:
		return fmt.Sprintf("wall: %g x measured wall time", m.charge)
	case m.fixed > 0:
		return fmt.Sprintf("model: fixed %g s per answer", m.fixed)
	}
	return fmt.Sprintf("model: %g s per answer + %g s per s spotted + %g s per s transcribed + %g s per s synthesised + %g s per endpoint request",
		m.answer, m.spot, m.asr, m.tts, m.endpoint)
}

// bill adds up the compute of one answer. In mode model it never reads the clock; in
// mode wall, the spans are measured.
type bill struct {
	m       costModel
	modelS  float64 // modelled seconds so far
	wallS   float64 // measured seconds of cached work (mode wall)
	started time.Time
}

func (m costModel) newBill() *bill {
	b := &bill{m: m}
	if m.mode == computeWall {
		b.started = time.Now()
	}
	return b
}

// transcribed charges one transcription: its modelled cost, or in mode wall the wall
// time it took when it was done (cached is true when it came from the cache and took
// no time now).
func (b *bill) transcribed(t cachedTranscript, cached bool) {
	b.modelS += t.modelS
	if cached {
		b.wallS += t.wallS
	}
}

func (b *bill) endpointRequest()          { b.modelS += b.m.endpoint }
func (b *bill) synthesised(audio float64) { b.modelS += b.m.tts * audio }

// total is the virtual delay before the answer may start.
func (b *bill) total() float64 {
	switch {
	case b.m.mode == computeWall:
		return b.m.charge * (b.wallS + time.Since(b.started).Seconds())
	case b.m.fixed > 0:
		return b.m.fixed
	}
	return b.m.answer + b.modelS
}

// cachedTranscript is a transcript with what producing it cost.
type cachedTranscript struct {
	text   string
	opens  bool    // the spotter heard the name open the utterance (wakeReach)
	modelS float64 // modelled seconds
	wallS  float64 // measured wall seconds (mode wall only)
}

// transcripts caches transcripts by the exact audio of the utterance and how it was
// heard (spotted, the wake spotter first, or whole): the 31 s preamble
// is the same utterance in every conversation, and was 47% of the cascade's ASR time.
// PocketSphinx's transcript is a function of the audio (plugins/pocketsphinx/sphinx), so
// a hit gives exactly what transcribing again would; its cost is charged again too, so
// the cache changes the host's CPU time and nothing else.
type transcripts struct {
	mu    sync.Mutex
	m     map[[32]byte]cachedTranscript
	order [][32]byte // oldest first
}

// maxCachedTranscripts bounds the cache (a key and a short string each).
const maxCachedTranscripts = 4096

func newTranscripts() *transcripts { return &transcripts{m: map[[32]byte]cachedTranscript{}} }

// audioKey is the SHA-256 of how the samples are heard and their IEEE 754 bits.
func audioKey(how hearing, samples []float32) [32]byte {
	h := sha256.New()
	h.Write([]byte{byte(how)})
	var buf [4096]byte
	for len(samples) > 0 {
		n := min(len(samples), len(buf)/4)
		for i, s := range samples[:n] {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(s))
		}
		h.Write(buf[:4*n])
		samples = samples[n:]
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func (c *transcripts) get(k [32]byte) (cachedTranscript, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[k]
	return t, ok
}

func (c *transcripts) put(k [32]byte, t cachedTranscript) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok {
		return
	}
	if len(c.order) >= maxCachedTranscripts {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[k] = t
	c.order = append(c.order, k)
}

// checkCompute refuses a setting of the other mode that differs from its default, which
// would have no effect (defaults may be passed explicitly: hosts fill them in).
func checkCompute(s costModel, config map[string]any) error {
	d := defaultCostModel()
	set := func(k string, v, def float64) bool {
		_, ok := config[k]
		return ok && v != def
	}
	switch s.mode {
	case computeModel:
		if set("compute_charge", s.charge, d.charge) {
			return fmt.Errorf("compute_charge applies to compute = %q (the measured wall time); with compute = %q set answer_cost, spot_cost, asr_cost, tts_cost, endpoint_cost or compute_fixed", computeWall, computeModel)
		}
	case computeWall:
		for k, v := range map[string][2]float64{"answer_cost": {s.answer, d.answer}, "spot_cost": {s.spot, d.spot}, "asr_cost": {s.asr, d.asr},
			"tts_cost": {s.tts, d.tts}, "endpoint_cost": {s.endpoint, d.endpoint}, "compute_fixed": {s.fixed, d.fixed}} {
			if set(k, v[0], v[1]) {
				return fmt.Errorf("%s applies to compute = %q (the cost model); with compute = %q the measured wall time times compute_charge is charged", k, computeModel, computeWall)
			}
		}
	default:
		return fmt.Errorf("compute: want %q (the cost model, the same on every machine) or %q (measured wall time), got %q", computeModel, computeWall, s.mode)
	}
	return nil
}
