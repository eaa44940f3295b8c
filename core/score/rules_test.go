package score

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/sdk"
)

var updateRules = flag.Bool("update-rules", false, "rewrite testdata/rules.golden with RulesVersion and the current digest")

const rulesGolden = "testdata/rules.golden"

// The scoring rules do not change without RulesVersion: the verdicts of Judge over a
// fixed corpus (seeded random conversations with every kind of turn, speech placed
// around every boundary, under two sets of protocol values) hash to the digest recorded
// with the version in testdata/rules.golden.
func TestRulesVersion(t *testing.T) {
	digest := rulesDigest(t)
	version, golden, err := readRulesGolden()
	if err != nil && !(*updateRules && errors.Is(err, os.ErrNotExist)) {
		t.Fatalf("%s: %v", rulesGolden, err)
	}
	regenerate := "make score-rules (go test ./core/score -run TestRulesVersion -update-rules)"
	if *updateRules {
		if digest != golden && version == RulesVersion {
			t.Fatalf("the verdicts changed but RulesVersion is still %d: bump protocol.ScoringRevision in core/protocol/protocol.go first (score.RulesVersion follows it), then run %s", RulesVersion, regenerate)
		}
		text := fmt.Sprintf("# core/score: RulesVersion and the digest of the verdicts TestRulesVersion computes.\n# Regenerate with: %s\nversion %d\n%s\n", regenerate, RulesVersion, digest)
		if err := os.WriteFile(rulesGolden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	switch {
	case digest != golden && version == RulesVersion:
		t.Fatalf("the scoring rules changed (the verdicts over the fixed corpus hash to %s, not %s) but RulesVersion is still %d, "+
			"so stored verdicts would be reused under the new rules: set protocol.ScoringRevision = %d in core/protocol/protocol.go (score.RulesVersion follows it) and say what changed in docs/protocol.md section 10, then run %s",
			digest, golden, RulesVersion, RulesVersion+1, regenerate)
	case version != RulesVersion:
		t.Fatalf("RulesVersion is %d but %s records %d: run %s", RulesVersion, rulesGolden, version, regenerate)
	}
}

func readRulesGolden() (int, string, error) {
	f, err := os.Open(rulesGolden)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	version, digest := -1, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "version "):
			version, err = strconv.Atoi(strings.TrimPrefix(line, "version "))
			if err != nil {
				return 0, "", fmt.Errorf("bad version line %q", line)
			}
		case strings.HasPrefix(line, "sha256:"):
			digest = line
		default:
			return 0, "", fmt.Errorf("unexpected line %q", line)
		}
	}
	if version < 0 || digest == "" {
		return 0, "", errors.New("no version or no digest")
	}
	return version, digest, sc.Err()
}

// corpusRate is the audible waveform's sample rate in the corpus: low, so that the
// corpus is small, and enough for Cut to place every span to 10 ms.
const corpusRate = 100

