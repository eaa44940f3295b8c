// Command faulty is a model plugin that misbehaves on purpose, for the reliability tests:
// it is silent until the fault its config names strikes, at frame at_frame of the
// conversations it names (all when none are named). The host must keep every fault in
// its own conversation.
//
//	panic       Step panics (the SDK turns it into an error for that call)
//	crash       the process exits in the middle of Step
//	hang        Step never returns (the rest of the process still works)
//	wedge       Step never returns and holds a lock every later Start and Step wait for
//	hang_start  Start never returns
//	hang_close  Close never returns
//	random_error  Step returns an error whose text differs every time (a random temporary
//	            path in it, as a Python exception's)
//	garbage     Step replies with integer-scaled samples (3000.0)
//	nan         Step replies with a NaN sample
//	flood       flood_frames Steps from at_frame on write 1 MiB to stdout each
//	text        every Step from at_frame on replies with text_bytes bytes of text
//	asr_crash   as the ASR (it is one, and a judge, for the scoring tests), Transcribe
//	            exits the process once: when crash_file does not exist yet (it creates it)
//	asr_hang    Transcribe never returns, once: when crash_file does not exist yet
//	judge_hang  JudgeAnswer and ClassifySpeech never return, once, as asr_hang
//	setsid      Start spawns a child in a session of its own (setsid) that holds the
//	            plugin's stdout and stderr and sleeps; its pid goes to pid_file; with
//	            clear_env the child starts with an empty environment
//
// Configure writes the TMPDIR the plugin was given to tmpdir_file, when set.
//
// A start delay (a model loading its weights) is set with the environment variable
// FAULTY_START_DELAY, in seconds, before the handshake.
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/duplexmpe/duplexmpe/sdk"
)

var faults = []string{"none", "panic", "crash", "hang", "wedge", "hang_start", "hang_close", "garbage", "nan", "flood", "text", "setsid", "asr_crash", "asr_hang", "judge_hang", "random_error"}

const (
	rate      = 16000
	frameSize = 1280 // 80 ms
)

type faulty struct {
	mu        sync.Mutex
	fault     string
	at        int
	flood     int
	text      int
	pidFile   string
	crashFile string
	clearEnv  bool
	convs     []string
	wedged    sync.Mutex // held forever once a wedge strikes
}

func (f *faulty) Describe(context.Context) (sdk.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sdk.Info{
		Name: "faulty", Version: "1.0.0",
		// One conversation at a time (no model.concurrency): a fault that kills the
		// process would also fail the conversations playing beside it.
		Description: "Silent until its configured fault strikes; for the reliability tests.",
		Config: []sdk.ConfigField{
			{Name: "fault", Type: sdk.TypeString, Default: "none", Allowed: faults, Description: "what goes wrong"},
			{Name: "at_frame", Type: sdk.TypeNumber, Default: 3.0, Description: "the frame it goes wrong at"},
			{Name: "conversations", Type: sdk.TypeListString, Default: []any{}, Description: "conversation ids it goes wrong in; empty: all"},
			{Name: "flood_frames", Type: sdk.TypeNumber, Default: 50.0, Description: "how many frames a flood lasts"},
			{Name: "text_bytes", Type: sdk.TypeNumber, Default: float64(1 << 20), Description: "how much text a text fault sends per frame"},
			{Name: "crash_file", Type: sdk.TypePath, Default: "", Description: "an asr_crash, asr_hang or judge_hang fault strikes once, creating this file"},
			{Name: "pid_file", Type: sdk.TypePath, Default: "", Description: "where a setsid fault writes its child's pid"},
			{Name: "clear_env", Type: sdk.TypeBool, Default: false, Description: "a setsid fault's child starts with an empty environment"},
			{Name: "tmpdir_file", Type: sdk.TypePath, Default: "", Description: "where Configure writes the plugin's TMPDIR"},
			{Name: "touch", Type: sdk.TypePath, Default: "", Description: "a file Configure creates (to see where a relative path resolves)"},
		},
		Identity: map[string]string{"fault": f.fault, "at_frame": strconv.Itoa(f.at), "conversations": strings.Join(f.convs, ",")},
	}, nil
}

func (f *faulty) Configure(_ context.Context, cfg map[string]any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault, f.at, f.flood, f.convs, f.text, f.pidFile = "none", 3, 50, nil, 1<<20, ""
	if v, ok := cfg["text_bytes"].(float64); ok {
		f.text = int(v)
	}
	f.crashFile = ""
	if v, ok := cfg["crash_file"].(string); ok {
		f.crashFile = v
	}
	if v, ok := cfg["pid_file"].(string); ok {
		f.pidFile = v
	}
	f.clearEnv, _ = cfg["clear_env"].(bool)
	if v, ok := cfg["tmpdir_file"].(string); ok && v != "" {
		if err := os.WriteFile(v, []byte(os.Getenv("TMPDIR")), 0o644); err != nil {
			return err
		}
	}
	if v, ok := cfg["fault"].(string); ok {
		if !slices.Contains(faults, v) {
			return fmt.Errorf("fault %q: want one of %s", v, strings.Join(faults, ", "))
		}
		f.fault = v
	}
	if v, ok := cfg["at_frame"].(float64); ok {
		f.at = int(v)
	}
	if v, ok := cfg["flood_frames"].(float64); ok {
		f.flood = int(v)
	}
	if v, ok := cfg["touch"].(string); ok && v != "" {
		if err := os.WriteFile(v, []byte("faulty\n"), 0o644); err != nil {
			return err
		}
	}
	if v, ok := cfg["conversations"].([]any); ok {
		for _, c := range v {
			s, _ := c.(string)
			f.convs = append(f.convs, s)
		}
	}
	return nil
}

