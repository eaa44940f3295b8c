package evaluate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/progress"
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
	// judge): they make the scoring key and the call caches' keys, and head the report.
	Records []provenance.Plugin
	// ASRProcess and JudgeProcess are the plugin processes behind ASR and Judge (nil:
	// in-process, never stopped). One that stopped while an item was scored (crashed,
	// or killed past its call_timeout) leaves that item unscored, named as that
	// scorer's failure, and is restarted with its last config, as a model's plugin is:
	// the rest are scored by the new process.
	ASRProcess, JudgeProcess Process
}

// stopped names the first scorer whose process has stopped (its role and why), so that
// the answers just given are not trusted; "" and nil while both run.
func (sc Scorers) stopped() (string, error) {
	for _, p := range sc.processes() {
		if p.p.Exited() {
			return p.role, fmt.Errorf("the %s plugin %q stopped while scoring", p.role, sc.record(p.role).Name)
		}
	}
	return "", nil
}

type roleProcess struct {
	role string
	p    Process
}

func (sc Scorers) processes() []roleProcess {
	var out []roleProcess
	if sc.ASRProcess != nil {
		out = append(out, roleProcess{sdk.KindASR, sc.ASRProcess})
	}
	if sc.JudgeProcess != nil {
		out = append(out, roleProcess{sdk.KindJudge, sc.JudgeProcess})
	}
	return out
}

// record is the record of the scorer in role; zero when there is none.
func (sc Scorers) record(role string) provenance.Plugin {
	for _, r := range sc.Records {
		if r.Role == role {
			return r
		}
	}
	return provenance.Plugin{Role: role}
}

// ScoreOptions configure Score.
type ScoreOptions struct {
	// Params and VAD are the values to score with; the run's own, normally (its
	// manifest). Episodes are recomputed by Detector when VAD differs from the
	// manifest's.
	Params   protocol.Params
	VAD      protocol.VAD
	Detector *vad.Detector
	// Gold maps each scenario id to its gold answer, and Accepted to the other ways of
	// saying it that count as correct (the scenario's gold_accepted; most have none).
	Gold     map[string]string
	Accepted map[string][]string
	// AnswerTypes maps each scenario id to its answer_type, where it states one.
	AnswerTypes map[string]string
	// Plan is what to score: the run's current plan; nil means st.Planned().
	Plan []store.PlanEntry
	// Verdicts is where the verdicts of each item are kept and reused: a view directory
	// (`score --out`); nil means the run store's own items.
	Verdicts VerdictStore
	// Transcripts and Judgements, when set, keep the ASR's and the judge's answers
	// across scorings (CallCache); a verdict reuses them when its inputs are the same.
	Transcripts, Judgements *CallCache
	// Workers is how many items are scored at once; 0 means GOMAXPROCS (the ASR
	// plugin's decoder pool and the VAD session pool bound the real parallelism).
	Workers int
	// Progress (nil: none) is started with the number of items to score now and
	// counts each one as it is scored or given up.
	Progress *progress.Counter
	// Warn, when set, receives remarks that do not stop scoring (a stored verdicts file
	// that cannot be read, so its item is scored again).
	Warn func(string)
}

// VerdictStore keeps the verdicts of items by id: the run store (store.Store) or a
// view directory (store.View).
type VerdictStore interface {
	LoadVerdicts(id string, v any) error
	SaveVerdicts(id string, v any) error
}

// ScoreResult is what Score did. Every item of the plan is in exactly one of Items
// (scored), Failed, Missing and Unscored.
type ScoreResult struct {
	// Items are the verdicts of every scored item, reused ones first; IDs[i] is the
	// item id of Items[i].
	Items []score.Scored
	IDs   []string
	// Now counts the items scored by this call, Reused those whose stored verdicts had
	// the same key.
	Now, Reused int
	// Failed counts, per model, the failed conversations: they are not scored.
	Failed map[string]int
	// Damaged lists the items of the plan found damaged in the store (store.Check): they
	// are not scored, and count as failed conversations of their model; a run replays
	// them.
	Damaged []string
	// FailedItems are those conversations, each with why it failed.
	FailedItems []FailedItem
	// Missing are the planned items the store has no finished record of (never played,
	// interrupted, or on a shard not merged yet).
	Missing []store.PlanEntry
	// Unscored are the items whose scoring a service failure cut short (an ASR or judge
	// call that failed after its retries): nothing of them is saved or cached, and the
	// next Score tries them again.
	Unscored []Unscored
	// Transcribed and Judged count the ASR and judge calls made; TranscriptsReused and
	// JudgementsReused the answers taken from the call caches instead.
	Transcribed, TranscriptsReused, Judged, JudgementsReused int
	// JudgeVerdicts counts the judged spans over all scored items; Unparseable those
	// whose verdict could not be parsed.
	JudgeVerdicts, Unparseable int
	// Key is the scoring key the verdicts are stored under.
	Key string
	// Restarts counts the scorer plugins restarted after their process stopped.
	Restarts int
}

