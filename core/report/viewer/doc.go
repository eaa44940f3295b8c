// Package viewer is the per-conversation half of the report: it reads a run directory's
// items (items/<id>/: the record, the speech episodes, the verdicts; Read), derives the
// event view of each conversation that report.html's explorer filters and that every
// page shows (EventsOf: which measure's denominator each event is in, and whether it is
// a success there), and writes the viewer directory beside report.html (Write): a page
// per conversation with its timeline, the transcribed words of the model, the evidence
// and rule behind every verdict, and a stereo recording of the room and the model. It
// also explains one stored conversation in words (Explain, `duplexmpe explain`).
//
// It is the only part of the report that reads the disk; core/report renders the
// summary and calls it. Every file it writes goes through core/atomicfile (Replace: the
// pages and recordings are derived, remade by the next rendering, so they are not
// synced one by one).
package viewer
