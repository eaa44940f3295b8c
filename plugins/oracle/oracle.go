// Command oracle is the calibration model (role "calibration", issue 29): it knows the
// answers. It reads the built dataset named in its config, and in each conversation (the
// host names the scenario in ConversationStart.ID) it answers T with the gold answer,
// worded by its answer type (words.go) and spoken by a voice of the pool (onnx-tts's
// synthesiser), starting delay_ms after T ends;
// it answers every N4_Q the same way with a holding phrase, and stops as soon as a human
// starts speaking; otherwise it is silent. What it scores is what a perfect model scores
// through this chain of voices, VAD, ASR and judge: where it misses, the chain does.
//
// It finds where a turn ends by listening, not by replaying the scheduler's rules: each
// turn it answers has templates, the 10 ms log-energy envelope of the last two seconds of
// its clip up to its last loud hop, one for each of 8 phases of the clip against the
// input's hops; when the envelope of the input's last two seconds, all heard since the
// last cue, correlates with one at or above match (and within 6 dB of it), that hop has
// just been heard, and the turn's clip ends its trailing silence later.
//
// In a room (a set built with a room block) the session adds the set's background loop
// under every input sample, from a sample drawn for the pair (dataset.BedOffset); the
// oracle knows the loop and the pair, so it takes the loop back out of what it hears
// before listening, and hears the room's reverberant turns, which its templates are made
// of. The room is on the input only (the scorer hears the model's output as spoken), so
// its row in a room is its clean row but where its own ear errs.
package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/stats"
	"github.com/duplexmpe/duplexmpe/plugins/always-talk/speech"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// version 1.1.0 takes a room's background out of what it hears (1.0.0 heard nothing of a
// room's turns under the bed, and stopped its answers on the bed as on a human); 1.2.0
// matches the last two seconds of a turn instead of one, and hears the next cue only in
// input after the last (1.1.0 took another turn's reverberant end for T in the kitchen).
const version = "1.2.0"

// Envelope analysis: 20 ms windows every 10 ms, in dB with a floor; a template is at most
// templateHops long; a hop is loud within loudDB of the clip's loudest; the input is
// speech (a human has started) after speechHops hops above speechDB.
const (
	hopS         = 0.010
	winHops      = 2
	floorDB      = -80.0
	templateHops = 200
	minTemplate  = 20
	loudDB       = 35.0
	speechDB     = -50.0
	speechHops   = 3
	// maxLevelDB: a heard envelope this far from the template on average (dB) is another
	// sound, however well its shape correlates.
	maxLevelDB = 6.0
	// phases: a clip starts anywhere between two of the input's hops, and a 20 ms window
	// of speech 5 ms off its place has another energy; so each turn has a template for
	// each of phases shifts of the clip (a hop apart / phases), and the best one hears.
	phases = 8
	// defaultMatch is the correlation at which a turn's end is heard. On open v2's dev
	// split the best phase correlates at 0.994-1.000 at every true end, and at most 0.960
	// anywhere else before it (the preamble, the middle of a turn).
	defaultMatch = 0.98
)

// synthesizer is what the oracle speaks with (synth.Plugin; a test may give another).
type synthesizer interface {
	Configure(ctx context.Context, cfg map[string]any) error
	Synthesize(ctx context.Context, text, voice string) (sdk.Audio, error)
}

type oracle struct {
	mu      sync.Mutex
	tts     synthesizer
	format  sdk.Format
	dir     string
	byID    map[string]scenario
	voice   string
	delayS  float64
	match   float64
	n4Text  string
	config  map[string]any
	clipEnv map[string][]template // clip path -> its templates, one per phase
}

// scenario is a scenario of the configured set and the background loop of the build it
// came from (nil in a clean set).
type scenario struct {
	sc  *dataset.Scenario
	bed *loop
}

// loop is a room's background loop at the input rate, and the length and rate it has in
// the set (the pair's offset is drawn on those, dataset.BedOffset).
type loop struct {
	samples   []float32
	n, native int
}

// template is what the end of a turn sounds like, as heard at one phase: the envelope
// of the clip's last two seconds of sound (up to its last loud hop), the clip delayed by
// shift samples so that its hops fall where the input's do when the clip starts shift
// samples after an input hop boundary.
type template struct {
	env      []float64 // dB per hop
	trailing float64   // seconds of clip after the end of the template's last hop
}