func (f *faulty) hits(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.convs) > 0 && !slices.Contains(f.convs, id) {
		return "none"
	}
	return f.fault
}

func (f *faulty) Start(_ context.Context, req sdk.ConversationStart) (sdk.Conversation, error) {
	f.wedged.Lock() // blocks forever after a wedge
	f.wedged.Unlock()
	fault := f.hits(req.ID)
	if fault == "hang_start" {
		select {}
	}
	f.mu.Lock()
	at, flood, text, pidFile, clearEnv := f.at, f.flood, f.text, f.pidFile, f.clearEnv
	f.mu.Unlock()
	if fault == "setsid" {
		// A child in a session of its own: out of the plugin's process group, and it
		// holds the plugin's stdout and stderr open.
		child := exec.Command(os.Args[0], "child")
		child.Env = append(os.Environ(), "FAULTY_CHILD=1")
		if clearEnv {
			child.Env = []string{} // no token, no TMPDIR: found only as what the plugin had
		}
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := child.Start(); err != nil {
			return nil, err
		}
		if pidFile != "" {
			if err := os.WriteFile(pidFile, []byte(strconv.Itoa(child.Process.Pid)+"\n"), 0o644); err != nil {
				return nil, err
			}
		}
	}
	return &conversation{f: f, fault: fault, at: at, flood: flood, text: text}, nil
}

type conversation struct {
	f            *faulty
	fault        string
	at, n, flood int
	text         int
}

func (c *conversation) Format() sdk.Format {
	return sdk.Format{InputRate: rate, OutputRate: rate, FrameSize: frameSize}
}

var megabyte = strings.Repeat(strings.Repeat("flood ", 16)+"\n", 1<<20/97)

func (c *conversation) Step(context.Context, []float32) (sdk.Output, error) {
	c.f.wedged.Lock()
	c.f.wedged.Unlock()
	n := c.n
	c.n++
	if c.fault == "flood" && n >= c.at && n < c.at+c.flood {
		os.Stdout.WriteString(megabyte)
	}
	if c.fault == "text" && n >= c.at {
		return sdk.Output{Text: strings.Repeat("t", c.text)}, nil
	}
	if n != c.at {
		return sdk.Output{}, nil
	}
	out := make([]float32, frameSize)
	switch c.fault {
	case "panic":
		panic(fmt.Sprintf("faulty: panic at frame %d", n))
	case "crash":
		fmt.Fprintf(os.Stderr, "faulty: exiting at frame %d\n", n)
		os.Exit(3)
	case "hang":
		select {}
	case "random_error":
		var b [8]byte
		_, _ = rand.Read(b[:])
		return sdk.Output{}, fmt.Errorf("FileNotFoundError: /tmp/tmp%x/state.pt", b)
	case "wedge":
		c.f.wedged.Lock()
		select {}
	case "garbage":
		for i := range out {
			out[i] = 3000
		}
		return sdk.Output{Samples: out}, nil
	case "nan":
		out[7] = float32(math.NaN())
		return sdk.Output{Samples: out}, nil
	}
	return sdk.Output{}, nil
}

func (c *conversation) Close() error {
	if c.fault == "hang_close" {
		select {}
	}
	return nil
}

// Transcribe makes the plugin an ASR: it hears "hello" in every clip, and an asr_crash
// fault exits the process once.
func (f *faulty) Transcribe(context.Context, sdk.Audio, string) (string, error) {
	f.mu.Lock()
	fault, file := f.fault, f.crashFile
	f.mu.Unlock()
	if (fault == "asr_crash" || fault == "asr_hang") && f.once(file) {
		if fault == "asr_hang" {
			fmt.Fprintln(os.Stderr, "faulty: the ASR hangs in Transcribe")
			select {}
		}
		fmt.Fprintln(os.Stderr, "faulty: the ASR exits in Transcribe")
		os.Exit(3)
	}
	return "hello", nil
}

// once reports whether a once-only fault strikes now: file does not exist yet (it is
// created, so that a restarted process does not strike again).
func (f *faulty) once(file string) bool {
	if file == "" {
		return false
	}
	if _, err := os.Stat(file); err == nil {
		return false
	}
	_ = os.WriteFile(file, []byte("struck\n"), 0o644)
	return true
}

// judgeHang hangs a judge call forever, once, under the judge_hang fault.
func (f *faulty) judgeHang() {
	f.mu.Lock()
	fault, file := f.fault, f.crashFile
	f.mu.Unlock()
	if fault == "judge_hang" && f.once(file) {
		fmt.Fprintln(os.Stderr, "faulty: the judge hangs")
		select {}
	}
}

// JudgeAnswer and ClassifySpeech make it a judge that finds every answer wrong and
// every speech an intrusion.
func (f *faulty) JudgeAnswer(context.Context, sdk.AnswerQuery) (sdk.Verdict, error) {
	f.judgeHang()
	return sdk.Verdict{Label: sdk.LabelIncorrect, Parsed: true}, nil
}

func (f *faulty) ClassifySpeech(context.Context, sdk.SpeechQuery) (sdk.Verdict, error) {
	f.judgeHang()
	return sdk.Verdict{Label: sdk.LabelIntrusion, Parsed: true}, nil
}

func main() {
	if os.Getenv("FAULTY_CHILD") == "1" || (len(os.Args) > 1 && os.Args[1] == "child") {
		time.Sleep(time.Hour) // a setsid fault's child: it outlives the plugin unless the host ends it
		return
	}
	if d, err := strconv.ParseFloat(os.Getenv("FAULTY_START_DELAY"), 64); err == nil && d > 0 {
		time.Sleep(time.Duration(d * float64(time.Second)))
	}
	sdk.Serve(&faulty{fault: "none", at: 3})
}
