// Package score turns one recorded conversation (turn timeline + model speech episodes)
// into the verdicts of protocol section 5 (Events, pure), completes them with ASR and
// judge verdicts (Judge), and aggregates them per model and condition (Summarize).
// Section references are to shared/spec/protocol.md.
//
// Definitions this package fixes where the protocol leaves room:
//
//   - Times are seconds on the conversation timeline; episodes and windows are half-open
//     [start, end). active(t) is start <= t < end, so an episode starting exactly at tE
//     is "already speaking" and one ending exactly at tE is not active.
//   - Onset windows are (lo, hi]: the T window (tE, tE + t_onset_window] and the N4 gap
//     (qE, r] include their upper end.
//   - r, the resolution onset of an N4 event, is the start of N4_R as recorded (the
//     scheduler plays it at qE + n4_gap; explain insists on it). Window response uses
//     [qS, r). Yield "silent through the observation end" means no episode overlaps
//     [r + yield_deadline, max(r + yield_deadline, rE + yield_observe)).
//   - Every N4 event gets a yield verdict (pass / fail-still-voicing / fail-resumed) so
//     that yield over all N4 events can be reported; the scored yield rate counts only
//     eligible events and is n/a below min_eligible.
//   - Speech in a silence window that has not been judged is not a pass (failure
//     "not-judged"), and a T answer with presence but no judgement is wrong: the
//     denominators never shrink because a step was skipped.
//   - Elapsed-time thirds: the conversation span is [start of the first human turn, end
//     of the last human turn] (preamble and tail excluded), cut into three equal parts;
//     an event belongs to the third its turn starts in (ElapsedThird). T position buckets
//     come from the scenario and apply to every event of the conversation.
//   - Silence duration sweep: a window fails at threshold X ms when its speech totals more
//     than X ms; the judge is not consulted.
//   - Model comparisons pair two models on the scenario pairs both were scored on: exact
//     McNemar over events both count in the denominator (the same turn of the same
//     scenario), a bootstrap of the difference of ratio-of-sums rates resampling whole
//     pairs, and Bonferroni over every comparison in the summary.
package score