func (o *oracle) Describe(context.Context) (sdk.Info, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return sdk.Info{
		Name:         "oracle",
		Version:      version,
		Description:  "Calibration: answers every T with the gold answer (a pool voice) delay_ms after T ends, holds the floor after every N4_Q until a human speaks, silent otherwise.",
		Capabilities: []string{"model.concurrency=2"},
		Config: append([]sdk.ConfigField{
			{Name: "dataset", Type: sdk.TypePath, Default: "", Description: "the built dataset folder the run plays (its scenarios.jsonl and clips)"},
			{Name: "voice", Type: sdk.TypeString, Default: "af_heart", Description: "the onnx-tts voice the answers are spoken in"},
			{Name: "delay_ms", Type: sdk.TypeNumber, Default: 500.0, Description: "milliseconds from the end of T (or N4_Q) to the answer"},
			{Name: "match", Type: sdk.TypeNumber, Default: defaultMatch, Description: "envelope correlation (of the best phase) at which a turn's end is heard"},
			{Name: "n4_text", Type: sdk.TypeString, Default: "Let me check that for you. One moment, I'm looking it up right now.", Description: "what it says after an N4_Q (the human resolves it)"},
			{Name: "weights", Type: sdk.TypePath, Default: "", Description: "onnx-tts's weights folder (empty: as onnx-tts finds it)"},
			{Name: "onnxruntime", Type: sdk.TypeString, Default: "", Description: "the ONNX Runtime library (empty: as onnx-tts finds it)"},
		}, speech.FormatFields()[0], speech.FormatFields()[2]),
		Identity: map[string]string{
			"voice": o.voice, "delay_ms": fmt.Sprint(o.delayS * 1000), "match": fmt.Sprint(o.match), "n4_text": o.n4Text,
			"format": fmt.Sprintf("%d Hz in, %d Hz out, %d-sample frames", o.format.InputRate, o.format.OutputRate, o.format.FrameSize),
		},
	}, nil
}

func (o *oracle) Configure(ctx context.Context, cfg map[string]any) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	in := map[string]any{"input_rate": cfg["input_rate"], "frame_ms": cfg["frame_ms"], "output_rate": 24000.0}
	f, err := speech.ParseFormat(in)
	if err != nil {
		return err
	}
	dir, _ := cfg["dataset"].(string)
	if dir == "" {
		return errors.New("config dataset: name the built dataset folder the run plays (the dataset block's out)")
	}
	// The whole built set, and what a partial build (`run --limit`) wrote beside it, each
	// with its background loop.
	byID := map[string]scenario{}
	found := false
	for _, set := range []struct {
		file string
		load func(string) (*dataset.Dataset, error)
	}{{dataset.ScenariosFile, dataset.Load}, {dataset.PartialScenariosFile, dataset.LoadPartial}} {
		if _, err := os.Stat(filepath.Join(dir, set.file)); err != nil {
			continue
		}
		d, err := set.load(dir)
		if err != nil {
			return fmt.Errorf("config dataset: %w", err)
		}
		found = true
		p, err := d.ReadBackground()
		if err != nil {
			return fmt.Errorf("config dataset: %w", err)
		}
		var bed *loop
		if len(p.Samples) > 0 {
			bed = &loop{samples: audio.Resample(p, f.InputRate).Samples, n: len(p.Samples), native: p.Rate}
		}
		for i := range d.Scenarios {
			byID[d.Scenarios[i].ScenarioID] = scenario{sc: &d.Scenarios[i], bed: bed}
		}
	}
	if !found {
		return fmt.Errorf("config dataset: %s holds no %s: name the built dataset folder the run plays (the dataset block's out)", dir, dataset.ScenariosFile)
	}
	delay, err := speech.Number(cfg, "delay_ms", 500, 0, 4000)
	if err != nil {
		return err
	}
	match, err := speech.Number(cfg, "match", defaultMatch, 0.5, 1)
	if err != nil {
		return err
	}
	o.format, o.dir, o.byID, o.delayS, o.match = f, dir, byID, delay/1000, match
	o.voice, o.n4Text = "af_heart", "Let me check that for you. One moment, I'm looking it up right now."
	if v, ok := cfg["voice"].(string); ok && v != "" {
		o.voice = v
	}
	if v, ok := cfg["n4_text"].(string); ok && v != "" {
		o.n4Text = v
	}
	tcfg := map[string]any{}
	for _, k := range []string{"weights", "onnxruntime"} {
		if v, ok := cfg[k].(string); ok && v != "" {
			tcfg[k] = v
		}
	}
	o.clipEnv = map[string][]template{}
	return o.tts.Configure(ctx, tcfg)
}

// envelopeOf is the dB envelope of samples at rate: one value per hop, each over winHops hops.
func envelopeOf(x []float32, rate int) []float64 {
	hop := int(math.Round(hopS * float64(rate)))
	var out []float64
	for end := hop; end <= len(x); end += hop {
		start := max(0, end-winHops*hop)
		out = append(out, windowDB(x[start:end]))
	}
	return out
}

func windowDB(x []float32) float64 {
	if len(x) == 0 {
		return floorDB
	}
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Max(floorDB, 10*math.Log10(s/float64(len(x))+1e-12))
}

