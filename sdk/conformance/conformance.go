// Package conformance is the conformance suite every duplexmpe plugin passes, in any
// language: it starts the real plugin process and drives it over real gRPC. Plugin
// authors run it from `go test` through sdk/plugintest; `duplexmpe plugins test
// FILE.hcl` runs it from the harness binary against every plugin of a run file (Check).
//
// The suite needs nothing from the harness. It starts a plugin through a Target, a small
// interface the host implements (core/pluginhost's Spec is one), and reports to a T, the
// part of testing.T it uses (sdk/plugintest passes a *testing.T; Check records into a
// list of Results).
//
// Each check has a name, so a failure reads as e.g. "model/wrong_size_frame":
// handshake, describe, health, configure, then per declared kind (model: ready,
// frames, two_conversations, wrong_size_frame, frame_before_start, out_of_order_frame;
// tts: voices, synthesize; asr: transcribe; judge: answer, speech; llm: complete), then
// shutdown (the process group is gone within 2 s of Kill).
package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/duplexmpe/duplexmpe/internal/protocol"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/wire"
)

// Options tune the suite. The zero value works for a plugin whose config has defaults
// for every required field.
type Options struct {
	// Config holds the values a run file's config block would set: Configure gets them
	// with the schema's defaults filled in for every other field, as the host fills them
	// (see Config). Nil: the defaults alone.
	Config map[string]any
	// ConfigFor, when set, makes the config from the plugin's description instead of
	// Config (the harness checks a run file's config block against the schema); an error
	// fails the configure check.
	ConfigFor func(info sdk.Info) (map[string]any, error)
	// Frames per model conversation (default 10).
	Frames int
	// ModelInput gives input frame i of a conversation (default: quiet noise, every
	// sample within ±0.01). It must return f.FrameSize samples.
	ModelInput func(f sdk.Format, i int) []float32
	// TTSText is synthesised with the first voice (default "Hello, this is a test.").
	TTSText string
	// ASRClip is transcribed (default: 1 s of a 440 Hz tone at 16 kHz). ASRLanguage is
	// passed along (default empty: the plugin's default).
	ASRClip     sdk.Audio
	ASRLanguage string
	// AnswerQuery and SpeechQuery go to a judge (defaults: a small scenario).
	AnswerQuery *sdk.AnswerQuery
	SpeechQuery *sdk.SpeechQuery
	// Completion goes to an LLM (default: one short user message).
	Completion *sdk.CompletionRequest
	// CallTimeout bounds each call (default 2 min: CPU models are slow). StartTimeout
	// bounds the start and handshake (default 5 min: model plugins load weights).
	CallTimeout  time.Duration
	StartTimeout time.Duration
	// Logger receives the plugin's log (default: none).
	Logger hclog.Logger
}

// Target starts the plugin under test.
type Target interface {
	// Launch starts the plugin process and completes the handshake.
	Launch(ctx context.Context, logger hclog.Logger) (Plugin, error)
}

// Plugin is a started plugin as the suite drives it.
type Plugin interface {
	sdk.Plugin // Describe, Configure
	// Conn is the gRPC connection, for the checks that speak the raw protocol.
	Conn() (*grpc.ClientConn, error)
	// The kinds it serves, over gRPC; an error when it does not serve one.
	Model() (sdk.Model, error)
	TTS() (sdk.TTS, error)
	ASR() (sdk.ASR, error)
	Judge() (sdk.Judge, error)
	LLM() (sdk.LLM, error)
	// Exited reports whether the process has exited.
	Exited() bool
	// Kill stops the plugin. Survivors then lists what is left alive of its process
	// group; reattached reports a plugin the suite did not start and may not stop.
	Kill()
	Survivors() (pids []int, reattached bool, err error)
}

// T receives the outcome of each check: the part of testing.T the suite uses.
type T interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Error(args ...any)
	Fatalf(format string, args ...any)
	Fatal(args ...any)
	Skip(args ...any)
	Cleanup(f func())
	// Run runs f as the sub-check name and reports whether it passed.
	Run(name string, f func(T)) bool
}

