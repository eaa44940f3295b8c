// Command cascade is the CPU reference cascade model (kind model): Silero finds
// utterances in the input, PocketSphinx transcribes them, a policy decides whether the
// assistant is addressed (name: a request naming Aria; llm: an OpenAI-compatible
// endpoint), the answer comes from the endpoint or an offline heuristic, flite speaks
// it, and a human starting to speak stops it (barge-in). The compute an answer takes is
// charged to virtual time by a cost model (seconds transcribed and synthesised, endpoint
// requests), never by the wall clock unless asked. See README.md.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/plugins/pocketsphinx/sphinx"
	"github.com/duplexmpe/duplexmpe/sdk"
)

const version = "0.5.0"

// logger writes JSON lines to stderr, which the host logs under the plugin's name.
var logger = hclog.New(&hclog.LoggerOptions{Name: "cascade", Level: hclog.Debug, Output: os.Stderr, JSONFormat: true})

// The conversation format: 16 kHz in, 80 ms frames, 16 kHz out (flite's voices).
const (
	rate      = 16000
	frameSize = 1280
)

const (
	policyName = "name"
	policyLLM  = "llm"
)

type settings struct {
	policy     string
	names      []string
	spot       string  // the keyphrase spotted before transcribing; "": transcribe every utterance
	spotThresh float64 // its detection threshold
	vad        protocol.VAD
	voice      string
	flite      string
	cost       costModel
	endpoint   string
	model      string
	keyEnv     string
	llmTimeout time.Duration
	wake       float64  // seconds after a lone name in which the next utterance is addressed; 0: off
	wakeSpell  []string // pronunciations a short utterance is spotted for as the name alone
	wakeThresh float64
}

type cascade struct {
	mu       sync.Mutex
	cfg      settings
	detector *vad.Detector
	decoders *decoders
	spotters *decoders   // nil when every utterance is transcribed
	wakers   *decoders   // spot short utterances for the name alone; nil without a wake window
	wakeDir  string      // the wake spotter's dictionary and phrase list
	chat     *chatClient // nil without an endpoint
	cache    *transcripts
	identity map[string]string
}