// templates of a clip of the dataset, one per phase, cached.
func (o *oracle) templates(clip string) ([]template, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if t, ok := o.clipEnv[clip]; ok {
		return t, nil
	}
	pcm, err := readClip(o.dir, clip)
	if err != nil {
		return nil, err
	}
	t, err := templatesOf(pcm)
	if err != nil {
		return nil, fmt.Errorf("clip %s: %w", clip, err)
	}
	o.clipEnv[clip] = t
	return t, nil
}

// templatesOf makes a clip's templates: for each phase, the clip is delayed by a
// fraction of a hop (shift samples) and its envelope taken; the template is its last
// templateHops hops up to the last hop within loudDB of the loudest, and the clip ends
// trailing seconds after that hop.
func templatesOf(pcm audio.PCM) ([]template, error) {
	hop := int(math.Round(hopS * float64(pcm.Rate)))
	out := make([]template, 0, phases)
	for p := range phases {
		shift := p * hop / phases
		x := append(make([]float32, shift, shift+len(pcm.Samples)), pcm.Samples...)
		env := envelopeOf(x, pcm.Rate)
		top := floorDB
		for _, v := range env {
			top = math.Max(top, v)
		}
		first, last := -1, -1
		for i, v := range env {
			if v >= top-loudDB {
				last = i
				if first < 0 {
					first = i
				}
			}
		}
		if last-first+1 < minTemplate {
			return nil, fmt.Errorf("too short to recognise (%d hops of sound)", last-first+1)
		}
		// The template is the clip's sound only: what comes before it in the room differs.
		from := max(first, last+1-templateHops)
		end := float64((last+1)*hop-shift) / float64(pcm.Rate)
		out = append(out, template{env: env[from : last+1], trailing: math.Max(0, pcm.Duration()-end)})
	}
	return out, nil
}

func readClip(dir, clip string) (audio.PCM, error) {
	f, _, err := dataset.OpenClipFile(dir, filepath.Join(dir, clip))
	if err != nil {
		return audio.PCM{}, err
	}
	defer f.Close()
	pcm, err := audio.DecodeWAV(f)
	if err != nil {
		return audio.PCM{}, fmt.Errorf("%s: %w", clip, err)
	}
	return pcm, nil
}

// cue is a turn the oracle answers: when its end is heard (by one of its templates), it
// speaks answer.
type cue struct {
	templates []template
	answer    []float32
}

func (o *oracle) Start(ctx context.Context, req sdk.ConversationStart) (sdk.Conversation, error) {
	o.mu.Lock()
	e, ok := o.byID[req.ID]
	o.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("scenario %q is not in the dataset %s named in the oracle's config: name the dataset this run plays", req.ID, o.dir)
	}
	s := e.sc
	c := &conversation{o: o, format: o.format, id: req.ID}
	if b := e.bed; b != nil {
		// The loop as the session plays it: at the input rate, from the pair's sample.
		c.bed = b.samples
		c.bedAt = audio.AtRate(int64(dataset.BedOffset(s.PairID, b.n)), b.native, o.format.InputRate) % int64(len(c.bed))
	}
	for i, t := range s.Turns {
		var text string
		switch t.Label {
		case protocol.LabelT:
			text = spoken(s)
		case protocol.LabelN4Q:
			text = o.n4Text
		default:
			continue
		}
		if t.Clip == "" {
			return nil, fmt.Errorf("scenario %s turn %d has no clip: the oracle needs the built dataset (duplexmpe build), not the scripts", s.ScenarioID, i)
		}
		tm, err := o.templates(t.Clip)
		if err != nil {
			return nil, fmt.Errorf("scenario %s turn %d: %w", s.ScenarioID, i, err)
		}
		a, err := o.tts.Synthesize(ctx, text, o.voice)
		if err != nil {
			return nil, fmt.Errorf("scenario %s turn %d: speaking %q: %w", s.ScenarioID, i, text, err)
		}
		c.cues = append(c.cues, cue{templates: tm, answer: trimLead(audio.Resample(audio.PCM{Samples: a.Samples, Rate: a.Rate}, o.format.OutputRate).Samples, o.format.OutputRate)})
	}
	return c, nil
}

// trimLead drops the synthesiser's leading silence (all but 10 ms before the first
// sample within 40 dB of the peak), so the answer is heard when it is scheduled.
func trimLead(x []float32, rate int) []float32 {
	var peak float64
	for _, v := range x {
		peak = math.Max(peak, math.Abs(float64(v)))
	}
	for i, v := range x {
		if math.Abs(float64(v)) >= peak/100 {
			return x[max(0, i-rate/100):]
		}
	}
	return x
}

