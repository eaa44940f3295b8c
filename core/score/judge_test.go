package score

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/plugins/lexical-judge/lexical"
	"github.com/duplexmpe/duplexmpe/plugins/pocketsphinx/sphinx"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// The real engines of the embedded ASR and judge plugins, in process.
type sphinxASR struct{ d *sphinx.Decoder }

func (a sphinxASR) Transcribe(_ context.Context, clip sdk.Audio, _ string) (string, error) {
	return a.d.Transcribe(audio.Resample(audio.PCM{Samples: clip.Samples, Rate: clip.Rate}, sphinx.Rate).Samples)
}

// loadSphinx is the embedded PocketSphinx decoder, closed when the test ends; the test
// is skipped where it is not installed.
func loadSphinx(t *testing.T) sdk.ASR {
	t.Helper()
	d, err := sphinx.Load(sphinx.DefaultModel())
	if err != nil {
		t.Skipf("pocketsphinx: %v", err)
	}
	t.Cleanup(d.Close)
	return sphinxASR{d}
}

const outRate = 24000 // a typical model output rate: the clips are resampled twice

func speak(t *testing.T, text string) audio.PCM {
	t.Helper()
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("flite is not installed (scripts/install-apt.sh installs it)")
	}
	wav := filepath.Join(t.TempDir(), "clip.wav")
	if out, err := exec.Command("flite", "-voice", "slt", "-t", text, "-o", wav).CombinedOutput(); err != nil {
		t.Fatalf("flite: %v: %s", err, out)
	}
	p, err := audio.ReadWAV(wav)
	if err != nil {
		t.Fatal(err)
	}
	return audio.Resample(p, outRate)
}

// place writes clip into the waveform at time at (seconds) and returns its episode.
func place(wave []float32, clip audio.PCM, at float64) timeline.Episode {
	start := int(at * outRate)
	copy(wave[start:], clip.Samples)
	return timeline.Episode{Start: at, End: at + clip.Duration()}
}

// judgeTimeline: T [2, 5) asks the price; N1 [12, 14) and N2 [16, 18) are silence
// windows [12, 16) and [16, 18.5).
func judgeItem() Item {
	return Item{Model: "m", Condition: protocol.Explicit, PairID: "p", ScenarioID: "s", GoldAnswer: "$9",
		Timeline: timeline.Timeline{Turns: []timeline.Turn{
			{Label: protocol.LabelN3, Speaker: "A", Text: "So, the concert.", Start: 0, End: 1.5},
			{Label: protocol.LabelT, Speaker: "B", Text: "Aria, how much is the ticket?", Start: 2, End: 5},
			{Label: protocol.LabelN1, Speaker: "C", Text: "Aria knows these things.", Start: 12, End: 14},
			{Label: protocol.LabelN2, Speaker: "A", Text: "Hey Siri, set a timer.", Addressee: protocol.AddresseeDevice, Start: 16, End: 18},
		}}}
}

