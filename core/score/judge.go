package score

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// ServiceError is an ASR or judge call that failed (after the plugin's own retries): a
// failure of the service, not a verdict on the model (docs/protocol.md section 5.7). The
// item it interrupted is unscored; scoring it again once the service is back completes it.
type ServiceError struct {
	Model, ScenarioID string
	// Service is sdk.KindASR or sdk.KindJudge.
	Service string
	// What is the span being judged: "the answer to T" or "the N2 window of turn 4".
	What string
	Err  error
}

func (e *ServiceError) Error() string {
	return fmt.Sprintf("score %s/%s: the %s failed on %s: %v; the item is unscored, score again once the service works", e.Model, e.ScenarioID, e.Service, e.What, e.Err)
}

func (e *ServiceError) Unwrap() error { return e.Err }

// Judge scores one item completely: the pure verdicts of Events, then, from the audible
// waveform (sample 0 is time 0 of the conversation timeline), the answer audio of T
// (when T has response presence) and the speech in every silence window are cut out,
// transcribed by asr and judged (sections 5.3 and 5.4). Last, the model's words for the
// record (Scored.Words), which no verdict reads: those clips' transcripts, and every
// stretch of an episode they did not cover, transcribed once.
//
// What the ASR hears and the judge says are verdicts: an empty transcript, an unparseable
// or unexpected label count as wrong / intrusion and are stored as evidence in the
// Judgement. A call to either that fails is not: Judge stops at the first one and returns
// the item marked Unscored with a *ServiceError. Otherwise it returns an error only when
// the context ends or the audio has no sample rate.
func Judge(ctx context.Context, item Item, audible audio.PCM, asr sdk.ASR, judge sdk.Judge, p protocol.Params) (Scored, error) {
	if audible.Rate <= 0 {
		return Scored{}, fmt.Errorf("score %s/%s: the audible waveform has no sample rate", item.Model, item.ScenarioID)
	}
	s := Score(item, p)
	turns := item.Timeline.Turns
	serviceFailed := func(j Judgement, what string) (Scored, error) {
		err := &ServiceError{Model: item.Model, ScenarioID: item.ScenarioID, Service: sdk.KindJudge, What: what}
		if j.Failure == FailTranscriptionFailed {
			err.Service, err.Err = sdk.KindASR, errors.New(j.TranscriptionError)
		} else {
			err.Err = errors.New(j.JudgeError)
		}
		s.Unscored = err.Error()
		return s, err
	}
	// The model's words, for people reading the conversation (no verdict reads them):
	// what each clip the verdicts transcribed said, and every stretch of an episode no
	// such clip covered (speech after N4_Q, during a turn), transcribed once: episodes
	// are not transcribed whole again (on make run 1,134 ASR calls instead of 1,065).
	var covered []Span
	heard := func(parts []Span, j *Judgement) {
		if len(parts) == 0 || j == nil {
			return
		}
		covered = append(covered, parts...)
		if j.Failure != FailNoAudio {
			s.Words = append(s.Words, Words{Span: hull(parts), Transcript: j.Transcript})
		}
	}
	for i := range s.Events {
		ev := &s.Events[i]
		switch {
		case ev.T != nil && ev.T.Presence:
			j := transcribe(ctx, asr, audible, ev.T.AnswerSpeech)
			if j.Failure == "" {
				q := sdk.AnswerQuery{Context: dialogue(turns[:ev.Turn]), Request: turns[ev.Turn].Text,
					GoldAnswer: item.GoldAnswer, GoldAccepted: item.GoldAccepted, AnswerType: item.AnswerType, Response: j.Transcript}
				v, err := judge.JudgeAnswer(ctx, q)
				decide(&j, v, err, sdk.LabelCorrect, sdk.LabelIncorrect, FailIncorrect)
			}
			ev.T.Answer = &j
			heard(ev.T.AnswerSpeech, &j)
			if serviceFailure(j) && ctx.Err() == nil {
				return serviceFailed(j, "the answer to T")
			}
		case ev.Silence != nil && !ev.Silence.Silent():
			j := transcribe(ctx, asr, audible, ev.Silence.Speech)
			if j.Failure == "" {
				q := sdk.SpeechQuery{Context: dialogue(turns[:ev.Turn+1]), Transcript: j.Transcript}
				v, err := judge.ClassifySpeech(ctx, q)
				decide(&j, v, err, sdk.LabelAcknowledgement, sdk.LabelIntrusion, FailIntrusion)
			}
			ev.Silence.Judgement = &j
			heard(ev.Silence.Speech, &j)
			if serviceFailure(j) && ctx.Err() == nil {
				return serviceFailed(j, fmt.Sprintf("the %s window of turn %d", ev.Label, ev.Turn))
			}
		default:
			continue
		}
		if err := ctx.Err(); err != nil {
			return Scored{}, fmt.Errorf("score %s/%s: %w", item.Model, item.ScenarioID, err)
		}
	}
	for _, ep := range item.Episodes {
		parts := uncovered(Span{Start: ep.Start, End: ep.End}, covered)
		if len(parts) == 0 {
			continue
		}
		j := transcribe(ctx, asr, audible, parts)
		switch j.Failure {
		case FailNoAudio:
			continue
		case FailTranscriptionFailed:
			if ctx.Err() == nil {
				return serviceFailed(j, fmt.Sprintf("the speech episode [%.3f, %.3f) s", ep.Start, ep.End))
			}
		}
		if err := ctx.Err(); err != nil {
			return Scored{}, fmt.Errorf("score %s/%s: %w", item.Model, item.ScenarioID, err)
		}
		s.Words = append(s.Words, Words{Span: hull(parts), Transcript: j.Transcript})
	}
	sort.SliceStable(s.Words, func(a, b int) bool { return s.Words[a].Span.Start < s.Words[b].Span.Start })
	return s, nil
}