// rulesDigest scores the corpus and hashes the verdicts' JSON.
func rulesDigest(t *testing.T) string {
	t.Helper()
	judge := corpusJudge{}
	h := sha256.New()
	variant := protocol.Defaults()
	variant.TurnGap, variant.TOnsetWindow, variant.YieldDeadline, variant.MinEligible = 0.8, 3, 1.5, 1
	for pi, p := range []protocol.Params{protocol.Defaults(), variant} {
		rng := rand.New(rand.NewPCG(20260501, uint64(pi)))
		for i := range 150 {
			item, wave := corpusItem(rng, i)
			s, err := Judge(context.Background(), item, wave, corpusASR{}, judge, p)
			if err != nil && !isServiceError(err) {
				t.Fatalf("corpus item %d: %v", i, err)
			}
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
			h.Write([]byte{'\n'})
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// isServiceError: a failed ASR or judge call may end Judge with an error that is not a
// verdict (it leaves the item unscored); its verdicts so far are still hashed.
func isServiceError(err error) bool {
	return strings.Contains(err.Error(), "transcription failed") || strings.Contains(err.Error(), "the asr failed") || strings.Contains(err.Error(), "the judge failed")
}

// corpusItem is one conversation: a preamble, 4 to 9 turns (one T; N1, N2, N3 at random,
// some to a device or a human; an N4 question and resolution now and then) separated by
// gaps near turn_gap, and model speech episodes placed at random, many of them a hair
// before or after a boundary. The waveform holds a distinct level per episode, so the
// corpus ASR hears each one as something else.
func corpusItem(rng *rand.Rand, i int) (Item, audio.PCM) {
	tl := timeline.Timeline{PreambleStart: 0, PreambleEnd: 2}
	at := 2 + rng.Float64()
	n := 4 + rng.IntN(6)
	tAt := rng.IntN(n)
	labels := []string{protocol.LabelN1, protocol.LabelN2, protocol.LabelN3}
	gaps := []float64{0.5, 0.45, 0.55, 3, 5, 0.8}
	var bounds []float64
	for k := 0; k < n; k++ {
		turn := timeline.Turn{Index: len(tl.Turns), Speaker: string(rune('A' + k%4)), Text: fmt.Sprintf("turn %d of item %d", k, i)}
		switch {
		case k == tAt:
			turn.Label, turn.Text = protocol.LabelT, "Aria, what time is it in Lisbon?"
		case rng.IntN(5) == 0:
			q := turn
			q.Label, q.Text, q.Start, q.End = protocol.LabelN4Q, "Aria, how far is the station?", at, at+1+2*rng.Float64()
			tl.Turns = append(tl.Turns, q)
			bounds = append(bounds, q.Start, q.End)
			at = q.End + []float64{3, 2.9, 3.1}[rng.IntN(3)]
			turn.Index, turn.Label, turn.Text = len(tl.Turns), protocol.LabelN4R, "Never mind, it is two stops."
		default:
			turn.Label = labels[rng.IntN(len(labels))]
			if rng.IntN(4) == 0 {
				turn.Addressee = []string{protocol.AddresseeDevice, protocol.AddresseeHuman}[rng.IntN(2)]
			}
		}
		turn.Start, turn.End = at, at+0.8+3*rng.Float64()
		tl.Turns = append(tl.Turns, turn)
		bounds = append(bounds, turn.Start, turn.End)
		at = turn.End + gaps[rng.IntN(len(gaps))]
	}
	tl.Duration = at + 1
	var eps []timeline.Episode
	for k := rng.IntN(7); k > 0; k-- {
		var start float64
		if rng.IntN(2) == 0 {
			start = bounds[rng.IntN(len(bounds))] + []float64{-0.01, 0, 0.01, 0.3, 4.9, 5.0, 5.01}[rng.IntN(7)]
		} else {
			start = tl.Duration * rng.Float64()
		}
		end := start + []float64{0.05, 0.3, 1, 2.5, 6}[rng.IntN(5)]
		start, end = max(start, 0), min(end, tl.Duration)
		if end > start {
			eps = append(eps, timeline.Episode{Start: start, End: end})
		}
	}
	wave := audio.PCM{Rate: corpusRate, Samples: make([]float32, int(tl.Duration*corpusRate)+1)}
	for k, e := range eps {
		for s := int(e.Start * corpusRate); s < int(e.End*corpusRate) && s < len(wave.Samples); s++ {
			wave.Samples[s] = float32(k+1) / 8
		}
	}
	item := Item{Model: "m", Condition: []string{protocol.Explicit, protocol.Implicit}[i%2], PairID: fmt.Sprintf("p%d", i/2),
		ScenarioID: fmt.Sprintf("s%d", i), TPosition: "middle", GoldAnswer: "nine", Timeline: tl, Episodes: eps}
	return item, wave
}

// corpusASR hears a clip as one of a few phrases, chosen by its samples: the gold answer,
// a backchannel, something else, nothing, or a failed call.
type corpusASR struct{}

func (corpusASR) Transcribe(_ context.Context, clip sdk.Audio, _ string) (string, error) {
	var sum float64
	for _, v := range clip.Samples {
		sum += float64(v)
	}
	switch int(sum*8+float64(len(clip.Samples))) % 6 {
	case 0:
		return "It is nine o'clock.", nil
	case 1:
		return "mm-hmm", nil
	case 2:
		return "I would rather talk about the weather.", nil
	case 3:
		return "   ", nil
	case 4:
		return "", errors.New("the corpus ASR refuses this clip")
	default:
		return "okay", nil
	}
}

// corpusJudge decides by fixed rules of its own, so that the digest depends on this
// package alone (not on a judge plugin's lexicon): an answer naming "nine" is correct,
// "okay" is a reply it cannot parse; "mm-hmm" is an acknowledgement, "okay" a label the
// protocol does not know.
type corpusJudge struct{}

func (corpusJudge) JudgeAnswer(_ context.Context, q sdk.AnswerQuery) (sdk.Verdict, error) {
	switch {
	case strings.Contains(q.Response, "nine"):
		return sdk.Verdict{Label: sdk.LabelCorrect, Parsed: true, Raw: "correct"}, nil
	case q.Response == "okay":
		return sdk.Verdict{Raw: "I think it might be"}, nil
	}
	return sdk.Verdict{Label: sdk.LabelIncorrect, Parsed: true, Raw: "incorrect", Rationale: "no nine in " + q.Response}, nil
}

func (corpusJudge) ClassifySpeech(_ context.Context, q sdk.SpeechQuery) (sdk.Verdict, error) {
	switch q.Transcript {
	case "mm-hmm":
		return sdk.Verdict{Label: sdk.LabelAcknowledgement, Parsed: true}, nil
	case "okay":
		return sdk.Verdict{Label: "maybe", Parsed: true}, nil
	}
	return sdk.Verdict{Label: sdk.LabelIntrusion, Parsed: true, Rationale: fmt.Sprintf("%d words", len(strings.Fields(q.Transcript)))}, nil
}