// Real flite speech in the audible waveform, real PocketSphinx, real lexical judge: the
// answer is the speech presence counts (the fresh onset's episode, up to the next turn),
// each window's speech from its overlap.
func TestJudgeWithRealASRAndJudge(t *testing.T) {
	asr := loadSphinx(t)
	wave := make([]float32, 20*outRate)
	item := judgeItem()
	item.Episodes = []timeline.Episode{
		place(wave, speak(t, "the ticket costs nine dollars"), 5.5), // answer
		place(wave, speak(t, "okay understood"), 14.2),              // in N1's window [12, 16)
		place(wave, speak(t, "nine dollars"), 16.3),                 // in N2's window [16, 18.5)
	}
	s, err := Judge(context.Background(), item, audio.PCM{Samples: wave, Rate: outRate}, asr, lexical.Judge{}, protocol.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	byTurn := map[int]Event{}
	for _, ev := range s.Events {
		byTurn[ev.Turn] = ev
	}
	ans := byTurn[1].T.Answer
	if ans == nil || !ans.OK || ans.Label != sdk.LabelCorrect || ans.Transcript == "" || ans.Raw == "" {
		t.Errorf("answer judgement %+v", ans)
	}
	if e := item.Episodes[0]; ans != nil && (len(ans.Spans) != 1 || ans.Spans[0] != Span(e) || math.Abs(ans.AudioS-e.Duration()) > 0.001) {
		t.Errorf("answer audio %v (%g s), want the answer's episode %v", ans.Spans, ans.AudioS, e)
	}
	if j := byTurn[0].Silence.Judgement; j != nil {
		t.Errorf("silent window judged: %+v", j)
	}
	if j := byTurn[2].Silence.Judgement; j == nil || !j.OK || j.Label != sdk.LabelAcknowledgement || !byTurn[2].Silence.Pass() {
		t.Errorf("N1 acknowledgement judgement %+v (transcript %q)", j, j.Transcript)
	}
	if j := byTurn[3].Silence.Judgement; j == nil || j.OK || j.Failure != FailIntrusion || byTurn[3].Silence.Pass() {
		t.Errorf("N2 intrusion judgement %+v", j)
	}
	e := Summarize([]Scored{s}, protocol.Defaults()).Entries[0]
	if e.Accuracy.K != 1 || e.Accuracy.N != 1 || e.Silence.K != 2 || e.Silence.N != 3 {
		t.Errorf("accuracy %s, silence %s; want 1/1 and 2/3", e.Accuracy.Text, e.Silence.Text)
	}
}

// countingASR passes calls to asr, counts them, and fails every call after the first
// failAfter (0: none).
type countingASR struct {
	asr       sdk.ASR
	calls     int
	failAfter int
}

func (a *countingASR) Transcribe(ctx context.Context, clip sdk.Audio, lang string) (string, error) {
	a.calls++
	if a.failAfter > 0 && a.calls > a.failAfter {
		return "", errors.New("decoder crashed")
	}
	return a.asr.Transcribe(ctx, clip, lang)
}

// Issue 23: the model's words are on the record for every speech episode, not only for
// the answer to T and the speech in silence windows: here the speech after an N4
// question, which no verdict transcribes, is transcribed too; each episode once, in
// order. An ASR failure on such an episode is a service failure like any other: the item
// is unscored, to be scored again.
func TestJudgeTranscribesEveryEpisodeOnce(t *testing.T) {
	real := loadSphinx(t)
	wave := make([]float32, 30*outRate)
	item := judgeItem()
	item.Timeline.Turns = append(item.Timeline.Turns,
		timeline.Turn{Label: protocol.LabelN4Q, Speaker: "B", Text: "Aria, what time is it?", Start: 20, End: 22},
		timeline.Turn{Label: protocol.LabelN4R, Speaker: "B", Text: "Never mind, it is noon.", Start: 25, End: 27})
	item.Episodes = []timeline.Episode{
		place(wave, speak(t, "the ticket costs nine dollars"), 5.5), // the answer to T
		place(wave, speak(t, "okay understood"), 14.2),              // in N1's window
		place(wave, speak(t, "it is twelve o clock"), 22.5),         // after N4_Q: judged by no rule
	}
	asr := &countingASR{asr: real}
	s, err := Judge(context.Background(), item, audio.PCM{Samples: wave, Rate: outRate}, asr, lexical.Judge{}, protocol.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	// The answer and N1's speech are transcribed for their verdicts and their words are
	// those transcripts; the episode after N4_Q, which no verdict cut out, is transcribed
	// once more: one ASR call per stretch of speech.
	if len(s.Words) != len(item.Episodes) {
		t.Fatalf("words for %d stretches, want %d: %+v", len(s.Words), len(item.Episodes), s.Words)
	}
	for i, w := range s.Words {
		if w.Span != Span(item.Episodes[i]) || w.Transcript == "" {
			t.Errorf("words %d: %+v, want the transcript of episode %v", i, w, item.Episodes[i])
		}
	}
	if asr.calls != len(item.Episodes) {
		t.Errorf("%d ASR calls, want %d", asr.calls, len(item.Episodes))
	}
	failing := &countingASR{asr: real, failAfter: 2}
	s, err = Judge(context.Background(), item, audio.PCM{Samples: wave, Rate: outRate}, failing, lexical.Judge{}, protocol.Defaults())
	var se *ServiceError
	if !errors.As(err, &se) || se.Service != sdk.KindASR || !strings.Contains(se.What, "speech episode [22.500") || s.Counted() {
		t.Errorf("an ASR failure on the last episode: err %v, counted %v", err, s.Counted())
	}
}

// Stand-ins for failures the real engines cannot be made to produce on demand.
type fixedASR struct {
	text string
	err  error
}

func (a fixedASR) Transcribe(context.Context, sdk.Audio, string) (string, error) {
	return a.text, a.err
}

type fixedJudge struct {
	v   sdk.Verdict
	err error
}

func (j fixedJudge) JudgeAnswer(context.Context, sdk.AnswerQuery) (sdk.Verdict, error) {
	return j.v, j.err
}
func (j fixedJudge) ClassifySpeech(context.Context, sdk.SpeechQuery) (sdk.Verdict, error) {
	return j.v, j.err
}

// Section 5.3, 5.4: an empty transcript or an unparseable verdict is a failure, kept as
// evidence.
func TestJudgeFailuresAreVerdicts(t *testing.T) {
	item := judgeItem()
	item.Episodes = []timeline.Episode{{Start: 6, End: 8}, {Start: 13, End: 13.5}}
	wave := audio.PCM{Samples: make([]float32, 20*outRate), Rate: outRate}
	good := sdk.Verdict{Label: sdk.LabelCorrect, Parsed: true}
	cases := []struct {
		name    string
		asr     sdk.ASR
		judge   sdk.Judge
		failure string
	}{
		{"empty transcript", fixedASR{text: "  "}, fixedJudge{v: good}, FailEmptyTranscript},
		{"unparseable", fixedASR{text: "words"}, fixedJudge{v: sdk.Verdict{Raw: "I think so?", Parsed: false}}, FailUnparseable},
		{"unknown label", fixedASR{text: "words"}, fixedJudge{v: sdk.Verdict{Label: "maybe", Parsed: true}}, FailUnparseable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Judge(context.Background(), item, wave, tc.asr, tc.judge, protocol.Defaults())
			if err != nil {
				t.Fatal(err)
			}
			var n int
			for _, ev := range s.Events {
				var j *Judgement
				switch {
				case ev.T != nil:
					j = ev.T.Answer
				case ev.Silence != nil && !ev.Silence.Silent():
					j = ev.Silence.Judgement
				default:
					continue
				}
				n++
				if j == nil || j.OK || j.Failure != tc.failure {
					t.Errorf("turn %d: judgement %+v, want failure %s", ev.Turn, j, tc.failure)
				}
			}
			if n != 2 {
				t.Errorf("%d judged spans, want 2 (the answer and N1's speech)", n)
			}
			e := Summarize([]Scored{s}, protocol.Defaults()).Entries[0]
			if e.Accuracy.K != 0 || e.Accuracy.N != 1 || e.Silence.K != 2 || e.Silence.N != 3 || e.SilenceFailures[tc.failure] != 1 {
				t.Errorf("accuracy %s silence %s failures %v", e.Accuracy.Text, e.Silence.Text, e.SilenceFailures)
			}
		})
	}
	// Speech past the end of the recorded audio: nothing to transcribe.
	short := audio.PCM{Samples: make([]float32, outRate), Rate: outRate}
	s, err := Judge(context.Background(), item, short, fixedASR{text: "x"}, fixedJudge{v: good}, protocol.Defaults())
	if err != nil || s.Events[1].T.Answer.Failure != FailNoAudio {
		t.Errorf("no audio: %v %+v", err, s.Events[1].T.Answer)
	}
	if _, err := Judge(context.Background(), item, audio.PCM{}, fixedASR{}, fixedJudge{}, protocol.Defaults()); err == nil {
		t.Error("audio without a rate accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Judge(ctx, item, wave, fixedASR{text: "x"}, fixedJudge{v: good}, protocol.Defaults()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// Section 5.7 (issue 11, finding 4): an ASR or judge call that fails is the service's
// failure, not the model's: the item comes back unscored with a *ServiceError naming the
// service and the span, and Summarize keeps it out of every denominator. (It used to be
// stored as a wrong answer and an intrusion: accuracy 0/1 with the judge down.)
func TestJudgeServiceFailuresLeaveTheItemUnscored(t *testing.T) {
	item := judgeItem()
	item.Episodes = []timeline.Episode{{Start: 6, End: 8}, {Start: 13, End: 13.5}}
	wave := audio.PCM{Samples: make([]float32, 20*outRate), Rate: outRate}
	good := sdk.Verdict{Label: sdk.LabelCorrect, Parsed: true}
	for _, tc := range []struct {
		name, service string
		asr           sdk.ASR
		judge         sdk.Judge
	}{
		{"transcription failed", sdk.KindASR, fixedASR{err: errors.New("decoder crashed")}, fixedJudge{v: good}},
		{"judge failed", sdk.KindJudge, fixedASR{text: "words"}, fixedJudge{err: errors.New("connection reset")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Judge(context.Background(), item, wave, tc.asr, tc.judge, protocol.Defaults())
			var se *ServiceError
			if !errors.As(err, &se) || se.Service != tc.service || se.What != "the answer to T" || se.ScenarioID != "s" {
				t.Fatalf("err = %v, want a ServiceError of the %s on the answer to T", err, tc.service)
			}
			if s.Unscored == "" || s.Counted() {
				t.Errorf("item not marked unscored: %+v", s)
			}
			sum := Summarize([]Scored{s}, protocol.Defaults())
			e := sum.Entries[0]
			if e.Items != 0 || e.Unscored != 1 || e.Accuracy.N != 0 || e.Silence.N != 0 || e.FreshOnset.N != 0 {
				t.Errorf("unscored item counted: items %d unscored %d accuracy %s silence %s", e.Items, e.Unscored, e.Accuracy.Text, e.Silence.Text)
			}
		})
	}
}

func TestCut(t *testing.T) {
	p := audio.PCM{Samples: []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Rate: 10}
	got := Cut(p, []Span{{0.2, 0.4}, {0.8, 1.5}, {-1, 0.1}})
	want := []float32{2, 3, 8, 9, 0}
	if len(got.Samples) != len(want) {
		t.Fatalf("Cut = %v, want %v", got.Samples, want)
	}
	for i := range want {
		if got.Samples[i] != want[i] {
			t.Fatalf("Cut = %v, want %v", got.Samples, want)
		}
	}
}

// BenchmarkAcknowledgementChain measures the embedded scoring chain (flite speech ->
// PocketSphinx -> lexical judge) on short isolated utterances: how many backchannels
// come out as acknowledgements and how many content utterances as intrusions. Run with
// `make measure-asr`; the figures are in plugins/lexical-judge/README.md.
func BenchmarkAcknowledgementChain(b *testing.B) {
	if os.Getenv("DUPLEXMPE_MEASURE_ASR") != "1" {
		b.Skip("set DUPLEXMPE_MEASURE_ASR=1 to measure the chain")
	}
	d, err := sphinx.Load(sphinx.DefaultModel())
	if err != nil {
		b.Skip(err)
	}
	defer d.Close()
	acks := []string{"okay", "understood", "got it", "i see", "uh huh", "sure", "right", "alright", "okay got it", "sounds good", "mm hm", "noted"}
	content := []string{"nine dollars", "it is nine dollars", "the meeting is at three", "set a timer", "paris", "turn left"}
	asr := sphinxASR{d}
	for b.Loop() {
		okAck, okContent := 0, 0
		for _, voice := range []string{"slt", "kal16"} {
			for i, text := range append(append([]string(nil), acks...), content...) {
				clip := speakVoice(b, voice, text)
				got, err := asr.Transcribe(context.Background(), sdk.Audio{Samples: clip.Samples, Rate: clip.Rate}, "")
				if err != nil {
					b.Fatal(err)
				}
				v, _ := lexical.Judge{}.ClassifySpeech(context.Background(), sdk.SpeechQuery{Transcript: got})
				isAck := v.Label == sdk.LabelAcknowledgement
				if i < len(acks) && isAck {
					okAck++
				} else if i >= len(acks) && !isAck {
					okContent++
				}
				b.Logf("%s: %q -> %q: %s", voice, text, got, v.Label)
			}
		}
		b.ReportMetric(float64(okAck)/float64(2*len(acks)), "ack-recall")
		b.ReportMetric(float64(okContent)/float64(2*len(content)), "intrusion-recall")
	}
}

func speakVoice(tb testing.TB, voice, text string) audio.PCM {
	tb.Helper()
	wav := filepath.Join(tb.TempDir(), "clip.wav")
	if out, err := exec.Command("flite", "-voice", voice, "-t", text, "-o", wav).CombinedOutput(); err != nil {
		tb.Fatalf("flite: %v: %s", err, out)
	}
	p, err := audio.ReadWAV(wav)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
