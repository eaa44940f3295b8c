package viewer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
)

// member is one event's place in one measure's denominator, and whether it is a
// success there: the event-level view of a table cell's k/n.
type Member struct {
	Measure string
	Success bool
}

// Measure keys of the explorer beyond score's: the silence sweep at each threshold, and
// every N4 event (the denominator of the N4 outcome partition; a success is a yield).
func SweepKey(thr float64) string { return "sweep_" + strconv.FormatFloat(thr, 'f', -1, 64) }

const MeasureN4Events = "n4_events"

// Event is one scored event as the report's explorer and the conversation page show it.
// Its memberships are score.Memberships (the rows of score.MeasureTable that count it),
// the same definitions score.Summarize counts with, so that the events a table cell links
// to are the cell's denominator; the sweep and the N4 partition are added beside them.
type Event struct {
	Index int // position in Scored.Events
	Ev    score.Event
	// Label as filtered on: T, N1, N2, N3 or N4.
	Label   string
	Members []Member
	// Outcomes are the tokens the outcome filter matches: the T outcome and the answer
	// verdict, a window's verdict, an N4 event's eligibility and yield verdicts.
	Outcomes []string
	// Verdict is the headline: what the scored measures made of this event. Pass: the
	// event went right (for T, a fresh onset and a correct answer).
	Verdict string
	Pass    bool
	// Excluded: the event is in no rate, so it is neither a success nor a failure: an
	// N4 event that is not eligible (section 5.5; it is in the N4 outcome partition).
	Excluded bool
}

// EventsOf derives the views of a conversation's events. A failed or unscored item is
// in no denominator (score.Summarize leaves it out), so it has none.
func EventsOf(sc *score.Scored) []Event {
	if sc == nil || !sc.Counted() {
		return nil
	}
	out := make([]Event, 0, len(sc.Events))
	for i, ev := range sc.Events {
		v := Event{Index: i, Ev: ev, Label: ev.Label}
		for _, m := range score.Memberships(ev) {
			v.Members = append(v.Members, Member{m.Measure, m.Success})
		}
		switch {
		case ev.T != nil:
			t := ev.T
			v.Outcomes = []string{t.Outcome}
			v.Verdict, v.Pass = t.Outcome, t.FreshOnset
			if t.Presence {
				ok, why := score.Judged(t.Answer)
				v.Pass = v.Pass && ok // the turn went right: a fresh onset and a correct answer
				token := why
				if ok {
					token = "correct"
				}
				v.Outcomes = append(v.Outcomes, token)
				v.Verdict += ", answer " + token
			} else {
				v.Verdict = "no response"
			}
		case ev.Silence != nil:
			s := ev.Silence
			pass := s.Pass()
			for _, thr := range score.SweepThresholdsMS {
				v.Members = append(v.Members, Member{SweepKey(thr), score.SweepPass(s.SpeechMS, thr)})
			}
			switch {
			case s.Silent():
				v.Verdict = "kept: silent"
				v.Outcomes = []string{"silent"}
			case pass:
				v.Verdict = "kept: acknowledgement"
				v.Outcomes = []string{"acknowledgement"}
			default:
				_, why := score.Judged(s.Judgement)
				v.Verdict = "failed: " + why
				v.Outcomes = []string{why}
			}
			v.Pass = pass
		case ev.N4 != nil:
			n := ev.N4
			v.Label = "N4"
			yielded := n.Outcome == score.N4Yielded
			v.Members = append(v.Members, Member{MeasureN4Events, yielded})
			v.Outcomes = []string{n.Outcome}
			v.Verdict = n.Outcome
			if n.Eligible {
				v.Outcomes = append(v.Outcomes, "eligible")
				v.Verdict = "eligible, " + n.Outcome
			}
			v.Pass = n.Eligible && n.Yield == score.YieldPass
			if !n.Eligible {
				v.Excluded = true
				v.Verdict = "excluded: " + n.Outcome
			}
		default:
			continue
		}
		out = append(out, v)
	}
	return out
}