func configFields() []sdk.ConfigField {
	return []sdk.ConfigField{
		{Name: "policy", Type: sdk.TypeString, Default: policyName, Allowed: []string{policyName, policyLLM},
			Description: "how it decides it is addressed: name (a request naming the assistant) or llm (the endpoint decides)"},
		{Name: "names", Type: sdk.TypeListString, Default: anyStrings(defaultNames), Description: "the assistant's name and how the recogniser hears it (one or more words each); the first is used in prompts"},
		{Name: "spot", Type: sdk.TypeString, Default: defaultSpot,
			Description: "name policy: the keyphrase PocketSphinx spots first; only utterances in which it is heard are transcribed (empty: transcribe every utterance; the llm policy always does)"},
		{Name: "spot_threshold", Type: sdk.TypeNumber, Default: defaultSpotThreshold,
			Description: "the spotter's detection threshold (PocketSphinx -kws_threshold): smaller hears the keyphrase in more utterances"},
		{Name: "threshold", Type: sdk.TypeNumber, Default: 0.5, Description: "Silero speech probability that starts an utterance"},
		{Name: "min_speech", Type: sdk.TypeNumber, Default: 0.12, Description: "seconds of speech before an utterance (or a barge-in) counts"},
		{Name: "end_silence", Type: sdk.TypeNumber, Default: 0.4, Description: "seconds of silence that end an utterance"},
		{Name: "wake_window", Type: sdk.TypeNumber, Default: defaultWakeWindow,
			Description: "name policy: seconds after an utterance that is the name alone (\"Aria.\" then a pause) in which the next utterance to start is taken as addressed to the assistant, as a wake word arms a voice assistant (0: off)"},
		{Name: "wake_pronunciations", Type: sdk.TypeListString, Default: anyStrings(defaultWakeSpellings),
			Description: "name policy: the name's pronunciations (ARPAbet phones of the en-us model) spotted in an utterance short enough to be the name alone (at most 0.8 s); the first is the dictionary's"},
		{Name: "wake_threshold", Type: sdk.TypeNumber, Default: defaultWakeThreshold,
			Description: "the detection threshold of each of wake_pronunciations"},
		{Name: "voice", Type: sdk.TypeString, Default: "slt", Description: "flite voice of the answers"},
		{Name: "flite", Type: sdk.TypeString, Default: "flite", Description: "the flite executable"},
		{Name: "compute", Type: sdk.TypeString, Default: computeModel, Allowed: []string{computeModel, computeWall},
			Description: "how an answer's compute is charged to virtual time: model (the cost model below: the same on every machine) or wall (measured wall time: depends on the machine and its load)"},
		{Name: "answer_cost", Type: sdk.TypeNumber, Default: defaultAnswerCost, Description: "compute = model: virtual seconds per answer (deciding, the heuristic, starting flite)"},
		{Name: "spot_cost", Type: sdk.TypeNumber, Default: defaultSpotCost, Description: "compute = model: virtual seconds per second of the answered utterance spotted"},
		{Name: "asr_cost", Type: sdk.TypeNumber, Default: defaultASRCost, Description: "compute = model: virtual seconds per second of the answered utterance transcribed"},
		{Name: "tts_cost", Type: sdk.TypeNumber, Default: defaultTTSCost, Description: "compute = model: virtual seconds per second of answer synthesised"},
		{Name: "endpoint_cost", Type: sdk.TypeNumber, Default: defaultEndpointCost, Description: "compute = model: virtual seconds per endpoint request (decision or answer)"},
		{Name: "compute_fixed", Type: sdk.TypeNumber, Default: 0.0,
			Description: "compute = model: when above 0, charge every answer exactly this many virtual seconds instead of the cost model"},
		{Name: "compute_charge", Type: sdk.TypeNumber, Default: 1.0,
			Description: "compute = wall: virtual seconds of delay per measured wall second (1: as slow as live)"},
		{Name: "endpoint", Type: sdk.TypeString, Default: "", Description: "OpenAI-compatible base URL (e.g. http://localhost:8000/v1); required by the llm policy, used for answers when set", Transport: true},
		{Name: "model", Type: sdk.TypeString, Default: "", Description: "model name sent to the endpoint"},
		{Name: "api_key_env", Type: sdk.TypeString, Default: "", Description: "environment variable holding the endpoint's API key (empty: none)", Transport: true},
		{Name: "llm_timeout", Type: sdk.TypeNumber, Default: 60.0, Description: "seconds one endpoint request may take", Transport: true},
	}
}

func (c *cascade) Describe(context.Context) (sdk.Info, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return sdk.Info{
		Name:        "cascade",
		Version:     version,
		Description: "CPU reference cascade: Silero utterances, PocketSphinx, a name or LLM policy, flite answers, barge-in; modelled compute charged to virtual time.",
		Config:      configFields(),
		Identity:    c.identity,
		// Conversations share nothing that changes what they hear or say (the VAD
		// batches their windows, decoders are lent one utterance at a time, the
		// transcript cache gives what transcribing again would).
		Capabilities: []string{sdk.CapConcurrency + strconv.Itoa(maxConversations)},
	}, nil
}

