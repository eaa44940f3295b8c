package evaluate

import (
	"context"
	"runtime"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/store"
)

// Early scores items as the evaluation loop finishes them (Options.Played), so that
// scoring overlaps playing: the scorers' CPU goes to the conversations played so far
// while a model still plays the rest. It only fills the store ahead: each verdict is
// saved under the scoring key exactly as Score would save it, and Score, called after
// the loop, reuses those and scores whatever Early did not (an item that failed to
// score here, or was never reached). So the verdicts are the same with or without it.
type Early struct {
	ctx  context.Context
	st   *store.Store
	sc   Scorers
	opts ScoreOptions
	key  string

	queue chan string
	wg    sync.WaitGroup
	mu    sync.Mutex
	done  int
}

// ScoreEarly starts scoring workers (opts.Workers, 0: GOMAXPROCS) on st with sc. Add
// queues a finished item; Wait ends it. opts.Progress is not used (Score counts).
func ScoreEarly(ctx context.Context, st *store.Store, sc Scorers, opts ScoreOptions) *Early {
	if sc.Alive == nil {
		sc.Alive = func() error { return nil }
	}
	e := &Early{ctx: ctx, st: st, sc: sc, opts: opts, key: ScoringKey(sc.Records, opts.Params, opts.VAD), queue: make(chan string, 1<<16)}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	for range workers {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			for id := range e.queue {
				if ctx.Err() != nil {
					continue // drain: Score does the rest
				}
				// An error leaves the item unscored; Score scores it again and reports.
				if _, err := scoreItem(ctx, st, id, sc, opts, e.key); err == nil {
					e.mu.Lock()
					e.done++
					e.mu.Unlock()
				}
			}
		}()
	}
	return e
}

// Add queues item id, just saved as finished, for scoring. It never blocks the loop for
// long: the queue holds 65,536 items.
func (e *Early) Add(id string) { e.queue <- id }

// Wait scores what is queued, stops the workers and says how many items were scored.
func (e *Early) Wait() int {
	close(e.queue)
	e.wg.Wait()
	return e.done
}
