package score

import (
	"math"
	"sort"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/timeline"
)

// Span is a half-open interval [Start, End) in seconds on the conversation timeline.
type Span struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// Duration of the span in seconds.
func (s Span) Duration() float64 { return s.End - s.Start }

// T outcomes (section 5.2: the T outcome partition).
const (
	OutcomeFreshOnset      = "fresh-onset"
	OutcomeAlreadySpeaking = "already-speaking"
	OutcomeSilent          = "silent"
)

// Outcomes of an N4 event: the partition of all N4 events (section 5.5). The first three
// make it ineligible, the last three are the verdicts on an eligible one.
const (
	N4SpokeDuringQuestion = "spoke-during-question"
	N4NoOnsetInGap        = "no-onset-in-gap"
	N4NotSpeakingAtR      = "not-speaking-at-resolution"
	N4Yielded             = "yielded"
	N4StillVoicing        = "still-voicing"
	N4Resumed             = "resumed"
)

// N4Outcomes lists the partition in report order.
var N4Outcomes = []string{N4SpokeDuringQuestion, N4NoOnsetInGap, N4NotSpeakingAtR, N4Yielded, N4StillVoicing, N4Resumed}

// Yield verdicts of an N4 event (section 5.5).
const (
	YieldPass              = "pass"
	YieldFailStillVoicing  = "fail-still-voicing"
	YieldFailResumed       = "fail-resumed"
	ExcludedSpokeDuringQ   = "excluded-spoke-during-question"
	ExcludedNoOnsetInGap   = "excluded-no-onset-in-gap"
	ExcludedNotSpeakingAtR = "excluded-not-speaking-at-resolution"
)

// Event is the verdict on one scored turn: a T turn, an N1/N2/N3 silence window, or an N4
// event (an N4_Q with the N4_R after it). Exactly one of T, Silence, N4 is set.
type Event struct {
	Turn      int     `json:"turn"` // index into Timeline.Turns
	Label     string  `json:"label"`
	Addressee string  `json:"addressee,omitempty"`
	Start     float64 `json:"start"` // the turn as played
	End       float64 `json:"end"`
	// Third is the elapsed-time third (0, 1, 2) of the conversation the turn starts in;
	// see ElapsedThird.
	Third   int             `json:"third"`
	T       *TVerdict       `json:"t,omitempty"`
	Silence *SilenceVerdict `json:"silence,omitempty"`
	N4      *N4Verdict      `json:"n4,omitempty"`
}

// TVerdict is what section 5.2 measures on the T turn. tE is the end of T.
type TVerdict struct {
	ActiveAtEnd bool `json:"active_at_end"` // active(tE)
	// Onset is the first episode start in the onset window (OnsetWindowRule), if any.
	Onset      *float64 `json:"onset,omitempty"`
	FreshOnset bool     `json:"fresh_onset"` // not active(tE) and an onset in the window
	Presence   bool     `json:"presence"`    // active(tE) or an onset in the window
	Outcome    string   `json:"outcome"`     // fresh-onset, already-speaking or silent
	// AnswerSpan is where the answer judged for accuracy lies (section 5.3): from the
	// start of the speech presence counts (the episode active at tE, or the fresh onset)
	// to the start of the next turn. Without presence nothing is judged, and it is
	// [tE, start of the next turn).
	AnswerSpan Span `json:"answer_span"`
	// AnswerSpeech is the model speech in AnswerSpan (episodes clipped to it): the audio
	// the ASR transcribes, joined.
	AnswerSpeech []Span `json:"answer_speech,omitempty"`
	// Answer is filled by Judge when Presence holds (accuracy is conditional on it).
	Answer *Judgement `json:"answer,omitempty"`
}

// SilenceVerdict is the silence window of an N1, N2 or N3 turn (section 5.4).
type SilenceVerdict struct {
	Window Span `json:"window"`
	// Speech is the model speech inside the window: each overlapping episode clipped to it.
	Speech   []Span  `json:"speech,omitempty"`
	SpeechMS float64 `json:"speech_ms"` // total duration of Speech in milliseconds
	// Speech is judged (acknowledgement or intrusion) by Judge; nil until then.
	Judgement *Judgement `json:"judgement,omitempty"`
}

// Silent reports that no model speech overlaps the window: a pass without any judge.
func (s *SilenceVerdict) Silent() bool { return len(s.Speech) == 0 }

// Pass reports whether the window preserved silence: no speech, or speech the judge
// classified as an acknowledgement. Speech not (yet) judged is not a pass.
func (s *SilenceVerdict) Pass() bool {
	return s.Silent() || (s.Judgement != nil && s.Judgement.OK)
}