func (c *cascade) Configure(ctx context.Context, config map[string]any) error {
	s, err := parseSettings(config)
	if err != nil {
		return err
	}
	var key string
	if s.keyEnv != "" {
		if key = os.Getenv(s.keyEnv); key == "" {
			return fmt.Errorf("api_key_env: the environment variable %s is empty or unset (the plugin sees only the variables its plugin block passes)", s.keyEnv)
		}
	}
	fv, fsum, err := fliteIdentity(ctx, s.flite)
	if err != nil {
		return err
	}
	if _, err := speak(ctx, s.flite, s.voice, "ok", rate); err != nil {
		return fmt.Errorf("voice %q: %w (flite -lv lists the voices)", s.voice, err)
	}
	det, err := vad.Open(vad.Options{})
	if err != nil {
		return fmt.Errorf("silero vad: %w (run `make deps`)", err)
	}
	// What is loaded below is closed again if a later part fails to load.
	var dec *sphinx.Decoder
	var spotters, wakers *decoders
	var wakeDir string
	loaded := false
	defer func() {
		if loaded {
			return
		}
		det.Close()
		if dec != nil {
			dec.Close()
		}
		spotters.close()
		wakers.close()
		if wakeDir != "" {
			os.RemoveAll(wakeDir)
		}
	}()
	if dec, err = sphinx.Load(transcriberModel()); err != nil {
		return fmt.Errorf("pocketsphinx: %w", err)
	}
	if s.spot != "" {
		sp, err := sphinx.Load(spotterModel(s.spot, s.spotThresh))
		if err != nil {
			return fmt.Errorf("spot %q: %w (every word of it must be in the dictionary %s)", s.spot, err, sphinx.DefaultDict)
		}
		spotters = newDecoders(sp, maxConversations)
	}
	if s.wakeOn() {
		w, dir, err := loadWakeSpotter(s.names[0], s.wakeSpell, s.wakeThresh)
		if err != nil {
			return fmt.Errorf("wake spotter (wake_pronunciations %q): %w", s.wakeSpell, err)
		}
		wakers, wakeDir = newDecoders(w, maxConversations), dir
	}
	id := map[string]string{
		"policy":       s.policy,
		"names":        strings.Join(s.names, ","),
		"vad":          det.Model() + " sha256:" + fileDigest(det.ModelPath()),
		"vad_settings": fmt.Sprintf("threshold=%g min_speech=%g end_silence=%g pad=%g", s.vad.Threshold, s.vad.MinSpeech, s.vad.MergePause, utterancePad),
		"wake":         wakeIdentity(s),
		"asr":          "libpocketsphinx " + debianVersion("libpocketsphinx3") + ", pocketsphinx-en-us " + debianVersion("pocketsphinx-en-us") + "; " + searchIdentity(s),
		"tts":          "flite " + fv + " voice " + s.voice,
		"flite_sha256": fsum,
		"compute":      s.cost.identity(),
		"answer":       "heuristic (transcript number phrases), " + heuristicVersion,
	}
	var chat *chatClient
	if s.endpoint != "" {
		chat = newChatClient(s.endpoint, s.model, key, s.llmTimeout)
		id["endpoint_model"] = s.model // the endpoint's URL is transport
		id["answer"] = "endpoint"
		sum := sha256.Sum256([]byte(policyPrompt + "\x00" + answerPrompt))
		id["prompt_sha256"] = hex.EncodeToString(sum[:])
	}
	loaded = true
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLocked()
	c.cfg, c.detector, c.decoders, c.spotters, c.chat, c.identity = s, det, newDecoders(dec, maxConversations), spotters, chat, id
	c.wakers, c.wakeDir = wakers, wakeDir
	c.cache = newTranscripts()
	return nil
}

// defaultNames are "aria" and what PocketSphinx's en-us model hears when flite's voices
// say it (measured on the shipped dataset's voices: "are you" for kal16, awb and rms,
// "aryan" and "area" for slt).
var defaultNames = []string{"aria", "are you", "aryan", "area"}