// Run checks the plugin target starts. It fails t (through named sub-checks) on any
// deviation from the protocol, and always stops the plugin.
func Run(t T, target Target, opts Options) {
	t.Helper()
	opts = opts.withDefaults()
	s := &suite{target: target, opts: opts}
	defer func() {
		if s.client != nil {
			s.client.Kill()
		}
	}()

	if !t.Run("handshake", s.handshake) {
		return
	}
	defer t.Run("shutdown", s.shutdown)
	// A schema mistake fails describe but does not stop the suite; a failed call does.
	if !t.Run("describe", s.describe) && !s.described {
		return
	}
	t.Run("health", s.health)
	if !t.Run("configure", s.configure) {
		return
	}
	for _, kind := range s.info.Kinds {
		switch kind {
		case sdk.KindModel:
			t.Run("model", s.model)
		case sdk.KindTTS:
			t.Run("tts", s.tts)
		case sdk.KindASR:
			t.Run("asr", s.asr)
		case sdk.KindJudge:
			t.Run("judge", s.judge)
		case sdk.KindLLM:
			t.Run("llm", s.llm)
		}
	}
}

func (o Options) withDefaults() Options {
	if o.Frames <= 0 {
		o.Frames = 10
	}
	if o.ModelInput == nil {
		rng := rand.New(rand.NewPCG(1, 2))
		o.ModelInput = func(f sdk.Format, _ int) []float32 {
			x := make([]float32, f.FrameSize)
			for i := range x {
				x[i] = float32(0.01 * (2*rng.Float64() - 1))
			}
			return x
		}
	}
	if o.TTSText == "" {
		o.TTSText = "Hello, this is a test."
	}
	if o.ASRClip.Samples == nil {
		o.ASRClip = sdk.Audio{Rate: 16000, Samples: make([]float32, 16000)}
		for i := range o.ASRClip.Samples {
			o.ASRClip.Samples[i] = float32(0.3 * math.Sin(2*math.Pi*440*float64(i)/16000))
		}
	}
	if o.AnswerQuery == nil {
		o.AnswerQuery = &sdk.AnswerQuery{
			Context:    []sdk.DialogueTurn{{Speaker: "Ben", Text: "Aria, what is the capital of France?"}},
			Request:    "What is the capital of France?",
			GoldAnswer: "Paris",
			Response:   "The capital of France is Paris.",
		}
	}
	if o.SpeechQuery == nil {
		o.SpeechQuery = &sdk.SpeechQuery{
			Context:    []sdk.DialogueTurn{{Speaker: "Ben", Text: "I think we should leave at six."}},
			Transcript: "mm-hm",
		}
	}
	if o.Completion == nil {
		o.Completion = &sdk.CompletionRequest{
			Messages:  []sdk.ChatMessage{{Role: "user", Content: "Reply with the single word: ready"}},
			MaxTokens: 16,
		}
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 2 * time.Minute
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 5 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	return o
}

type suite struct {
	target Target
	opts   Options
	client Plugin
	info   sdk.Info
	// described: Describe answered (its content may still break rules).
	described bool
}

func (s *suite) ctx(t T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CallTimeout)
	t.Cleanup(cancel)
	return ctx
}

func (s *suite) handshake(t T) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.StartTimeout)
	defer cancel()
	c, err := s.target.Launch(ctx, s.opts.Logger)
	if err != nil {
		t.Fatalf("start and handshake: %v", err)
	}
	s.client = c
}