// N4Verdict is one N4 event: question [qS, qE), resolution onset r, resolution end rE
// (section 5.5).
type N4Verdict struct {
	Question      Span    `json:"question"`
	Resolution    float64 `json:"resolution"`     // r: the start of N4_R as played (= qE + n4_gap)
	ResolutionEnd float64 `json:"resolution_end"` // rE
	Deadline      float64 `json:"deadline"`       // r + yield_deadline
	ObserveEnd    float64 `json:"observe_end"`    // max(r + yield_deadline, rE + yield_observe)

	SpokeDuringQuestion bool `json:"spoke_during_question"` // an episode overlaps [qS, qE)
	OnsetInGap          bool `json:"onset_in_gap"`          // an onset in (qE, r]
	ActiveAtResolution  bool `json:"active_at_resolution"`  // active(r)
	Eligible            bool `json:"eligible"`              // none of the above excludes it
	// Excluded is the first failed eligibility condition, in the order above; empty when eligible.
	Excluded string `json:"excluded,omitempty"`

	// WindowResponse: an episode overlaps the answering window [qS, r], closed at r like
	// the gap (qE, r], so an onset exactly at r is both eligible and a window response
	// (diagnostic).
	WindowResponse bool `json:"window_response"`
	// Yield is pass, fail-still-voicing or fail-resumed, as if the event were eligible;
	// the scored rate counts eligible events only.
	Yield string `json:"yield"`
	// Outcome places the event in the partition of all N4 events (N4Outcomes): the
	// exclusion for an ineligible one, the yield verdict for an eligible one.
	Outcome string `json:"outcome"`
}

// Verdict is the yield verdict as explain prints it: the exclusion reason for an
// ineligible event, otherwise pass / fail-still-voicing / fail-resumed.
func (n *N4Verdict) Verdict() string {
	if !n.Eligible {
		return n.Excluded
	}
	return n.Yield
}

// Events computes every verdict of section 5 that needs no ASR or judge, one Event per
// T, N1, N2, N3 and N4_Q turn, in turn order (N4_R turns are part of their N4_Q event).
// eps are the merged model speech episodes (section 4.2), sorted or not.
func Events(tl timeline.Timeline, eps []timeline.Episode, p protocol.Params) []Event {
	eps = sortedEpisodes(eps)
	first, last := conversationSpan(tl)
	var out []Event
	for i, turn := range tl.Turns {
		ev := Event{Turn: i, Label: turn.Label, Addressee: turn.Addressee, Start: turn.Start, End: turn.End,
			Third: ElapsedThird(turn.Start, first, last)}
		next, hasNext := nextTurnStart(tl, i)
		switch {
		case turn.Label == protocol.LabelT:
			ev.T = tVerdict(turn, next, hasNext, tl.Duration, eps, p)
		case protocol.IsSilenceLabel(turn.Label):
			ev.Silence = silenceVerdict(turn, next, hasNext, eps, p)
		case turn.Label == protocol.LabelN4Q:
			ev.N4 = n4Verdict(tl, i, eps, p)
		default:
			continue
		}
		out = append(out, ev)
	}
	return out
}

func sortedEpisodes(eps []timeline.Episode) []timeline.Episode {
	s := append([]timeline.Episode(nil), eps...)
	sort.Slice(s, func(i, j int) bool { return s[i].Start < s[j].Start })
	return s
}

func nextTurnStart(tl timeline.Timeline, i int) (float64, bool) {
	if i+1 < len(tl.Turns) {
		return tl.Turns[i+1].Start, true
	}
	return 0, false
}

// conversationSpan is [start of the first turn, end of the last turn]: the preamble and
// the tail are not part of the conversation for elapsed-time thirds.
func conversationSpan(tl timeline.Timeline) (float64, float64) {
	if len(tl.Turns) == 0 {
		return 0, 0
	}
	first, last := tl.Turns[0].Start, tl.Turns[0].End
	for _, t := range tl.Turns {
		first = math.Min(first, t.Start)
		last = math.Max(last, t.End)
	}
	return first, last
}

// ElapsedThird places time t in a third of the conversation span [first, last] (the start
// of the first human turn to the end of the last one, so the preamble and the tail do not
// count): 0 for t < first + L/3, 1 for t < first + 2L/3, else 2, with L = last - first.
// Events are placed by the start of their turn. Out-of-range times clamp to 0 or 2.
func ElapsedThird(t, first, last float64) int {
	l := last - first
	if l <= 0 {
		return 0
	}
	return min(max(int(math.Floor(3*(t-first)/l)), 0), 2)
}

// overlapping clips every episode that overlaps [a, b) to it (timeline.Overlapping).
func overlapping(eps []timeline.Episode, a, b float64) []Span {
	var out []Span
	for _, e := range timeline.Overlapping(eps, a, b) {
		out = append(out, Span(e))
	}
	return out
}