// anyStrings is xs as a list of any, as a config field's default is given.
func anyStrings(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// fileDigest is the hex SHA-256 of a file, or "unreadable" (the identity still says
// which model version ran).
func fileDigest(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "unreadable"
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// debianVersion is an installed Debian package's version.
func debianVersion(pkg string) string {
	out, err := exec.Command("dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil || len(out) == 0 {
		return "(version unknown)"
	}
	return strings.TrimSpace(string(out))
}

// heuristicVersion names the offline answer heuristic, so a change shows in identities.
const heuristicVersion = "heuristic-2"

func (c *cascade) closeLocked() {
	if c.decoders != nil {
		c.decoders.close()
	}
	c.spotters.close()
	c.wakers.close()
	if c.wakeDir != "" {
		os.RemoveAll(c.wakeDir)
	}
	if c.detector != nil {
		c.detector.Close()
	}
}

func parseSettings(config map[string]any) (settings, error) {
	s := settings{policy: policyName, names: defaultNames, spot: defaultSpot, spotThresh: defaultSpotThreshold, vad: protocol.DefaultVAD(), voice: "slt", flite: "flite", cost: defaultCostModel(), llmTimeout: time.Minute,
		wake: defaultWakeWindow, wakeSpell: defaultWakeSpellings, wakeThresh: defaultWakeThreshold}
	s.vad.MinSpeech, s.vad.MergePause = 0.12, 0.4
	str := func(k string, dst *string) error {
		v, ok := config[k]
		if !ok || v == nil {
			return nil
		}
		x, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: want a string, got %v", k, v)
		}
		*dst = x
		return nil
	}
	num := func(k string, dst *float64, lo, hi float64) error {
		v, ok := config[k]
		if !ok || v == nil {
			return nil
		}
		x, ok := v.(float64)
		if !ok || math.IsNaN(x) || x < lo || x > hi {
			return fmt.Errorf("%s: want a number in [%g, %g], got %v", k, lo, hi, v)
		}
		*dst = x
		return nil
	}
	timeout := 60.0
	for _, err := range []error{
		str("policy", &s.policy), str("voice", &s.voice), str("flite", &s.flite), str("endpoint", &s.endpoint),
		str("model", &s.model), str("api_key_env", &s.keyEnv), str("compute", &s.cost.mode), str("spot", &s.spot),
		num("spot_threshold", &s.spotThresh, 1e-100, 1e100), num("spot_cost", &s.cost.spot, 0, 100),
		num("threshold", &s.vad.Threshold, 0.05, 0.95), num("min_speech", &s.vad.MinSpeech, 0, 2),
		num("end_silence", &s.vad.MergePause, 0.1, 5),
		num("answer_cost", &s.cost.answer, 0, 60), num("asr_cost", &s.cost.asr, 0, 100), num("tts_cost", &s.cost.tts, 0, 100),
		num("endpoint_cost", &s.cost.endpoint, 0, 600), num("compute_fixed", &s.cost.fixed, 0, 60),
		num("compute_charge", &s.cost.charge, 0, 100),
		num("llm_timeout", &timeout, 1, 600), num("wake_window", &s.wake, 0, 10),
		num("wake_threshold", &s.wakeThresh, 1e-100, 1e100),
	} {
		if err != nil {
			return s, err
		}
	}
	s.llmTimeout = time.Duration(timeout * float64(time.Second))
	names, err := stringList(config, "names", "a word or a few", func(n string) (string, error) {
		return strings.Join(words(n), " "), nil
	})
	if err != nil {
		return s, err
	}
	spellings, err := stringList(config, "wake_pronunciations", "ARPAbet phones (\"AA R IY AH\")", func(p string) (string, error) {
		phones := strings.Fields(strings.ToUpper(p))
		for _, ph := range phones {
			if !enUSPhones[ph] {
				return "", fmt.Errorf("%q has %q, which is not a phone of the en-us model (%s)", p, ph, enUSPhoneList)
			}
		}
		return strings.Join(phones, " "), nil
	})
	if err != nil {
		return s, err
	}
	if names != nil {
		s.names = names
	}
	if spellings != nil {
		s.wakeSpell = spellings
	}
	if err := checkCompute(s.cost, config); err != nil {
		return s, err
	}
	s.spot = strings.Join(words(s.spot), " ")
	switch s.policy {
	case policyName:
	case policyLLM:
		if s.endpoint == "" {
			return s, fmt.Errorf("policy \"llm\" needs endpoint (an OpenAI-compatible base URL, e.g. http://localhost:8000/v1)")
		}
		// The endpoint decides from every utterance's transcript, so nothing is left
		// untranscribed: spotting does not apply (its default, as hosts pass it, is fine).
		if v, ok := config["spot"]; ok && v != nil && s.spot != defaultSpot && s.spot != "" {
			return s, fmt.Errorf("spot applies to policy %q; the llm policy transcribes every utterance", policyName)
		}
		s.spot = ""
	default:
		return s, fmt.Errorf("policy: want %q or %q, got %q", policyName, policyLLM, s.policy)
	}
	if s.voice == "" || strings.HasPrefix(s.voice, "-") {
		return s, fmt.Errorf("voice: want a flite voice name, got %q", s.voice)
	}
	return s, s.vad.Validate()
}

// stringList reads the list field key of config: nil when it is not set; each item a
// string that norm turns into its value ("" or an error: refused, with what each should be).
func stringList(config map[string]any, key, each string, norm func(string) (string, error)) ([]string, error) {
	v, ok := config[key]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("%s: want a non-empty list of strings, each %s, got %v", key, each, v)
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		str, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("%s: each is %s, got %v", key, each, x)
		}
		n, err := norm(str)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if n == "" {
			return nil, fmt.Errorf("%s: each is %s, got %q", key, each, str)
		}
		out = append(out, n)
	}
	return out, nil
}

