package score

import "github.com/duplexmpe/duplexmpe/core/protocol"

// RulesVersion is the revision of the scoring rules: of everything this package decides
// about one item (Events, Judge: windows, spans cut for the ASR, what the judge is asked,
// how its answer becomes a verdict). It is protocol.ScoringRevision, kept in
// core/protocol beside the scheduler's revision and documented in docs/protocol.md
// section 10. Every stored verdict is keyed by it (core/evaluate's scoring key), so a
// run scored under other rules is scored again, never reused.
//
// Bump protocol.ScoringRevision with any change of those decisions. TestRulesVersion
// holds a digest of the verdicts over a fixed corpus (testdata/rules.golden) and fails
// when they change while the revision does not; after bumping, regenerate the golden with
// one command:
//
//	make score-rules    (go test ./core/score -run TestRulesVersion -update-rules)
const RulesVersion = protocol.ScoringRevision
