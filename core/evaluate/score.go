package evaluate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Scorers are the ASR and judge a run is scored with.
type Scorers struct {
	ASR   sdk.ASR
	Judge sdk.Judge
	// Records are the provenance records of the ASR and judge plugins (roles asr and
	// judge): they make the scoring key, and head the report.
	Records []provenance.Plugin
	// Alive reports why the verdicts just given cannot be trusted, when a scorer's
	// process has stopped meanwhile; nil means all is well. Nil: always alive.
	Alive func() error
}

// ScoreOptions configure Score.
type ScoreOptions struct {
	// Params and VAD are the values to score with; the run's own, normally (its
	// manifest). Episodes are recomputed by Detector when VAD differs from the
	// manifest's.
	Params   protocol.Params
	VAD      protocol.VAD
	Detector *vad.Detector
	// Gold maps each scenario id to its gold answer.
	Gold map[string]string
	// Workers is how many items are scored at once; 0 means GOMAXPROCS (the ASR
	// plugin's decoder pool and the VAD session pool bound the real parallelism).
	Workers int
	// Progress, when set, is told how many items are to be scored now and of each
	// one done.
	Progress Progress
	// Warn, when set, receives remarks that do not stop scoring (a stored verdicts file
	// that cannot be read, so its item is scored again).
	Warn func(string)
}

// Progress is told how much work there is and of each unit done (ok: without error).
type Progress interface {
	Start(total int)
	Clip(ok bool)
}

// ScoreResult is what Score did.
type ScoreResult struct {
	// Items are the verdicts of every finished conversation, reused ones first.
	Items []score.Scored
	// Now counts the items scored by this call, Reused those whose stored verdicts had
	// the same key.
	Now, Reused int
	// Failed counts, per model, the failed conversations: they are not scored.
	Failed map[string]int
	// Damaged lists the items found damaged in the store (store.Check): they are not
	// scored, and count as failed under the model their key names; a run replays them.
	Damaged []string
	// JudgeVerdicts counts the judged spans over all items; Unparseable those whose
	// verdict could not be parsed.
	JudgeVerdicts, Unparseable int
	// Key is the scoring key the verdicts are stored under.
	Key string
}

// StoredVerdicts is an item's verdicts.json: the verdicts and the key of what produced
// them.
type StoredVerdicts struct {
	Key    string       `json:"key"`
	Scored score.Scored `json:"scored"`
}

// Score scores every finished item of st (protocol sections 4 and 5, ASR and judge on
// the answer and on speech in silence windows) and saves each item's verdicts. Items
// already scored under the same key are reused. An error means scoring stopped early:
// the items scored before are saved, and the next Score reuses them.
func Score(ctx context.Context, st *store.Store, sc Scorers, opts ScoreOptions) (ScoreResult, error) {
	res := ScoreResult{Failed: map[string]int{}, Key: ScoringKey(sc.Records, opts.Params, opts.VAD)}
	if sc.Alive == nil {
		sc.Alive = func() error { return nil }
	}
	ids, err := st.IDs()
	if err != nil {
		return res, err
	}
	var todo []string
	for _, id := range ids {
		switch st.Status(id) {
		case store.Failed:
			if meta, _, err := st.LoadMeta(id); err == nil {
				res.Failed[meta.Model]++
			}
			continue
		case store.Damaged:
			res.Damaged = append(res.Damaged, id)
			if opts.Warn != nil {
				opts.Warn(fmt.Sprintf("%v; it is not scored", st.Check(id)))
			}
			if m, ok := damagedModel(st, id); ok {
				res.Failed[m]++
			}
			continue
		case store.Missing:
			continue
		}
		var prev StoredVerdicts
		if err := st.LoadVerdicts(id, &prev); err == nil && prev.Key == res.Key {
			res.Items = append(res.Items, prev.Scored)
			res.Reused++
			continue
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) && opts.Warn != nil {
			opts.Warn(fmt.Sprintf("item %s: stored verdicts unreadable (%v); scoring it again", id, err))
		}
		todo = append(todo, id)
	}

	if opts.Progress != nil {
		opts.Progress.Start(len(todo))
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make([]score.Scored, len(todo))
	errs := make([]error, len(todo))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i], errs[i] = scoreItem(ctx, st, todo[i], sc, opts, res.Key)
				if opts.Progress != nil {
					opts.Progress.Clip(errs[i] == nil)
				}
			}
		}()
	}
	for i := range todo {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil || ctx.Err() != nil {
		if err == nil {
			err = ctx.Err()
		}
		return res, fmt.Errorf("scoring stopped (items scored so far are kept): %w", err)
	}
	res.Items = append(res.Items, results...)
	res.Now = len(results)
	for _, it := range res.Items {
		u, n := countUnparseable(it)
		res.Unparseable += u
		res.JudgeVerdicts += n
	}
	return res, nil
}