// DiskFullError stops a scoring: a verdict or a cache could not be written for lack of
// space, and every later write would fail the same way.
type DiskFullError struct {
	Err error
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("the disk is full: %v; scoring stopped at the first write that failed (the items scored before are kept): free some space (or move the run directory), then score again", e.Err)
}

func (e *DiskFullError) Unwrap() error { return e.Err }

// diskFull reports whether err is the file system running out of space (or quota).
func diskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// Complete reports whether every planned item is scored or failed as a conversation.
func (r *ScoreResult) Complete() bool { return len(r.Missing) == 0 && len(r.Unscored) == 0 }

// Summarized is every item of the plan as score.Summarize takes it: the scored items,
// then each failed conversation (Failed: why), each unscored one and each never played
// (Unscored: why). Only the scored ones enter the rates; the others are counted beside
// them per model and condition, so no denominator shrinks unseen.
func (r *ScoreResult) Summarized() []score.Scored {
	out := slices.Clone(r.Items)
	left := func(e store.PlanEntry) score.Scored {
		return score.Scored{Model: e.Model, Condition: e.Condition, PairID: e.PairID, ScenarioID: e.ScenarioID, TPosition: e.TPosition, Repeat: e.Repeat}
	}
	for _, f := range r.FailedItems {
		s := left(f.PlanEntry)
		s.Failed = f.Why
		out = append(out, s)
	}
	for _, u := range r.Unscored {
		s := left(u.PlanEntry)
		s.Unscored = u.String()
		out = append(out, s)
	}
	for _, e := range r.Missing {
		s := left(e)
		s.Unscored = "never played: the run store has no record of it"
		out = append(out, s)
	}
	return out
}

// FailedItem is a planned conversation that failed as it played.
type FailedItem struct {
	store.PlanEntry
	Why string `json:"why"`
}

// Unscored is an item a service failure left unscored.
type Unscored struct {
	store.PlanEntry
	// Service is sdk.KindASR or sdk.KindJudge; Plugin the run file's block name.
	Service string `json:"service"`
	Plugin  string `json:"plugin"`
	Error   string `json:"error"`
}

func (u Unscored) String() string {
	return fmt.Sprintf("%s: the %s plugin %q failed: %s", u.Name(), u.Service, u.Plugin, u.Error)
}

// StoredVerdicts is an item's verdicts.json: the verdicts and the key of what produced
// them.
type StoredVerdicts struct {
	Key    string       `json:"key"`
	Scored score.Scored `json:"scored"`
}

// Score scores every item of the plan that st finished (protocol sections 4 and 5, ASR
// and judge on the answer and on speech in silence windows) and saves each item's
// verdicts. Items already scored under the same key are reused. A scorer call that
// fails leaves its item unscored, and scoring goes on; a returned error means scoring
// stopped early (cancelled, a store that cannot be written): the items scored before
// are saved, and the next Score reuses them.
func Score(ctx context.Context, st *store.Store, sc Scorers, opts ScoreOptions) (ScoreResult, error) {
	res := ScoreResult{Failed: map[string]int{}, Key: ScoringKey(sc.Records, opts.Params, opts.VAD)}
	if opts.Verdicts == nil {
		opts.Verdicts = st
	}
	plan := opts.Plan
	if plan == nil {
		var err error
		if plan, err = st.Planned(); err != nil {
			return res, err
		}
	}
	todo, err := scoringTodo(st, plan, opts, &res)
	if err != nil {
		return res, err
	}

	opts.Progress.Start(len(todo))
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	calls := newScorerCalls(sc, opts)
	outcomes := make([]itemOutcome, len(todo))
	next := make(chan int)
	var (
		wg       sync.WaitGroup
		fullOnce sync.Once
		full     error // the first write that found the disk full
	)
	stop := make(chan struct{})
	for range min(workers, max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				outcomes[i] = scoreItem(ctx, st, todo[i], calls, opts, res.Key)
				if outcomes[i].unscored != nil {
					calls.revive(ctx) // a scorer that stopped serves the next item anew
				}
				opts.Progress.Add(1)
				if err := outcomes[i].err; err != nil && diskFull(err) {
					fullOnce.Do(func() {
						full = err
						close(stop)
					})
				}
			}
		}()
	}
