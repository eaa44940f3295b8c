package store

// ItemState is the state of an item of a run's plan against the run store: the one
// vocabulary of item states, which `run` (evaluate.Survey) decides and prints and `plan`
// (core/plan) counts and estimates.
type ItemState string

const (
	StateTodo    ItemState = "todo"    // not played yet (new, interrupted, or its earlier plays no longer count): played
	StateDone    ItemState = "done"    // finished in the store: reused
	StateFailed  ItemState = "failed"  // played and failed: a resumed run plays it again
	StateDamaged ItemState = "damaged" // finished, but its files do not read back: played again
	StateStale   ItemState = "stale"   // in the store, not in the plan (another model identity, config, scenario or schedule): kept, never counted
)