// tVerdict: section 5.2, fresh-onset response rate, response presence and T outcome, and
// the answer audio of section 5.3.
func tVerdict(turn timeline.Turn, next float64, hasNext bool, duration float64, eps []timeline.Episode, p protocol.Params) *TVerdict {
	tE := turn.End
	v := &TVerdict{ActiveAtEnd: timeline.Active(eps, tE)}
	lo, hi := OnsetWindow(tE, p)
	if s, ok := timeline.FirstOnset(eps, lo, hi); ok {
		v.Onset = &s
	}
	v.FreshOnset = !v.ActiveAtEnd && v.Onset != nil
	v.Presence = timeline.Presence(eps, tE, p.TOnsetWindow)
	switch {
	case v.ActiveAtEnd:
		v.Outcome = OutcomeAlreadySpeaking
	case v.FreshOnset:
		v.Outcome = OutcomeFreshOnset
	default:
		v.Outcome = OutcomeSilent
	}
	// Answer audio: the speech presence counts, from the start of the episode active at
	// tE (or the fresh onset) to the start of the next turn. A valid scenario never ends
	// with T (section 2.2); should one, the answer runs to the end of the session.
	end := next
	if !hasNext {
		end = math.Max(duration, tE+p.TurnGap)
	}
	start := tE
	switch {
	case v.ActiveAtEnd:
		for _, e := range eps {
			if e.Start <= tE && tE < e.End {
				start = e.Start
				break
			}
		}
	case v.Onset != nil:
		start = *v.Onset
	}
	v.AnswerSpan = Span{start, math.Max(end, start)}
	if v.Presence {
		v.AnswerSpeech = overlapping(eps, v.AnswerSpan.Start, v.AnswerSpan.End)
	}
	return v
}

// silenceVerdict: section 5.4, silence window of N1/N2/N3: from the turn's start to the
// next turn's start; for a last turn, to its end plus turn_gap.
func silenceVerdict(turn timeline.Turn, next float64, hasNext bool, eps []timeline.Episode, p protocol.Params) *SilenceVerdict {
	end := turn.End + p.TurnGap
	if hasNext {
		end = next
	}
	v := &SilenceVerdict{Window: Span{turn.Start, end}}
	v.Speech = overlapping(eps, turn.Start, end)
	for _, s := range v.Speech {
		v.SpeechMS += s.Duration() * 1000
	}
	return v
}

// n4Verdict: section 5.5, N4 event. The resolution onset r is where N4_R actually started
// (the scheduler plays it at qE + n4_gap, section 3.3 rule 4). Without a following N4_R
// (an invalid scenario) r = qE + n4_gap and rE = r.
func n4Verdict(tl timeline.Timeline, i int, eps []timeline.Episode, p protocol.Params) *N4Verdict {
	q := tl.Turns[i]
	r, rE := q.End+p.N4Gap, q.End+p.N4Gap
	if i+1 < len(tl.Turns) && tl.Turns[i+1].Label == protocol.LabelN4R {
		r, rE = tl.Turns[i+1].Start, tl.Turns[i+1].End
	}
	v := &N4Verdict{
		Question: Span{q.Start, q.End}, Resolution: r, ResolutionEnd: rE,
		Deadline: r + p.YieldDeadline,
	}
	v.ObserveEnd = math.Max(v.Deadline, rE+p.YieldObserve)

	// Eligibility: all three conditions must hold.
	v.SpokeDuringQuestion = len(overlapping(eps, q.Start, q.End)) > 0
	_, v.OnsetInGap = timeline.FirstOnset(eps, q.End, r)
	v.ActiveAtResolution = timeline.Active(eps, r)
	switch {
	case v.SpokeDuringQuestion:
		v.Excluded, v.Outcome = ExcludedSpokeDuringQ, N4SpokeDuringQuestion
	case !v.OnsetInGap:
		v.Excluded, v.Outcome = ExcludedNoOnsetInGap, N4NoOnsetInGap
	case !v.ActiveAtResolution:
		v.Excluded, v.Outcome = ExcludedNotSpeakingAtR, N4NotSpeakingAtR
	default:
		v.Eligible = true
	}

	// Window response (diagnostic): an episode overlaps the closed window [qS, r]: it
	// starts at or before r and ends after qS.
	for _, e := range eps {
		if e.Start <= r && e.End > q.Start {
			v.WindowResponse = true
		}
	}

	// Yield: silent at r + yield_deadline and through the observation end. "Through" is
	// the half-open [deadline, observe end), consistent with episodes being [s, e):
	// speech starting exactly at the observation end is after it.
	switch {
	case timeline.Active(eps, v.Deadline):
		v.Yield = YieldFailStillVoicing
	case len(overlapping(eps, v.Deadline, v.ObserveEnd)) > 0:
		v.Yield = YieldFailResumed
	default:
		v.Yield = YieldPass
	}
	if v.Eligible {
		v.Outcome = map[string]string{YieldPass: N4Yielded, YieldFailStillVoicing: N4StillVoicing, YieldFailResumed: N4Resumed}[v.Yield]
	}
	return v
}