feed:
	for i := range todo {
		if ctx.Err() != nil {
			break
		}
		select {
		case next <- i:
		case <-stop:
			break feed
		}
	}
	close(next)
	wg.Wait()
	res.Restarts = calls.restartCount()
	if full != nil {
		return res, &DiskFullError{Err: full}
	}
	res.Transcribed, res.TranscriptsReused, res.Judged, res.JudgementsReused = calls.counts()
	var errs []error
	for i, o := range outcomes {
		switch {
		case o.err != nil:
			errs = append(errs, o.err)
		case o.unscored != nil:
			res.Unscored = append(res.Unscored, *o.unscored)
		case o.done:
			res.Items = append(res.Items, o.scored)
			res.IDs = append(res.IDs, todo[i].ID)
			res.Now++
		}
	}
	if err := errors.Join(errs...); err != nil || ctx.Err() != nil {
		if err == nil {
			err = ctx.Err()
		}
		return res, fmt.Errorf("scoring stopped (items scored so far are kept): %w", err)
	}
	for _, it := range res.Items {
		u, n := countUnparseable(it)
		res.Unparseable += u
		res.JudgeVerdicts += n
	}
	return res, nil
}

// scoringTodo sorts the plan: items reused (their verdicts under key, into res.Items),
// failed or missing conversations (counted in res), and the finished items to score now.
func scoringTodo(st *store.Store, plan []store.PlanEntry, opts ScoreOptions, res *ScoreResult) ([]store.PlanEntry, error) {
	var todo []store.PlanEntry
	for _, e := range plan {
		switch st.Status(e.ID) {
		case store.Failed:
			res.Failed[e.Model]++
			why := "the conversation failed"
			if f, err := st.Failure(e.ID); err == nil && f != "" {
				why = f
			}
			res.FailedItems = append(res.FailedItems, FailedItem{PlanEntry: e, Why: why})
			continue
		case store.Damaged:
			res.Damaged = append(res.Damaged, e.ID)
			res.Failed[e.Model]++
			why := "its files in the run store are damaged"
			if err := st.Check(e.ID); err != nil {
				why = err.Error()
			}
			res.FailedItems = append(res.FailedItems, FailedItem{PlanEntry: e, Why: why})
			if opts.Warn != nil {
				opts.Warn(why + "; it is not scored")
			}
			continue
		case store.Missing:
			res.Missing = append(res.Missing, e)
			continue
		}
		var prev StoredVerdicts
		if err := opts.Verdicts.LoadVerdicts(e.ID, &prev); err == nil && prev.Key == res.Key {
			prev.Scored.Repeat = e.Repeat // the plan says which repeat the item is
			res.Items = append(res.Items, prev.Scored)
			res.IDs = append(res.IDs, e.ID)
			res.Reused++
			continue
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) && opts.Warn != nil {
			opts.Warn(fmt.Sprintf("item %s: stored verdicts unreadable (%v); scoring it again", e.ID, err))
		}
		todo = append(todo, e)
	}
	return todo, nil
}

// ScoringTodo counts the items of plan that Score would score now with scorers of
// these records (none reused, none failed or missing): zero means scoring needs no
// scorer plugin at all.
func ScoringTodo(st *store.Store, records []provenance.Plugin, opts ScoreOptions) (int, error) {
	res := ScoreResult{Failed: map[string]int{}, Key: ScoringKey(records, opts.Params, opts.VAD)}
	if opts.Verdicts == nil {
		opts.Verdicts = st
	}
	opts.Warn = nil // Score warns
	plan := opts.Plan
	if plan == nil {
		var err error
		if plan, err = st.Planned(); err != nil {
			return 0, err
		}
	}
	todo, err := scoringTodo(st, plan, opts, &res)
	return len(todo), err
}