// pairing says, for each counted conversation, what the paired statistics need: whether
// the same model has the other version of its pair counted (the explicit vs implicit
// test is over those pairs), and which other models have the same pair counted in the
// same condition (a model comparison is over the pairs both models were scored on).
type Pairing struct {
	Both   bool
	Shared []string // other models, sorted
}

func Pairings(convs []*Conv) map[*Conv]Pairing {
	type key struct{ model, cond, pair string }
	counted := map[key]bool{}
	models := map[[2]string][]string{} // condition, pair -> models
	for _, c := range convs {
		if c.Scored == nil || !c.Scored.Counted() || c.Row.Pair == "" {
			continue
		}
		k := key{c.Row.Model, c.Row.Condition, c.Row.Pair}
		if !counted[k] {
			counted[k] = true
			models[[2]string{k.cond, k.pair}] = append(models[[2]string{k.cond, k.pair}], k.model)
		}
	}
	other := map[string]string{protocol.Explicit: protocol.Implicit, protocol.Implicit: protocol.Explicit}
	out := map[*Conv]Pairing{}
	for _, c := range convs {
		r := c.Row
		if !counted[key{r.Model, r.Condition, r.Pair}] {
			continue
		}
		p := Pairing{Both: counted[key{r.Model, other[r.Condition], r.Pair}]}
		for _, m := range models[[2]string{r.Condition, r.Pair}] {
			if m != r.Model {
				p.Shared = append(p.Shared, m)
			}
		}
		sort.Strings(p.Shared)
		out[c] = p
	}
	return out
}

func (v Event) Member(measure string) (in, success bool) {
	for _, m := range v.Members {
		if m.Measure == measure {
			return true, m.Success
		}
	}
	return false, false
}

// membersAttr encodes the memberships for the page: "fresh_onset:1 presence:0".
func (v Event) MembersAttr() string {
	parts := make([]string, len(v.Members))
	for i, m := range v.Members {
		b := "0"
		if m.Success {
			b = "1"
		}
		parts[i] = m.Measure + ":" + b
	}
	return strings.Join(parts, " ")
}

// Addressee is the N2 addressee as the summary groups it.
func (v Event) Addressee() string {
	if v.Ev.Silence == nil || v.Ev.Label != protocol.LabelN2 {
		return ""
	}
	if v.Ev.Addressee == "" {
		return "unspecified"
	}
	return v.Ev.Addressee
}

// secs prints a time on the conversation's clock.
func tsec(t float64) string { return strconv.FormatFloat(t, 'f', 3, 64) + " s" }

func span(s score.Span) string {
	return fmt.Sprintf("[%s, %s)", strconv.FormatFloat(s.Start, 'f', 3, 64), tsec(s.End))
}