func (c *cascade) Start(context.Context, sdk.ConversationStart) (sdk.Conversation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.detector == nil {
		return nil, fmt.Errorf("cascade: Start before Configure")
	}
	on, err := c.detector.NewOnline(c.cfg.vad)
	if err != nil {
		return nil, err
	}
	return &conversation{cfg: c.cfg, decoders: c.decoders, spotters: c.spotters, wakers: c.wakers, chat: c.chat, cache: c.cache, online: on}, nil
}

// answer is synthesised speech waiting to be played or playing.
type answer struct {
	text  string
	audio []float32
	at    int // the first frame it may start in (compute charged)
	pos   int
}

type conversation struct {
	cfg      settings
	decoders *decoders
	spotters *decoders // nil: every utterance is transcribed
	wakers   *decoders // nil: no wake words
	chat     *chatClient
	cache    *transcripts
	online   *vad.Online

	in          []float32 // every input sample so far
	frames      int
	handled     int // closed utterances already transcribed
	wasSpeaking bool
	armedUntil  float64  // a lone name armed the assistant: the next utterance starting by then is addressed
	history     []string // transcripts of the utterances so far
	facts       []string // those that were not requests to the assistant
	pending     *answer
	playing     *answer
}

func (c *conversation) Format() sdk.Format {
	return sdk.Format{InputRate: rate, OutputRate: rate, FrameSize: frameSize}
}

func (c *conversation) Step(ctx context.Context, frame []float32) (sdk.Output, error) {
	if len(frame) != frameSize {
		return sdk.Output{}, fmt.Errorf("cascade: frame of %d samples, want %d", len(frame), frameSize)
	}
	c.in = append(c.in, frame...)
	c.frames++
	if err := c.online.Push(frame); err != nil {
		return sdk.Output{}, err
	}
	var out sdk.Output
	speaking := c.online.Speaking()
	if speaking && !c.wasSpeaking {
		// A human started speaking: stop talking (barge-in) and drop an answer not yet
		// begun, as its moment has passed.
		if c.playing != nil {
			c.playing = nil
			out.Flush = true
			out.Text = "[barge-in]"
		}
		c.pending = nil
	}
	c.wasSpeaking = speaking
	eps := c.online.Episodes()
	for ; c.handled < len(eps); c.handled++ {
		if err := c.utterance(ctx, eps[c.handled]); err != nil {
			return out, err
		}
	}
	if c.pending != nil && c.frames >= c.pending.at && !speaking {
		c.playing, c.pending = c.pending, nil
		out.Text = c.playing.text
	}
	if p := c.playing; p != nil {
		end := min(p.pos+frameSize, len(p.audio))
		out.Samples = p.audio[p.pos:end]
		if p.pos = end; p.pos == len(p.audio) {
			c.playing = nil
		}
	}
	return out, nil
}

// utterance transcribes one closed utterance, decides, and when addressed prepares the
// answer to start once its compute (the cost model's, or the measured wall time with
// compute = "wall") has passed in virtual time.
func (c *conversation) utterance(ctx context.Context, ep timeline.Episode) error {
	b := c.cfg.cost.newBill()
	// The samples after its end are already in (it closed after end_silence of silence).
	s, e := heardSpan(ep, utterancePad, len(c.in))
	if s >= e {
		return nil
	}
	how := hearSpotted
	switch {
	case c.armedUntil > 0 && ep.Start <= c.armedUntil:
		how = hearWhole // the request after a lone name
	case c.wakers != nil && ep.Duration() <= wakeMaxSeconds:
		how = hearWakeFirst
	}
	c.armedUntil = 0
	tr, err := c.transcribe(c.in[s:e], how, b)
	if err != nil {
		return fmt.Errorf("cascade: transcribing the utterance at %.2f s: %w", ep.Start, err)
	}
	text := tr.text
	logger.Debug("utterance", "start", ep.Start, "end", ep.End, "transcript", text, "opens_with_name", tr.opens, "armed", how == hearWhole)
	if text == "" {
		return nil
	}
	if c.wakers != nil && loneName(text, c.cfg.names[0]) {
		// "Aria." and a pause: the request comes in the next utterance.
		c.armedUntil = ep.End + c.cfg.wake
		c.history = append(c.history, text)
		return nil
	}
	if how == hearWhole {
		// The request after the wake word: addressed when the name policy takes it as a
		// request with the name before it ("Aria. ... what time is it?"), not when it is
		// a statement ("Aria. ... the bus leaves at ten").
		text = c.cfg.names[0] + " " + text
	}
	history := c.history
	c.history = append(c.history, text)
	var reply string
	switch c.cfg.policy {
	case policyLLM:
		b.endpointRequest()
		d, err := c.chat.decide(ctx, c.cfg.names[0], history, text)
		if err != nil {
			return err
		}
		if !d.Respond {
			c.facts = append(c.facts, text)
			return nil
		}
		reply = strings.TrimSpace(d.Answer)
	default:
		if !tr.opens && !addressedByName(text, c.cfg.names) {
			c.facts = append(c.facts, text)
			return nil
		}
		if c.chat != nil {
			b.endpointRequest()
			if reply, err = c.chat.answer(ctx, c.cfg.names[0], history, text); err != nil {
				return err
			}
		}
	}
	if reply == "" {
		reply = heuristicAnswer(text, c.facts, c.cfg.names)
	}
	pcm, err := speak(ctx, c.cfg.flite, c.cfg.voice, reply, rate)
	if err != nil {
		return err
	}
	b.synthesised(pcm.Duration())
	charged := b.total()
	logger.Debug("answering", "answer", reply, "charged", charged, "audio", pcm.Duration())
	c.pending = &answer{text: reply, audio: pcm.Samples, at: c.frames + int(math.Ceil(charged*rate/frameSize))}
	return nil
}