// itemOutcome is what scoring one item gave: verdicts (done), a service failure
// (unscored), or an error that stops scoring.
type itemOutcome struct {
	scored   score.Scored
	done     bool
	unscored *Unscored
	err      error
}

// scoreItem scores one stored conversation and saves its verdicts. A scorer call that
// failed, or a scorer process that died meanwhile, leaves the item unscored: nothing is
// saved, and the next Score redoes it.
func scoreItem(ctx context.Context, st *store.Store, e store.PlanEntry, calls *scorerCalls, opts ScoreOptions, key string) itemOutcome {
	it, err := st.Load(e.ID)
	if err != nil {
		return itemOutcome{err: err}
	}
	// Section 4: speech episodes of the audible waveform. The recorded ones came from the
	// online detector, which gives exactly the offline episodes for the same settings
	// (core/vad tests that), so they are recomputed only for other settings.
	eps := it.Record.Episodes
	if opts.VAD != st.Manifest().VAD || eps == nil {
		eps, err = opts.Detector.Episodes(it.Record.Audible, opts.VAD)
		if err != nil {
			return itemOutcome{err: fmt.Errorf("item %s (%s, %s): %w", e.ID, it.Meta.Model, it.Meta.ScenarioID, err)}
		}
	}
	gold, ok := opts.Gold[it.Meta.ScenarioID]
	if !ok {
		return itemOutcome{err: fmt.Errorf("item %s: scenario %s is not in the dataset any more; score with the dataset the run played (rebuild it, or run again)", e.ID, it.Meta.ScenarioID)}
	}
	in := score.Item{
		Model: it.Meta.Model, Condition: it.Meta.Condition, PairID: it.Meta.PairID,
		ScenarioID: it.Meta.ScenarioID, TPosition: it.Meta.TPosition, Repeat: it.Meta.Repeat,
		GoldAnswer: gold, GoldAccepted: opts.Accepted[it.Meta.ScenarioID], AnswerType: opts.AnswerTypes[it.Meta.ScenarioID], Timeline: it.Record.Timeline, Episodes: eps,
	}
	item := calls.forItem()
	scored, err := score.Judge(ctx, in, it.Record.Audible, item, item, opts.Params)
	if f := item.failure(); f != nil {
		f.PlanEntry = e
		return itemOutcome{unscored: f}
	}
	if err != nil {
		return itemOutcome{err: err}
	}
	if role, err := calls.sc.stopped(); err != nil {
		return itemOutcome{unscored: &Unscored{PlanEntry: e, Service: role, Plugin: calls.sc.record(role).Name, Error: err.Error()}}
	}
	if err := opts.Verdicts.SaveVerdicts(e.ID, StoredVerdicts{Key: key, Scored: scored}); err != nil {
		return itemOutcome{err: err}
	}
	return itemOutcome{scored: scored, done: true}
}

// scorerCalls make the ASR and judge calls of a scoring, through the call caches.
type scorerCalls struct {
	sc                      Scorers
	asrKey, judgeKey        string
	transcripts, judgements *CallCache

	mu                                                   sync.Mutex
	transcribed, transcriptsReused, judged, judgesReused int
	restarts                                             int
	reviveMu                                             sync.Mutex
}

// newScorerCalls makes the calls of one scoring with sc through opts' call caches.
func newScorerCalls(sc Scorers, opts ScoreOptions) *scorerCalls {
	return &scorerCalls{sc: sc, asrKey: scorerKey(sc.record(sdk.KindASR)), judgeKey: scorerKey(sc.record(sdk.KindJudge)),
		transcripts: opts.Transcripts, judgements: opts.Judgements}
}

// revive restarts the scorers whose process stopped after an item was left unscored,
// one caller at a time; the others find them running again.
func (c *scorerCalls) revive(ctx context.Context) {
	if len(c.sc.processes()) == 0 || ctx.Err() != nil {
		return
	}
	c.reviveMu.Lock()
	defer c.reviveMu.Unlock()
	// A call fails a moment before its process is seen to exit.
	for deadline := time.Now().Add(exitGrace); ; time.Sleep(20 * time.Millisecond) {
		if _, err := c.sc.stopped(); err != nil {
			break
		}
		if time.Now().After(deadline) {
			return // alive: the failure was the service's answer, not a crash
		}
	}
	n := 0
	for _, p := range c.sc.processes() {
		// One that cannot restart leaves its next items unscored, named.
		if p.p.Exited() && p.p.Restart(ctx) == nil {
			n++
		}
	}
	c.mu.Lock()
	c.restarts += n
	c.mu.Unlock()
}

