// Package score turns one recorded conversation (turn timeline + model speech episodes)
// into the verdicts of protocol section 5 (Events, pure), completes them with ASR and
// judge verdicts (Judge), and aggregates them per model and condition (Summarize).
// Section references are to docs/protocol.md, which states every definition this
// package implements and marks the ones the project chose. In short:
//
//   - Times are seconds on the conversation timeline; episodes and windows are half-open
//     [start, end). active(t) is start <= t < end; onset windows are (lo, hi]; the
//     functions are timeline.Active, FirstOnset, Overlapping and Presence (section 4.3),
//     the same ones the scheduler decides with.
//   - The answer judged is the speech presence counts: from the start of the episode
//     active at tE, or the fresh onset, to the next turn (section 5.3).
//   - r is the start of N4_R as recorded; window response is an overlap of [qS, r],
//     closed at r; "silent through the observation end" is no episode overlapping
//     [r + yield_deadline, max(r + yield_deadline, rE + yield_observe)); every N4 event
//     has an outcome in the six-way partition (section 5.5).
//   - Speech in a silence window that has not been judged is not a pass, and a T answer
//     with presence but no judgement is wrong: denominators never shrink because a step
//     was skipped. An ASR or judge call that fails leaves the item unscored instead
//     (ServiceError, section 5.7); failed and unscored items are in no denominator and
//     are counted per entry.
//   - Elapsed-time thirds cut [start of the first human turn, end of the last] (section
//     5.6); the duration sweep fails a window whose speech totals more than X ms.
//   - Model comparisons pair the models under test (Options.Roles, section 6.3) on the
//     scenario pairs both were scored on: exact McNemar over events both count, a
//     bootstrap of the difference of ratio-of-sums rates resampling whole pairs, and
//     Bonferroni over the family's comparisons; Spearman ranks the family's entries.
package score
