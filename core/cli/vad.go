package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/core/vad"
)

// VADResult is what `duplexmpe vad --json` prints.
type VADResult struct {
	File     string             `json:"file"`
	Rate     int                `json:"rate"`
	Duration float64            `json:"duration"`
	Settings protocol.VAD       `json:"settings"`
	Episodes []timeline.Episode `json:"episodes"`
	// Probs has one speech probability per 512-sample window of the 16 kHz audio (32 ms).
	Probs []float32 `json:"probs,omitempty"`
}

func newVADCmd(st *State) *cobra.Command {
	def := protocol.DefaultVAD()
	var (
		s                              = def
		minSpeech, mergePause, padding time.Duration
		probs, asJSON                  bool
	)
	cmd := &cobra.Command{
		Use:   "vad FILE",
		Short: "Find the speech episodes in a WAV or FLAC file with Silero VAD (protocol section 4)",
		Long: `Runs Silero VAD on FILE, a WAV or FLAC file such as a run store's items/<id>/audible.flac
(any sample rate, resampled to 16 kHz; several channels are averaged) and prints the speech episodes in seconds, with the protocol's rules: speech
starts at probability >= threshold, ends after merge-pause below threshold - 0.15,
episodes shorter than min-speech are dropped.

The ONNX Runtime library and the models come from .cache/vad/ (make deps), or from
$` + vad.EnvLibrary + ` and $` + vad.EnvModel + ` (a model file or a folder with silero_vad_v5.onnx and
silero_vad_v6.onnx).`,
		Example: examples(
			"duplexmpe vad runs/bench/items/ID/audible.flac",
			"duplexmpe vad --probs answer.wav",
		),
		Args: exactArgs(1, "one WAV or FLAC file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s.MinSpeech, s.MergePause, s.SpeechPad = minSpeech.Seconds(), mergePause.Seconds(), padding.Seconds()
			if err := s.Validate(); err != nil {
				return UsageErrorf("%v", err)
			}
			path := args[0]
			if !filepath.IsAbs(path) && st.Getwd != nil {
				if wd, err := st.Getwd(); err == nil {
					path = filepath.Join(wd, path)
				}
			}
			pcm, err := audio.ReadFile(path)
			if err != nil {
				return err
			}
			d, err := vad.Open(vad.Options{Model: s.Model, LibraryPath: st.Getenv(vad.EnvLibrary), ModelPath: st.Getenv(vad.EnvModel)})
			if err != nil {
				return err
			}
			defer d.Close()
			p16 := audio.Resample(pcm, vad.SampleRate)
			pr, err := d.Probabilities(p16.Samples)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			res := VADResult{
				File: args[0], Rate: pcm.Rate, Duration: pcm.Duration(), Settings: s,
				Episodes: vad.Segment(pr, len(p16.Samples), s),
			}
			if probs {
				res.Probs = pr
			}
			if asJSON {
				return writeJSON(st.Stdout, res)
			}
			printVAD(st, res)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&s.Model, "model", def.Model, "silero-v5 or silero-v6")
	f.Float64Var(&s.Threshold, "threshold", def.Threshold, "speech starts at probability >= threshold")
	f.Float64Var(&s.NegThreshold, "neg-threshold", 0, "speech may end below this probability (0: threshold - 0.15)")
	f.DurationVar(&minSpeech, "min-speech", secs(def.MinSpeech), "drop episodes shorter than this")
	f.DurationVar(&mergePause, "merge-pause", secs(def.MergePause), "merge episodes separated by shorter pauses")
	f.DurationVar(&padding, "speech-pad", secs(def.SpeechPad), "widen episodes by this much on each side")
	f.BoolVar(&probs, "probs", false, "also print the probability of every 32 ms window")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func printVAD(st *State, r VADResult) {
	s := r.Settings
	var speech float64
	for _, e := range r.Episodes {
		speech += e.Duration()
	}
	fmt.Fprintf(st.Stdout, "%s: %.3f s at %d Hz\n", r.File, r.Duration, r.Rate)
	fmt.Fprintf(st.Stdout, "%s, threshold %g (end below %g), min_speech %v, merge_pause %v, speech_pad %v\n",
		s.Model, s.Threshold, s.EffectiveNegThreshold(), secs(s.MinSpeech), secs(s.MergePause), secs(s.SpeechPad))
	if r.Probs != nil {
		fmt.Fprintf(st.Stdout, "\nwindow start (s)  probability\n")
		for i, p := range r.Probs {
			fmt.Fprintf(st.Stdout, "%16.3f  %.4f\n", float64(i*vad.Window)/vad.SampleRate, p)
		}
	}
	fmt.Fprintf(st.Stdout, "\n%d episodes, %.3f s of speech\n", len(r.Episodes), speech)
	if len(r.Episodes) > 0 {
		fmt.Fprintf(st.Stdout, "%10s %10s %10s\n", "start (s)", "end (s)", "length (s)")
	}
	for _, e := range r.Episodes {
		fmt.Fprintf(st.Stdout, "%10.3f %10.3f %10.3f\n", e.Start, e.End, e.Duration())
	}
}