func (c *scorerCalls) restartCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.restarts
}

func (c *scorerCalls) counts() (int, int, int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.transcribed, c.transcriptsReused, c.judged, c.judgesReused
}

func (c *scorerCalls) count(n *int) {
	c.mu.Lock()
	*n++
	c.mu.Unlock()
}

func (c *scorerCalls) forItem() *itemCalls { return &itemCalls{c: c} }

// itemCalls is the ASR and judge of one item's scoring. After the first failed call it
// answers every call with that failure, so the item ends quickly and unscored.
type itemCalls struct {
	c      *scorerCalls
	mu     sync.Mutex
	failed *Unscored
}

func (ic *itemCalls) failure() *Unscored {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return ic.failed
}

// fail records the first failed call of the item; a call ended by cancellation is not
// a service failure.
func (ic *itemCalls) fail(ctx context.Context, service string, err error) error {
	if ctx.Err() != nil {
		return err
	}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.failed == nil {
		ic.failed = &Unscored{Service: service, Plugin: ic.c.sc.record(service).Name, Error: err.Error()}
	}
	return err
}

func (ic *itemCalls) stopped() error {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.failed != nil {
		return errors.New(ic.failed.Error)
	}
	return nil
}

func (ic *itemCalls) Transcribe(ctx context.Context, clip sdk.Audio, language string) (string, error) {
	if err := ic.stopped(); err != nil {
		return "", err
	}
	key := callKey(ic.c.asrKey, "transcribe", language, store.HashPCM(audio.PCM{Samples: clip.Samples, Rate: clip.Rate}))
	var text string
	if ic.c.transcripts.Get(key, &text) {
		ic.c.count(&ic.c.transcriptsReused)
		return text, nil
	}
	text, err := ic.c.sc.ASR.Transcribe(ctx, clip, language)
	if err != nil {
		return "", ic.fail(ctx, sdk.KindASR, err)
	}
	ic.c.count(&ic.c.transcribed)
	return text, ic.c.transcripts.Put(key, text)
}

func (ic *itemCalls) JudgeAnswer(ctx context.Context, q sdk.AnswerQuery) (sdk.Verdict, error) {
	return ic.judge(ctx, "answer", q, func() (sdk.Verdict, error) { return ic.c.sc.Judge.JudgeAnswer(ctx, q) })
}

func (ic *itemCalls) ClassifySpeech(ctx context.Context, q sdk.SpeechQuery) (sdk.Verdict, error) {
	return ic.judge(ctx, "speech", q, func() (sdk.Verdict, error) { return ic.c.sc.Judge.ClassifySpeech(ctx, q) })
}

// judge asks the judge through the cache. A verdict, parsed or not, is the judge's
// answer and is kept; a failed call is not.
func (ic *itemCalls) judge(ctx context.Context, kind string, q any, call func() (sdk.Verdict, error)) (sdk.Verdict, error) {
	if err := ic.stopped(); err != nil {
		return sdk.Verdict{}, err
	}
	raw, _ := json.Marshal(q)
	key := callKey(ic.c.judgeKey, kind, string(raw))
	var v sdk.Verdict
	if ic.c.judgements.Get(key, &v) {
		ic.c.count(&ic.c.judgesReused)
		return v, nil
	}
	v, err := call()
	if err != nil {
		return v, ic.fail(ctx, sdk.KindJudge, err)
	}
	ic.c.count(&ic.c.judged)
	return v, ic.c.judgements.Put(key, v)
}

// scorerKey is what identifies a scorer's behaviour: its record less the run file's
// name for it and its role (a judge renamed in the run file answers as before).
func scorerKey(r provenance.Plugin) string {
	r.Name, r.Role = "", ""
	b, _ := json.Marshal(r)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// callKey is the cache key of one call: the scorer's key and the call's inputs.
func callKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\x00", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ScoringKey names everything that changes a verdict besides the recording itself: the
// scorers (their records less the role, which the key holds beside them), the protocol
// and VAD values, and the revision of the scoring rules (score.RulesVersion, which is
// protocol.ScoringRevision; docs/protocol.md section 10): verdicts made under other rules
// are scored again.
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
	}{ks, p.Canonical(), v, score.RulesVersion})
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