// rule says, in words, which rule of protocol.md section 5 decided the event and on what
// evidence: the times the verdict was computed from and the judge's answer.
func rule(v Event, p protocol.Params) []string {
	ev := v.Ev
	var out []string
	switch {
	case ev.T != nil:
		t := ev.T
		tE := ev.End
		switch t.Outcome {
		case score.OutcomeAlreadySpeaking:
			out = append(out, fmt.Sprintf("Already speaking when T ended at %s (an episode spans it): presence, but not a fresh onset.", tsec(tE)))
		case score.OutcomeFreshOnset:
			out = append(out, fmt.Sprintf("Silent when T ended at %s; an episode starts at %s, in the onset window %s = %s: a fresh onset.",
				tsec(tE), tsec(deref(t.Onset)), score.OnsetWindowRule, onsetWindow(tE, p)))
		default:
			out = append(out, fmt.Sprintf("Silent when T ended at %s and no episode starts in the onset window %s = %s: no response, so the turn is not in the accuracy denominator.",
				tsec(tE), score.OnsetWindowRule, onsetWindow(tE, p)))
		}
		if t.Presence {
			out = append(out, "Accuracy: "+judgementRule(t.Answer, "the answer audio "+span(t.AnswerSpan), "correct", "wrong"))
		}
	case ev.Silence != nil:
		s := ev.Silence
		if s.Silent() {
			out = append(out, fmt.Sprintf("No model speech in the window %s: silence kept, no judge needed.", span(s.Window)))
			break
		}
		out = append(out, fmt.Sprintf("%.0f ms of model speech in the window %s (%s).", s.SpeechMS, span(s.Window), spans(s.Speech)))
		out = append(out, judgementRule(s.Judgement, "that speech", "a brief acknowledgement, which keeps the silence (the acknowledgement exemption)", "a failure of the window"))
	case ev.N4 != nil:
		n := ev.N4
		q := fmt.Sprintf("question %s, resolution starts at r = %s", span(n.Question), tsec(n.Resolution))
		switch n.Excluded {
		case score.ExcludedSpokeDuringQ:
			out = append(out, "Excluded: the model spoke during the "+q+"; only a model that starts answering in the gap can yield.")
		case score.ExcludedNoOnsetInGap:
			out = append(out, fmt.Sprintf("Excluded: no episode starts in the gap %s after the %s.", score.OpenClosed(n.Question.End, n.Resolution, tsec), q))
		case score.ExcludedNotSpeakingAtR:
			out = append(out, "Excluded: the model started in the gap but was not speaking at r ("+q+").")
		default:
			out = append(out, "Eligible: silent during the "+q+", an onset in the gap, and speaking at r.")
		}
		switch {
		case !n.Eligible:
		case n.Yield == score.YieldPass:
			out = append(out, fmt.Sprintf("Yield: silent at r + yield_deadline = %s and through the observation end %s: yielded.", tsec(n.Deadline), tsec(n.ObserveEnd)))
		case n.Yield == score.YieldFailStillVoicing:
			out = append(out, fmt.Sprintf("Yield: still speaking at r + yield_deadline = %s (yield_deadline %g s): did not yield.", tsec(n.Deadline), p.YieldDeadline))
		case n.Yield == score.YieldFailResumed:
			out = append(out, fmt.Sprintf("Yield: silent at %s, but spoke again before the observation end %s: did not yield.", tsec(n.Deadline), tsec(n.ObserveEnd)))
		}
		if !n.Eligible {
			out = append(out, "Not eligible, so it is in the N4 outcome partition as "+strconv.Quote(n.Outcome)+", not in the yield rate.")
		}
		if n.WindowResponse {
			out = append(out, "Window response (diagnostic): speech in the answering window [question start, r].")
		}
	}
	if ms := score.Memberships(ev); len(ms) > 0 {
		out = append(out, "In the measures: "+score.MembershipsText(ms)+".")
	}
	return out
}

// onsetWindow is the T turn's onset window on the conversation's clock.
func onsetWindow(tE float64, p protocol.Params) string {
	lo, hi := score.OnsetWindow(tE, p)
	return score.OpenClosed(lo, hi, tsec)
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

func spans(ss []score.Span) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = span(s)
	}
	return strings.Join(parts, ", ")
}

// judgementRule explains a judged span: the audio, what the ASR heard, what the judge
// answered and what that made of it.
func judgementRule(j *score.Judgement, what, okMeans, failMeans string) string {
	if j == nil {
		return what + " was not judged (no ASR or judge ran): not a success."
	}
	s := fmt.Sprintf("%s (%.2f s of audio) ", what, j.AudioS)
	switch j.Failure {
	case score.FailNoAudio:
		return s + "held no audio to transcribe: " + failMeans + "."
	case score.FailTranscriptionFailed:
		return s + "could not be transcribed (" + j.TranscriptionError + "): " + failMeans + "."
	case score.FailEmptyTranscript:
		return s + "was transcribed as nothing; an empty transcript is " + failMeans + "."
	case score.FailJudgeFailed:
		return s + "was heard as " + strconv.Quote(j.Transcript) + ", but the judge failed (" + j.JudgeError + "): " + failMeans + "."
	case score.FailUnparseable:
		return s + "was heard as " + strconv.Quote(j.Transcript) + "; the judge's reply could not be parsed, which counts as " + failMeans + "."
	}
	s += "was heard as " + strconv.Quote(j.Transcript) + "; the judge said " + strconv.Quote(orDash(j.Label))
	if j.OK {
		return s + ": " + okMeans + "."
	}
	return s + ": " + failMeans + "."
}

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