func (s *suite) describe(t T) {
	info, err := s.client.Describe(s.ctx(t))
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	s.info, s.described = info, true
	if info.Name == "" {
		t.Error("Describe: empty name")
	}
	if info.Version == "" {
		t.Error("Describe: empty version")
	}
	if info.ProtocolVersion != sdk.ProtocolVersion {
		t.Errorf("Describe: protocol version %d; want %d", info.ProtocolVersion, sdk.ProtocolVersion)
	}
	if len(info.Kinds) == 0 {
		t.Error("Describe: no kinds; a plugin serves at least one of model, tts, asr, judge, llm")
	}
	for _, k := range info.Kinds {
		if !knownKind(k) {
			t.Errorf("Describe: unknown kind %q; want one of model, tts, asr, judge, llm", k)
		}
	}
	for _, err := range CheckSchema(info.Config) {
		t.Errorf("Describe: config schema: %v", err)
	}
}

func (s *suite) health(t T) {
	conn, err := s.client.Conn()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := healthpb.NewHealthClient(conn).Check(s.ctx(t), &healthpb.HealthCheckRequest{Service: "plugin"})
	if err != nil {
		t.Fatalf("grpc.health.v1.Health/Check(service \"plugin\"): %v", err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health of service \"plugin\" is %v; want SERVING", resp.GetStatus())
	}
}

func (s *suite) configure(t T) {
	config := s.opts.Config
	if s.opts.ConfigFor != nil {
		var err error
		if config, err = s.opts.ConfigFor(s.info); err != nil {
			t.Fatalf("config: %v", err)
		}
	} else {
		var err error
		if config, err = Config(s.info.Config, config); err != nil {
			t.Fatalf("%v", err)
		}
	}
	if err := s.client.Configure(s.ctx(t), config); err != nil {
		t.Fatalf("Configure(%v): %v", config, err)
	}
}