// serviceFailure reports a judgement cut short by a failed ASR or judge call.
func serviceFailure(j Judgement) bool {
	return j.Failure == FailTranscriptionFailed || j.Failure == FailJudgeFailed
}

func dialogue(turns []timeline.Turn) []sdk.DialogueTurn {
	out := make([]sdk.DialogueTurn, 0, len(turns))
	for _, t := range turns {
		out = append(out, sdk.DialogueTurn{Speaker: t.Speaker, Text: t.Text})
	}
	return out
}

// Cut returns the audio of spans (seconds on the conversation timeline) joined end to
// end; parts beyond the end of the waveform are left out.
func Cut(audible audio.PCM, spans []Span) audio.PCM {
	out := audio.PCM{Rate: audible.Rate}
	n := len(audible.Samples)
	for _, sp := range spans {
		a := min(max(int(math.Round(sp.Start*float64(audible.Rate))), 0), n)
		b := min(max(int(math.Round(sp.End*float64(audible.Rate))), a), n)
		out.Samples = append(out.Samples, audible.Samples[a:b]...)
	}
	return out
}

// transcribe cuts and transcribes spans. A failed transcription, no audio at all, or an
// empty transcript set Failure (section 5.4: each is a failure; Judge turns a failed
// transcription into a ServiceError, section 5.7).
func transcribe(ctx context.Context, asr sdk.ASR, audible audio.PCM, spans []Span) Judgement {
	clip := Cut(audible, spans)
	j := Judgement{Spans: spans, AudioS: clip.Duration()}
	if len(clip.Samples) == 0 {
		j.Failure = FailNoAudio
		return j
	}
	text, err := asr.Transcribe(ctx, sdk.Audio{Samples: clip.Samples, Rate: clip.Rate}, "")
	switch {
	case err != nil:
		j.TranscriptionError = err.Error()
		j.Failure = FailTranscriptionFailed
	case strings.TrimSpace(text) == "":
		j.Failure = FailEmptyTranscript
	default:
		j.Transcript = strings.TrimSpace(text)
	}
	return j
}

// decide records the judge's verdict: pass is the label that succeeds, fail the one that
// does not; an error, an unparsed verdict or any other label is a failure.
func decide(j *Judgement, v sdk.Verdict, err error, pass, fail, failReason string) {
	if err != nil {
		j.JudgeError = err.Error()
		j.Failure = FailJudgeFailed
		return
	}
	j.Label, j.Parsed, j.Raw, j.Rationale = v.Label, v.Parsed, v.Raw, v.Rationale
	switch {
	case !v.Parsed:
		j.Failure = FailUnparseable
	case v.Label == pass:
		j.OK = true
	case v.Label == fail:
		j.Failure = failReason
	default:
		j.Failure = FailUnparseable
	}
}

// hull is the span from the first part's start to the last part's end.
func hull(parts []Span) Span {
	h := parts[0]
	for _, p := range parts[1:] {
		h.Start, h.End = min(h.Start, p.Start), max(h.End, p.End)
	}
	return h
}

// uncovered is what of sp no span of covered overlaps, in order.
func uncovered(sp Span, covered []Span) []Span {
	rest := []Span{sp}
	for _, c := range covered {
		var next []Span
		for _, r := range rest {
			if c.End <= r.Start || c.Start >= r.End {
				next = append(next, r)
				continue
			}
			if r.Start < c.Start {
				next = append(next, Span{Start: r.Start, End: c.Start})
			}
			if c.End < r.End {
				next = append(next, Span{Start: c.End, End: r.End})
			}
		}
		rest = next
	}
	return rest
}