// conversation listens hop by hop for the next cue's end, then plays its answer from the
// scheduled output sample until it ends or a human starts speaking.
type conversation struct {
	o      *oracle
	format sdk.Format
	cues   []cue
	// bed is the room's background loop at the input rate and bedAt its sample under the
	// next input sample: taken out of the input before it is heard.
	bed   []float32
	bedAt int64
	next  int       // the cue listened for
	buf   []float32 // input not yet in a hop
	win   []float32 // the last winHops hops of input
	env   []float64 // the input's recent envelope (at most templateHops)
	in    int64     // input samples heard
	out   int64     // output samples emitted
	// The answer being played: answer from output sample at; loudHops counts the
	// consecutive speech hops of input while it plays.
	answer   []float32
	at       int64
	loudHops int
	k        int
	// id and the best correlation with the next cue so far, for the log.
	id           string
	best, bestAt float64
}

func (c *conversation) Format() sdk.Format { return c.format }

func (c *conversation) Step(_ context.Context, frame []float32) (sdk.Output, error) {
	hop := int(math.Round(hopS * float64(c.format.InputRate)))
	start := len(c.buf)
	c.buf = append(c.buf, frame...)
	if n := int64(len(c.bed)); n > 0 {
		for i := start; i < len(c.buf); i++ {
			c.buf[i] -= c.bed[c.bedAt]
			if c.bedAt++; c.bedAt == n {
				c.bedAt = 0
			}
		}
	}
	for len(c.buf) >= hop {
		h := c.buf[:hop]
		c.buf = c.buf[hop:]
		c.in += int64(hop)
		c.win = append(c.win, h...)
		if len(c.win) > winHops*hop {
			c.win = c.win[len(c.win)-winHops*hop:]
		}
		db := windowDB(c.win)
		c.env = append(c.env, db)
		if len(c.env) > templateHops {
			c.env = c.env[1:]
		}
		c.hear(windowDB(h))
	}
	n := speech.FrameOutput(c.format, c.k)
	c.k++
	var out []float32
	if c.answer != nil {
		out = make([]float32, n)
		any := false
		for j := range out {
			p := c.out + int64(j) - c.at
			if p >= 0 && p < int64(len(c.answer)) {
				out[j] = c.answer[p]
				any = true
			}
		}
		if c.out+int64(n)-c.at >= int64(len(c.answer)) {
			c.answer = nil
		}
		if !any {
			out = nil
		}
	}
	c.out += int64(n)
	return sdk.Output{Samples: out}, nil
}

// hear takes one hop of input: a human starting to speak stops the answer; the next
// cue's end, heard, schedules its answer.
func (c *conversation) hear(hopDB float64) {
	if hopDB > speechDB {
		c.loudHops++
	} else {
		c.loudHops = 0
	}
	playing := c.answer != nil && c.out >= c.at
	if playing && c.loudHops >= speechHops {
		c.answer = nil
	}
	if c.next >= len(c.cues) {
		return
	}
	// The cue's template (phase) that correlates best with the input and lies within
	// maxLevelDB of it.
	cu := c.cues[c.next]
	r, heardAt := -1.0, -1
	for i, t := range cu.templates {
		if len(c.env) < len(t.env) {
			continue
		}
		heard := c.env[len(c.env)-len(t.env):]
		ri, _ := stats.Pearson(heard, t.env)
		if ri > c.best {
			c.best, c.bestAt = ri, float64(c.in)/float64(c.format.InputRate)
		}
		if ri > r && meanAbsDiff(heard, t.env) <= maxLevelDB {
			r, heardAt = ri, i
		}
	}
	if heardAt < 0 || r < c.o.match {
		return
	}
	fmt.Fprintf(os.Stderr, "oracle %s: cue %d heard at %.3f s (r %.3f)\n", c.id, c.next, float64(c.in)/float64(c.format.InputRate), r)
	c.best = 0
	// The next cue is heard in input after this one only: the end just heard (a room's
	// reverberant decay) must not be taken for the next turn's end too.
	c.env = c.env[:0]
	c.next++
	// Now is the end of the template's last loud hop; its clip ends trailing later.
	startS := float64(c.in)/float64(c.format.InputRate) + cu.templates[heardAt].trailing + c.o.delayS
	c.answer, c.loudHops = cu.answer, 0
	c.at = int64(math.Round(startS * float64(c.format.OutputRate)))
}

// meanAbsDiff is the mean absolute difference of two equal-length series.
func meanAbsDiff(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s / float64(len(a))
}

func (c *conversation) Close() error {
	if c.next < len(c.cues) {
		fmt.Fprintf(os.Stderr, "oracle %s: cue %d of %d never heard (best r %.3f at %.3f s)\n", c.id, c.next, len(c.cues), c.best, c.bestAt)
	}
	return nil
}