// damagedModel is the model a damaged item belongs to, by the key in its item.json, when
// that model is one of the run's: the table then counts it as a failed conversation.
func damagedModel(st *store.Store, id string) (string, bool) {
	var meta store.Meta
	b, err := os.ReadFile(filepath.Join(st.ItemDir(id), "item.json"))
	if err != nil || json.Unmarshal(b, &meta) != nil {
		return "", false
	}
	for _, p := range st.Manifest().Plugins {
		if p.Role == sdk.KindModel && p.Name == meta.Key.Model.Name {
			return p.Name, true
		}
	}
	return "", false
}

// scoreItem scores one stored conversation and saves its verdicts, unless a scorer
// stopped meanwhile or a transcription or judge call failed (score.ServiceError,
// docs/protocol.md section 5.7): such an item is left for the next Score to redo.
func scoreItem(ctx context.Context, st *store.Store, id string, sc Scorers, opts ScoreOptions, key string) (score.Scored, error) {
	it, err := st.Load(id)
	if err != nil {
		return score.Scored{}, err
	}
	// Section 4: speech episodes of the audible waveform. The recorded ones came from the
	// online detector, which gives exactly the offline episodes for the same settings
	// (core/vad tests that), so they are recomputed only for other settings.
	eps := it.Record.Episodes
	if opts.VAD != st.Manifest().VAD || eps == nil {
		eps, err = opts.Detector.Episodes(it.Record.Audible, opts.VAD)
		if err != nil {
			return score.Scored{}, fmt.Errorf("item %s (%s, %s): %w", id, it.Meta.Model, it.Meta.ScenarioID, err)
		}
	}
	gold, ok := opts.Gold[it.Meta.ScenarioID]
	if !ok {
		return score.Scored{}, fmt.Errorf("item %s: scenario %s is not in the dataset any more; score with the dataset the run played (rebuild it, or run again)", id, it.Meta.ScenarioID)
	}
	in := score.Item{
		Model: it.Meta.Model, Condition: it.Meta.Condition, PairID: it.Meta.PairID,
		ScenarioID: it.Meta.ScenarioID, TPosition: it.Meta.TPosition,
		GoldAnswer: gold, Timeline: it.Record.Timeline, Episodes: eps,
	}
	scored, err := score.Judge(ctx, in, it.Record.Audible, sc.ASR, sc.Judge, opts.Params)
	if err != nil {
		return score.Scored{}, err
	}
	if err := sc.Alive(); err != nil {
		return score.Scored{}, err
	}
	if err := st.SaveVerdicts(id, StoredVerdicts{Key: key, Scored: scored}); err != nil {
		return score.Scored{}, err
	}
	return scored, nil
}

// ScoringKey names everything that changes a verdict besides the recording itself: the
// scorers (their records less the role, which the key holds beside them), the protocol
// and the VAD values, and the revision of the scoring rules (protocol.ScoringRevision,
// docs/protocol.md section 10): verdicts made under other rules are scored again.
func ScoringKey(scorers []provenance.Plugin, p protocol.Params, v protocol.VAD) string {
	type keyed struct {
		Role   string            `json:"role"`
		Plugin provenance.Plugin `json:"plugin"`
		Config map[string]any    `json:"config,omitempty"`
	}
	ks := make([]keyed, len(scorers))
	for i, s := range scorers {
		ks[i] = keyed{Role: s.Role, Config: s.Config,
			Plugin: provenance.Plugin{Name: s.Name, Plugin: s.Plugin, Version: s.Version, Hash: s.Hash, Identity: s.Identity}}
	}
	raw, _ := json.Marshal(struct {
		Scorers  []keyed
		Protocol protocol.Params
		VAD      protocol.VAD
		Rules    int
	}{ks, p, v, protocol.ScoringRevision})
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// countUnparseable counts the judged spans of an item and those whose verdict could not
// be parsed.
func countUnparseable(s score.Scored) (unparseable, judged int) {
	for _, ev := range s.Events {
		var j *score.Judgement
		switch {
		case ev.T != nil && ev.T.Answer != nil:
			j = ev.T.Answer
		case ev.Silence != nil && ev.Silence.Judgement != nil:
			j = ev.Silence.Judgement
		default:
			continue
		}
		judged++
		if j.Failure == score.FailUnparseable {
			unparseable++
		}
	}
	return unparseable, judged
}