// hearing is how an utterance is listened to.
type hearing byte

const (
	// hearSpotted: the spotter first, and only an utterance it fires on is transcribed
	// (every utterance when there is no spotter).
	hearSpotted hearing = iota
	// hearWakeFirst: a short utterance, first heard by the wake spotter; when it fires the
	// utterance is the name alone, else it is heard as hearSpotted.
	hearWakeFirst
	// hearWhole: transcribed without spotting (the request after a lone name).
	hearWhole
)

// transcribe listens to an utterance as how says: the utterances it does not transcribe
// get the empty transcript (not addressed, not remembered). The result comes from the
// cache when the same audio was heard the same way before, and its modelled cost is
// charged to b either way.
func (c *conversation) transcribe(samples []float32, how hearing, b *bill) (cachedTranscript, error) {
	key := audioKey(how, samples)
	if t, ok := c.cache.get(key); ok {
		b.transcribed(t, true)
		return t, nil
	}
	var began time.Time
	if c.cfg.cost.mode == computeWall {
		began = time.Now()
	}
	t, err := c.listen(samples, how)
	if err != nil {
		return cachedTranscript{}, err
	}
	if c.cfg.cost.mode == computeWall {
		t.wallS = time.Since(began).Seconds()
	}
	c.cache.put(key, t)
	b.transcribed(t, false)
	return t, nil
}

// listen decodes an utterance as how says, charging each decoder's modelled cost.
func (c *conversation) listen(samples []float32, how hearing) (cachedTranscript, error) {
	seconds := float64(len(samples)) / rate
	var t cachedTranscript
	if how == hearWakeFirst {
		// Short enough to be the name alone: the wake spotter, which knows how several
		// voices say it, decides; a detection makes the utterance the name.
		wake, err := c.wakers.words(samples)
		if err != nil {
			return t, err
		}
		t.modelS += c.cfg.cost.spot * seconds
		if len(wake) > 0 {
			t.text, t.opens = c.cfg.names[0], true
			return t, nil
		}
	}
	var hits []sphinx.Word
	if how != hearWhole && c.spotters != nil {
		var err error
		if hits, err = c.spotters.words(samples); err != nil {
			return t, err
		}
		t.modelS += c.cfg.cost.spot * seconds
		if len(hits) == 0 {
			return t, nil // not addressed by name: not transcribed
		}
	}
	ws, err := c.decoders.words(samples)
	if err != nil {
		return t, err
	}
	t.text = nameWhereSpotted(ws, hits, c.cfg.names[0])
	t.opens = opensWithName(t.text, hits, c.cfg.names[0])
	t.modelS += c.cfg.cost.asr * seconds
	return t, nil
}

func (c *conversation) Close() error {
	c.online.Close()
	return nil
}

func main() { sdk.Serve(&cascade{}) }
