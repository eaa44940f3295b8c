package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/tests/reliability/damage"
)

// The vad command runs the real Silero model from the cache that `make deps` fills.
func runVAD(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	wd, _ := os.Getwd()
	code := Run(&State{
		Args: append([]string{"vad"}, args...), Env: map[string]string{},
		Stdout: &out, Stderr: &errb,
		Getwd: func() (string, error) { return wd, nil },
	})
	return code, out.String(), errb.String()
}

func vadJSON(t *testing.T, args ...string) VADResult {
	t.Helper()
	code, out, errs := runVAD(t, append(args, "--json")...)
	if code != ExitOK {
		t.Fatalf("vad %v: exit %d: %s", args, code, errs)
	}
	var r VADResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("vad %v: %v\n%s", args, err, out)
	}
	return r
}

const vadTestdata = "../vad/testdata/"

// The command prints what the vad package computes, for the settings on the command line.
func TestVADCommandEpisodes(t *testing.T) {
	file := vadTestdata + "conversation_16k.wav"
	pcm, err := audio.ReadWAV(file)
	if err != nil {
		t.Fatal(err)
	}
	d, err := vad.Open(vad.Options{Model: protocol.SileroV6})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s := protocol.VAD{Model: protocol.SileroV6, Threshold: 0.4, MinSpeech: 0.25, MergePause: 0.3, SpeechPad: 0.05}
	want, err := d.Episodes(pcm, s)
	if err != nil {
		t.Fatal(err)
	}
	r := vadJSON(t, file, "--model", "silero-v6", "--threshold", "0.4", "--min-speech", "250ms", "--merge-pause", "300ms", "--speech-pad", "50ms", "--probs")
	if r.Settings != s || r.Rate != 16000 || math.Abs(r.Duration-14.965) > 1e-9 {
		t.Errorf("settings %+v, rate %d, duration %g", r.Settings, r.Rate, r.Duration)
	}
	if len(r.Episodes) < 2 || len(r.Episodes) != len(want) {
		t.Fatalf("episodes %v, vad package %v", r.Episodes, want)
	}
	for i := range want {
		if r.Episodes[i] != want[i] {
			t.Errorf("episode %d: %v, vad package %v", i, r.Episodes[i], want[i])
		}
	}
	if n := (len(pcm.Samples) + vad.Window - 1) / vad.Window; len(r.Probs) != n {
		t.Errorf("%d probabilities, want one per window (%d)", len(r.Probs), n)
	}

	code, out, _ := runVAD(t, file)
	if code != ExitOK || !strings.Contains(out, "2 episodes, 7.680 s of speech") || !strings.Contains(out, "     0.928      7.488      6.560") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}

	// The same 16-bit samples as a run store keeps them (FLAC): the same episodes.
	flac := filepath.Join(t.TempDir(), "audible.flac")
	if err := audio.WriteFLAC(flac, pcm); err != nil {
		t.Fatal(err)
	}
	if f := vadJSON(t, flac, "--model", "silero-v6", "--threshold", "0.4", "--min-speech", "250ms", "--merge-pause", "300ms", "--speech-pad", "50ms"); !slices.Equal(f.Episodes, r.Episodes) || f.Rate != 16000 {
		t.Errorf("from FLAC: %d Hz, episodes %v; from the WAV %v", f.Rate, f.Episodes, r.Episodes)
	}
}

// At 24 kHz and 44.1 kHz the command finds the episodes it finds on the same audio
// converted to 16 kHz by sox, within one window (32 ms).
func TestVADCommandAnyRate(t *testing.T) {
	for _, c := range [][2]string{{"speech_24k.wav", "speech_24k_sox16k.wav"}, {"speech_44k.wav", "speech_44k_sox16k.wav"}} {
		for _, mp := range []string{"100ms"} { // short pauses: more boundaries to compare
			a := vadJSON(t, vadTestdata+c[0], "--merge-pause", mp)
			b := vadJSON(t, vadTestdata+c[1], "--merge-pause", mp)
			if len(a.Episodes) == 0 || len(a.Episodes) != len(b.Episodes) {
				t.Fatalf("%s merge %s: %v; sox 16 kHz: %v", c[0], mp, a.Episodes, b.Episodes)
			}
			for i := range a.Episodes {
				if math.Abs(a.Episodes[i].Start-b.Episodes[i].Start) > 0.032 || math.Abs(a.Episodes[i].End-b.Episodes[i].End) > 0.032 {
					t.Errorf("%s merge %s episode %d: %v; sox 16 kHz: %v", c[0], mp, i, a.Episodes[i], b.Episodes[i])
				}
			}
		}
	}
}

func TestVADCommandErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.wav")
	os.WriteFile(bad, []byte("RIFF\x04\x00\x00\x00WAVE"), 0o644)
	nan := filepath.Join(t.TempDir(), "nan.wav")
	x := make([]float64, 16000)
	x[100] = math.NaN()
	os.WriteFile(nan, damage.WAV(true, 32, 1, 16000, x), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, ExitUsage, "expects one WAV or FLAC file"},
		{[]string{"x.wav", "--threshold", "1.2"}, ExitUsage, "threshold = 1.2 must be between 0 and 1"},
		{[]string{"x.wav", "--model", "silero-v4"}, ExitUsage, `model = "silero-v4"`},
		{[]string{"x.wav", "--min-speech", "-1s"}, ExitUsage, "min_speech = -1 must not be negative"},
		{[]string{"x.wav", "--merge-pause", "soon"}, ExitUsage, "invalid argument"},
		{[]string{"missing.wav"}, ExitFailed, "missing.wav: no such file"},
		{[]string{bad}, ExitFailed, "bad.wav: bad WAV: no fmt chunk"},
		// Before, NaN samples went into Silero and came out as nonsense episodes.
		{[]string{nan}, ExitFailed, "nan.wav: bad WAV: sample 100 (at 0.006 s) is NaN, not a finite number"},
	} {
		code, _, errs := runVAD(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("vad %v: exit %d, stderr %q; want exit %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}