func (s *suite) model(t T) {
	m, err := s.client.Model()
	if err != nil {
		t.Fatal(err)
	}
	var format sdk.Format
	t.Run("ready", func(t T) {
		conv, err := m.Start(s.ctx(t), sdk.ConversationStart{ID: "plugintest-ready", Seed: 1})
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		defer conv.Close()
		format = conv.Format()
		for _, r := range []struct {
			name string
			rate int
		}{{"input rate", format.InputRate}, {"output rate", format.OutputRate}} {
			if r.rate < 8000 || r.rate > 192000 {
				t.Errorf("%s %d Hz; want 8000..192000", r.name, r.rate)
			}
		}
		if format.FrameSize <= 0 || format.FrameSize > 10*format.InputRate {
			t.Errorf("frame size %d samples; want 1 .. 10 s of input", format.FrameSize)
		}
		if err := conv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if format.FrameSize <= 0 {
		return
	}
	t.Run("frames", func(t T) { s.conversation(t, m, "plugintest-frames") })
	t.Run("two_conversations", func(t T) {
		s.conversation(t, m, "plugintest-first")
		s.conversation(t, m, "plugintest-second")
	})
	t.Run("wrong_size_frame", func(t T) {
		s.rejects(t, format, func(stream protocolStream) error {
			return stream.Send(frameMsg(0, format.FrameSize-1))
		}, "a frame one sample short")
	})
	t.Run("frame_before_start", func(t T) {
		s.rejects(t, sdk.Format{}, func(stream protocolStream) error {
			return stream.Send(frameMsg(0, format.FrameSize))
		}, "a frame before start")
	})
	t.Run("out_of_order_frame", func(t T) {
		s.rejects(t, format, func(stream protocolStream) error {
			return stream.Send(frameMsg(1, format.FrameSize))
		}, "frame 1 as the first frame")
	})
}

// conversation runs Frames frames and checks one well-formed reply per frame.
func (s *suite) conversation(t T, m sdk.Model, id string) {
	ctx := s.ctx(t)
	conv, err := m.Start(ctx, sdk.ConversationStart{ID: id, Seed: 1})
	if err != nil {
		t.Fatalf("Start %s: %v", id, err)
	}
	defer conv.Close()
	f := conv.Format()
	for i := range s.opts.Frames {
		in := s.opts.ModelInput(f, i)
		out, err := conv.Step(ctx, in)
		if err != nil {
			t.Fatalf("%s: frame %d: %v", id, i, err)
		}
		if bad := firstBadSample(out.Samples); bad >= 0 {
			t.Fatalf("%s: frame %d: output sample %d is %v; want finite values in [-1, 1]", id, i, bad, out.Samples[bad])
		}
	}
	if err := conv.Close(); err != nil {
		t.Fatalf("%s: Close: %v", id, err)
	}
}

type protocolStream = interface {
	Send(*protocol.ModelInput) error
	Recv() (*protocol.ModelOutput, error)
	CloseSend() error
}

func frameMsg(index uint64, samples int) *protocol.ModelInput {
	return &protocol.ModelInput{Msg: &protocol.ModelInput_Frame{Frame: &protocol.InputFrame{
		Index: index, Pcm: wire.AppendPCM(nil, make([]float32, max(samples, 0))),
	}}}
}

// rejects speaks the raw protocol: open a stream, start it unless format is zero, send
// the bad input, and expect an InvalidArgument or FailedPrecondition status, with the
// plugin still healthy afterwards.
func (s *suite) rejects(t T, format sdk.Format, bad func(protocolStream) error, what string) {
	conn, err := s.client.Conn()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CallTimeout)
	defer cancel()
	stream, err := protocol.NewModelClient(conn).Converse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if format.FrameSize > 0 {
		if err := stream.Send(&protocol.ModelInput{Msg: &protocol.ModelInput_Start{Start: &protocol.ConversationStart{ConversationId: "plugintest-bad"}}}); err != nil {
			t.Fatal(err)
		}
		if out, err := stream.Recv(); err != nil || out.GetReady() == nil {
			t.Fatalf("start: reply %v, err %v; want ready", out, err)
		}
	}
	_ = bad(stream) // a send error surfaces as the status of Recv
	out, err := stream.Recv()
	if err == nil {
		t.Fatalf("%s was accepted (reply %v); want status InvalidArgument or FailedPrecondition", what, out)
	}
	if code := status.Code(err); code != codes.InvalidArgument && code != codes.FailedPrecondition {
		t.Fatalf("%s: status %v; want InvalidArgument or FailedPrecondition, with a message saying what was expected", what, err)
	}
	t.Logf("%s rejected: %v", what, status.Convert(err).Message())
	if s.client.Exited() {
		t.Fatalf("the plugin process exited after %s", what)
	}
	s.health(t)
}

func (s *suite) tts(t T) {
	tts, err := s.client.TTS()
	if err != nil {
		t.Fatal(err)
	}
	var voices []sdk.Voice
	t.Run("voices", func(t T) {
		voices, err = tts.Voices(s.ctx(t))
		if err != nil {
			t.Fatalf("Voices: %v", err)
		}
		if len(voices) == 0 {
			t.Fatal("Voices: none")
		}
		seen := map[string]bool{}
		for _, v := range voices {
			if v.ID == "" || seen[v.ID] {
				t.Errorf("voice id %q is empty or repeated", v.ID)
			}
			seen[v.ID] = true
		}
	})
	if len(voices) == 0 {
		return
	}
	t.Run("synthesize", func(t T) {
		v := voices[0]
		a, err := tts.Synthesize(s.ctx(t), s.opts.TTSText, v.ID)
		if err != nil {
			t.Fatalf("Synthesize(%q, %q): %v", s.opts.TTSText, v.ID, err)
		}
		if len(a.Samples) == 0 {
			t.Fatal("Synthesize: no samples")
		}
		if v.Rate > 0 && a.Rate != v.Rate {
			t.Errorf("Synthesize: rate %d Hz; voice %q declares %d Hz", a.Rate, v.ID, v.Rate)
		}
		if a.Rate < 8000 || a.Rate > 192000 {
			t.Errorf("Synthesize: rate %d Hz; want 8000..192000", a.Rate)
		}
		if bad := firstBadSample(a.Samples); bad >= 0 {
			t.Errorf("Synthesize: sample %d is %v; want finite values in [-1, 1]", bad, a.Samples[bad])
		}
	})
}

func (s *suite) asr(t T) {
	asr, err := s.client.ASR()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("transcribe", func(t T) {
		text, err := asr.Transcribe(s.ctx(t), s.opts.ASRClip, s.opts.ASRLanguage)
		if err != nil {
			t.Fatalf("Transcribe(%.2f s at %d Hz): %v", float64(len(s.opts.ASRClip.Samples))/float64(s.opts.ASRClip.Rate), s.opts.ASRClip.Rate, err)
		}
		t.Logf("transcript: %q", text)
	})
}

func (s *suite) judge(t T) {
	j, err := s.client.Judge()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("answer", func(t T) {
		v, err := j.JudgeAnswer(s.ctx(t), *s.opts.AnswerQuery)
		if err != nil {
			t.Fatalf("JudgeAnswer: %v", err)
		}
		if v.Label != sdk.LabelCorrect && v.Label != sdk.LabelIncorrect {
			t.Errorf("JudgeAnswer label %q; want %q or %q", v.Label, sdk.LabelCorrect, sdk.LabelIncorrect)
		}
	})
	t.Run("speech", func(t T) {
		v, err := j.ClassifySpeech(s.ctx(t), *s.opts.SpeechQuery)
		if err != nil {
			t.Fatalf("ClassifySpeech: %v", err)
		}
		if v.Label != sdk.LabelAcknowledgement && v.Label != sdk.LabelIntrusion {
			t.Errorf("ClassifySpeech label %q; want %q or %q", v.Label, sdk.LabelAcknowledgement, sdk.LabelIntrusion)
		}
	})
}

func (s *suite) llm(t T) {
	l, err := s.client.LLM()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("complete", func(t T) {
		c, err := l.Complete(s.ctx(t), *s.opts.Completion)
		if err != nil {
			t.Fatalf("Complete: %v", err)
		}
		if c.Content == "" {
			t.Error("Complete: empty content")
		}
	})
}

func (s *suite) shutdown(t T) {
	start := time.Now()
	s.client.Kill()
	for {
		pids, reattached, err := s.client.Survivors()
		if err != nil {
			t.Fatal(err)
		}
		if reattached {
			t.Skip("a reattached plugin is not ours to stop")
		}
		if len(pids) == 0 {
			t.Logf("stopped in %v", time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > 30*time.Second { // bounds a hang; generous for a loaded machine
			t.Fatalf("processes %v of the plugin's process group are alive 30 s after Kill", pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func firstBadSample(x []float32) int {
	for i, v := range x {
		if math.IsNaN(float64(v)) || v < -1 || v > 1 {
			return i
		}
	}
	return -1
}

func knownKind(k string) bool {
	return slices.Contains([]string{sdk.KindModel, sdk.KindTTS, sdk.KindASR, sdk.KindJudge, sdk.KindLLM}, k)
}

// Config is what the host sends to Configure when a run file's config block sets the
// values of given (Options.Config) and nothing else: given as the plugin decodes it
// (JSON: numbers are float64), with the schema's default filled in for every field it
// leaves out. As for a config block, a name the schema does not declare, a value of the
// wrong type or outside the allowed values, and a required field with neither a value
// nor a default are errors. core/config.CheckPluginConfig does this for the host; a test
// there keeps the two equal.
func Config(schema []sdk.ConfigField, given map[string]any) (map[string]any, error) {
	config := map[string]any{}
	if len(given) > 0 {
		b, err := json.Marshal(given)
		if err != nil {
			return nil, fmt.Errorf("Options.Config cannot be sent to the plugin: %v", err)
		}
		if err := json.Unmarshal(b, &config); err != nil {
			return nil, err
		}
	}
	var names []string
	declared := map[string]bool{}
	var errs []error
	for _, f := range schema {
		names = append(names, f.Name)
		declared[f.Name] = true
		v, set := config[f.Name]
		switch {
		case set:
			if err := CheckValue(f.Type, v); err != nil {
				errs = append(errs, fmt.Errorf("config field %q: %v", f.Name, err))
			} else if str, ok := v.(string); ok && len(f.Allowed) > 0 && !slices.Contains(f.Allowed, str) {
				errs = append(errs, fmt.Errorf("config field %q: %q is not one of %q", f.Name, str, f.Allowed))
			}
		case f.Default != nil:
			config[f.Name] = f.Default
		case f.Required:
			errs = append(errs, fmt.Errorf("config field %q is required and has no default: give a value in Options.Config", f.Name))
		}
	}
	var unknown []string
	for name := range config {
		if !declared[name] {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		errs = append(errs, fmt.Errorf("config field %q is not in the plugin's schema (it declares %q)", name, names))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return config, nil
}

// CheckSchema lists what is wrong with a config schema: empty or repeated names,
// unknown types, allowed values on a non-string field, defaults of the wrong type or
// outside the allowed values.
func CheckSchema(fields []sdk.ConfigField) []error {
	var errs []error
	seen := map[string]bool{}
	for _, f := range fields {
		if f.Name == "" {
			errs = append(errs, fmt.Errorf("a field has no name"))
		} else if seen[f.Name] {
			errs = append(errs, fmt.Errorf("field %q is declared twice", f.Name))
		}
		seen[f.Name] = true
		if !isKnownType(f.Type) {
			errs = append(errs, fmt.Errorf("field %q: unknown type %q; want one of string, number, bool, list(string), list(number), map(string), path", f.Name, f.Type))
			continue
		}
		if len(f.Allowed) > 0 && f.Type != sdk.TypeString {
			errs = append(errs, fmt.Errorf("field %q: allowed values are for string fields, not %s", f.Name, f.Type))
		}
		if f.Default == nil {
			continue
		}
		if err := CheckValue(f.Type, f.Default); err != nil {
			errs = append(errs, fmt.Errorf("field %q: default %v: %v", f.Name, f.Default, err))
		} else if len(f.Allowed) > 0 && !slices.Contains(f.Allowed, f.Default.(string)) {
			errs = append(errs, fmt.Errorf("field %q: default %q is not among the allowed values %q", f.Name, f.Default, f.Allowed))
		}
	}
	return errs
}

func isKnownType(t string) bool {
	switch t {
	case sdk.TypeString, sdk.TypeNumber, sdk.TypeBool, sdk.TypeListString, sdk.TypeListNumber, sdk.TypeMapString, sdk.TypePath:
		return true
	}
	return false
}

// CheckValue reports whether v, a decoded JSON value (numbers are float64), has config
// type typ.
func CheckValue(typ string, v any) error {
	switch typ {
	case sdk.TypeString, sdk.TypePath:
		if _, ok := v.(string); ok {
			return nil
		}
	case sdk.TypeNumber:
		if _, ok := v.(float64); ok {
			return nil
		}
	case sdk.TypeBool:
		if _, ok := v.(bool); ok {
			return nil
		}
	case sdk.TypeListString, sdk.TypeListNumber:
		list, ok := v.([]any)
		if !ok {
			break
		}
		elem := sdk.TypeString
		if typ == sdk.TypeListNumber {
			elem = sdk.TypeNumber
		}
		for i, e := range list {
			if err := CheckValue(elem, e); err != nil {
				return fmt.Errorf("element %d: %v", i, err)
			}
		}
		return nil
	case sdk.TypeMapString:
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		for k, e := range m {
			if _, ok := e.(string); !ok {
				return fmt.Errorf("key %q: want a string, got %s", k, jsonKind(e))
			}
		}
		return nil
	default:
		return fmt.Errorf("unknown type %q", typ)
	}
	return fmt.Errorf("want %s, got %s", typ, jsonKind(v))
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a bool"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a Go %T (not a decoded JSON value)", v)
}
