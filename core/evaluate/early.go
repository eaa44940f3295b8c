package evaluate

import (
	"context"
	"runtime"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/progress"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// Early scores items while the evaluation loop still plays others (Options.Finished
// hands it each conversation as it is saved), so that the scorers' CPU goes to the
// conversations played so far instead of waiting for the last one. It only fills the
// store ahead: each verdict is saved under the scoring key exactly as Score saves it,
// through the same call caches, and Score, called after the loop, reuses those and
// scores whatever Early did not (an item a scorer failed on, one still queued when
// the run was cancelled). So the verdicts are the same with or without it
// (TestEarlyScoringGivesTheVerdictsOfScoringAfter).
type Early struct {
	calls *scorerCalls

	queue chan store.PlanEntry
	wg    sync.WaitGroup

	mu       sync.Mutex // guards the counts and progress
	added    int
	finished int // scored, or given up
	done     int // scored
	progress *progress.Counter
}

// EarlyResult is what Early did before Score took over.
type EarlyResult struct {
	// Scored counts the items whose verdicts Early saved; Transcribed, TranscriptsReused,
	// Judged and JudgementsReused its scorer calls, as in ScoreResult.
	Scored                                                   int
	Transcribed, TranscriptsReused, Judged, JudgementsReused int
}

// ScoreEarly starts opts.Workers scoring workers (0: GOMAXPROCS) on st with sc; Add
// queues a finished item, Follow shows what is left, Wait ends them. opts.Progress,
// opts.Plan and opts.Verdicts are not used (the items come from Add; verdicts go to the
// run store).
func ScoreEarly(ctx context.Context, st *store.Store, sc Scorers, opts ScoreOptions) *Early {
	opts.Verdicts = st
	key := ScoringKey(sc.Records, opts.Params, opts.VAD)
	e := &Early{calls: newScorerCalls(sc, opts), queue: make(chan store.PlanEntry, 1<<16)}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	for range workers {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			for it := range e.queue {
				if ctx.Err() != nil {
					continue // drain: Score does the rest
				}
				// An item left unscored, or an error, is Score's to redo and report.
				o := scoreItem(ctx, st, it, e.calls, opts, key)
				if o.unscored != nil {
					e.calls.revive(ctx)
				}
				e.mu.Lock()
				e.finished++
				if o.done {
					e.done++
				}
				e.progress.Add(1)
				e.mu.Unlock()
			}
		}()
	}
	return e
}

// Add queues it, a conversation just saved as finished, for scoring. It does not block
// the evaluation loop: the queue holds 65,536 items, and past that it scores nothing
// more (Score does).
func (e *Early) Add(it store.PlanEntry) {
	select {
	case e.queue <- it:
		e.mu.Lock()
		e.added++
		e.mu.Unlock()
	default:
	}
}

// Pending counts the items queued and not yet scored.
func (e *Early) Pending() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.added - e.finished
}

// Follow starts c (nil: none) with the items queued and not yet scored, and counts in
// it each one as it is scored from now on: the progress of the scoring that is left
// when playing ends.
func (e *Early) Follow(c *progress.Counter) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.progress = c
	c.Start(e.added - e.finished)
}

// Wait scores what is queued, stops the workers and says what they did.
func (e *Early) Wait() EarlyResult {
	close(e.queue)
	e.wg.Wait()
	r := EarlyResult{Scored: e.done}
	r.Transcribed, r.TranscriptsReused, r.Judged, r.JudgementsReused = e.calls.counts()
	return r
}

// Absorb counts in r what Early did before it: the items Early scored were reused by
// Score, so they move from Reused to Now, and Early's scorer calls are added.
func (r *ScoreResult) Absorb(e EarlyResult) {
	n := min(e.Scored, r.Reused)
	r.Now += n
	r.Reused -= n
	r.Transcribed += e.Transcribed
	r.TranscriptsReused += e.TranscriptsReused
	r.Judged += e.Judged
	r.JudgementsReused += e.JudgementsReused
}
