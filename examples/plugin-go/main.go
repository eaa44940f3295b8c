// Command plugin-go is a complete, small duplexmpe model plugin that answers with
// speech: it listens for loud input (frame RMS over a threshold), and when the room has
// been quiet for a pause after it, it says one sentence (spoken by flite when it is
// configured), stopping as soon as someone talks over it. It is not a model, but it
// scores like one: Silero hears its answers as speech, so they count as responses,
// intrusions and yields. It is the skeleton to copy for a Go model adapter; see
// README.md.
package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/sdk"
)

const (
	rate      = 24000
	frameSize = 1920 // 80 ms at 24 kHz, like Moshi
	voice     = "slt"
)

const defaultAnswer = "I heard you. I am an example plugin, not a real model."

// speaker is the plugin. Configure sets its fields; every conversation reads them.
type speaker struct {
	mu        sync.Mutex // Configure may run while a conversation starts
	threshold float64    // frame RMS that counts as "loud"
	pause     float64    // seconds of quiet after loud input before answering
	answer    string
	speech    []float32 // the answer spoken, at rate
	flite     string    // flite's version line, part of the identity
}

func (s *speaker) Describe(context.Context) (sdk.Info, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := sdk.Info{
		Name:        "example-speaker",
		Version:     "0.2.0",
		Description: "Says one sentence (flite) when the room goes quiet after speech, and stops when talked over. An example, not a model.",
		// Each conversation keeps its own state and only reads the shared answer, so it
		// can play several at once; a model holding one GPU state would say 1.
		Capabilities: []string{sdk.CapConcurrency + "4"},
		Config: []sdk.ConfigField{
			{Name: "threshold", Type: sdk.TypeNumber, Default: 0.05, Description: "frame RMS (0..1) above which the input counts as loud"},
			{Name: "pause_s", Type: sdk.TypeNumber, Default: 1.0, Description: "seconds of quiet after loud input before it answers"},
			{Name: "answer", Type: sdk.TypeString, Default: defaultAnswer, Description: "the sentence it says"},
		},
	}
	if s.speech != nil {
		info.Identity = map[string]string{
			"threshold": fmt.Sprint(s.threshold), "pause_s": fmt.Sprint(s.pause), "answer": s.answer,
			"voice": "flite " + voice, "flite": s.flite,
		}
	}
	return info, nil
}

func (s *speaker) Configure(ctx context.Context, config map[string]any) error {
	num := func(name string, def float64, ok func(float64) bool, want string) (float64, error) {
		v, present := config[name]
		if !present {
			return def, nil
		}
		f, isNum := v.(float64)
		if !isNum || !ok(f) {
			return 0, fmt.Errorf("config %s = %v: want %s", name, v, want)
		}
		return f, nil
	}
	// Parse everything first: a rejected config leaves the previous one in place.
	threshold, err := num("threshold", 0.05, func(f float64) bool { return f >= 0 && f <= 1 }, "a number in [0, 1]")
	if err != nil {
		return err
	}
	pause, err := num("pause_s", 1.0, func(f float64) bool { return f > 0 && f <= 10 }, "a duration in (0, 10] seconds")
	if err != nil {
		return err
	}
	answer := defaultAnswer
	if v, ok := config["answer"]; ok {
		a, isStr := v.(string)
		if !isStr || strings.TrimSpace(a) == "" {
			return fmt.Errorf("config answer = %v: want a sentence to say", v)
		}
		answer = a
	}
	speech, version, err := say(ctx, answer)
	if err != nil {
		// Not a bad value: a plain error would say so (InvalidArgument), and the host
		// would report it as the run file's fault.
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	s.mu.Lock()
	s.threshold, s.pause, s.answer, s.speech, s.flite = threshold, pause, answer, speech, version
	s.mu.Unlock()
	return nil
}

// say speaks text with Debian's flite and returns it at the plugin's rate. A real model
// would generate its speech; the point here is that the output is speech, which the
// harness's VAD detects (a sine tone is not).
func say(ctx context.Context, text string) ([]float32, string, error) {
	path, err := exec.LookPath("flite")
	if err != nil {
		return nil, "", fmt.Errorf("flite is not installed (%v): install the Debian package flite (the repository's scripts/install-apt.sh does)", err)
	}
	dir, err := os.MkdirTemp("", "example-speaker-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	wav := filepath.Join(dir, "answer.wav")
	if out, err := exec.CommandContext(ctx, path, "-voice", voice, "-t", text, "-o", wav).CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("flite could not say the answer: %v: %s", err, out)
	}
	pcm, err := audio.ReadWAV(wav)
	if err != nil {
		return nil, "", err
	}
	pcm = audio.Resample(pcm, rate)
	// flite --version prints its version and exits 1; the output is what matters.
	out, _ := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	version := "unknown"
	for _, line := range strings.Split(string(out), "\n") {
		if _, v, ok := strings.Cut(line, "version:"); ok {
			version = strings.TrimSpace(v)
			break
		}
	}
	return pcm.Samples, version, nil
}

func (s *speaker) Start(ctx context.Context, _ sdk.ConversationStart) (sdk.Conversation, error) {
	s.mu.Lock()
	configured := s.speech != nil
	s.mu.Unlock()
	if !configured { // a host that reattaches may not configure: use the defaults
		if err := s.Configure(ctx, map[string]any{}); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &conversation{threshold: s.threshold, pauseFrames: int(math.Ceil(s.pause * rate / frameSize)), speech: s.speech, pos: -1}, nil
}

// conversation is one conversation's state: what it has heard, and where it is in its
// answer.
type conversation struct {
	threshold   float64
	pauseFrames int
	speech      []float32

	heard bool // loud input since the last answer
	quiet int  // quiet frames since the last loud one
	pos   int  // position in speech while answering; -1 when not
}

func (c *conversation) Format() sdk.Format {
	return sdk.Format{InputRate: rate, OutputRate: rate, FrameSize: frameSize}
}

func (c *conversation) Step(_ context.Context, frame []float32) (sdk.Output, error) {
	loud := rms(frame) > c.threshold
	if loud {
		c.heard, c.quiet = true, 0
		if c.pos >= 0 {
			// Talked over: stop at once, dropping whatever is queued for playback.
			c.pos = -1
			return sdk.Output{Flush: true}, nil
		}
		return sdk.Output{}, nil
	}
	c.quiet++
	if c.pos < 0 && c.heard && c.quiet >= c.pauseFrames {
		c.heard, c.pos = false, 0
	}
	if c.pos < 0 {
		return sdk.Output{}, nil
	}
	// Real time: at most one frame of output per frame.
	n := min(frameSize, len(c.speech)-c.pos)
	out := sdk.Output{Samples: c.speech[c.pos : c.pos+n]}
	if c.pos == 0 {
		out.Text = "answer"
	}
	c.pos += n
	if c.pos >= len(c.speech) {
		c.pos = -1
	}
	return out, nil
}

func (c *conversation) Close() error { return nil }

func rms(x []float32) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(x)))
}

func main() { sdk.Serve(&speaker{}) }
