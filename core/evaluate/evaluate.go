// Package evaluate holds the two loops over the items of a run: Run, the evaluation loop,
// plans one item per (model, conversation, repeat), skips the items the run store already
// finished, plays the rest through the scheduler (core/session) with a concurrency limit,
// and saves every record in the run store (core/store); Score, the
// scoring loop (score.go), scores every finished item with an ASR and a judge and saves
// its verdicts under a key of everything that produced them, reusing the verdicts stored
// under the same key. Both take started plugins and a store and know nothing of run
// files; core/app drives them for the commands. They sit side by side so that a later
// step can score an item as soon as it is played.
//
// Concurrency: each model plugin plays Model.Concurrency conversations at a time (1
// unless the plugin says otherwise), and all models run side by side. A plugin process
// that dies fails only the conversations it was playing: it is restarted (with its last
// config) and the loop goes on. Cancelling ctx (Ctrl-C) stops the loop between frames;
// finished items stay, the interrupted ones are left unmarked and run again on resume.
package evaluate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/progress"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/session"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/core/vad"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Model is one model under evaluation.
type Model struct {
	// Name is the run file's plugin block label; it names the model in the store and
	// in reports.
	Name  string
	Model sdk.Model
	// Process is the plugin process behind Model, restarted when it stops; nil for an
	// in-process model.
	Process Process
	Info    sdk.Info       // the plugin's Describe answer, after Configure
	Hash    string         // the plugin's pinned hash (sha256:... or h1:...), if known
	Config  map[string]any // the config block sent with Configure
	// Concurrency is how many conversations the plugin plays at once; 0 means what the
	// plugin declares with the capability sdk.CapConcurrency ("model.concurrency=N"), else 1.
	Concurrency int
	// Instruction is the optional text instruction (capability sdk.CapInstruction).
	Instruction string
	// WallTime bounds one conversation's wall time (session.Options.WallTime; the
	// plugin block's conversation_timeout); 0 means protocol.DefaultConversationWallTime.
	WallTime time.Duration
}

// NewModel wraps a started and configured model plugin: it asks for its description
// (which, after Configure, carries the identity of what it wraps) and its model service.
// hash is the plugin's pinned hash, if known; config is what Configure was given.
func NewModel(ctx context.Context, name string, c *pluginhost.Client, config map[string]any, hash string) (*Model, error) {
	info, err := c.Describe(ctx)
	if err != nil {
		return nil, err
	}
	m, err := c.Model()
	if err != nil {
		return nil, err
	}
	return &Model{Name: name, Model: m, Process: c, Info: info, Hash: hash, Config: config}, nil
}

// Process is a plugin process that the play loop (a model's) and scoring (the ASR's and
// the judge's) restart once it stopped, whether it crashed or the host killed it at a
// missed deadline (frame_timeout, call_timeout): the one interface both loops restart
// through. *pluginhost.Client is one.
type Process interface {
	// Exited reports whether the process has stopped.
	Exited() bool
	// Restart starts the plugin again with its last config.
	Restart(ctx context.Context) error
}

// Record is the model's provenance record.
func (m *Model) Record() provenance.Plugin {
	return provenance.Described(m.Name, sdk.KindModel, m.Info, m.Hash, m.Config)
}

// Options configure the loop.
type Options struct {
	Params   protocol.Params
	VAD      protocol.VAD
	Detector *vad.Detector
	Seed     int64
	// Repeats is how many times every (model, conversation) is played (0 means 1);
	// repeat r plays with RepeatSeed(Seed, r).
	Repeats int
	// FrameDeadline bounds one Step; StartDeadline bounds Start. 0: no bound.
	FrameDeadline time.Duration
	StartDeadline time.Duration
	// Shard selects a deterministic slice of the items (store.All by default).
	Shard store.Shard
	// Concurrency bounds the conversations played at once over all models; 0 means no
	// bound beyond each model's own.
	Concurrency int
	// Progress (nil: none) is started with a part per model (its conversations
	// planned, those reused from the store done already) and counts each conversation
	// saved, played or failed. Run does not finish it: its maker does.
	Progress *progress.Counter
	Logger   hclog.Logger
	// Finished, when set, is told of every conversation saved as done (not failed), as
	// it is saved: how the scoring overlaps the playing (ScoreEarly). It must not block.
	Finished func(store.PlanEntry)
	// Plan, when set, is the plan Run plays (PlanAll's items, as the caller surveyed
	// them) instead of planning again; Run still plays only the items of Shard.
	Plan []Item
	// SameFailures is how many consecutive conversations of one model may fail the
	// same way before its remaining ones are saved as failed without playing (a model
	// that crashes or hangs on every conversation would otherwise cost a restart or a
	// frame deadline each); 0 means DefaultSameFailures, negative never stops.
	SameFailures int
}

// DefaultSameFailures is Options.SameFailures when unset.
const DefaultSameFailures = 3

// Item is one planned (model, conversation).
type Item struct {
	Meta     store.Meta
	Model    *Model
	Scenario *dataset.Scenario
}

// PlanAll lists every item of ds x models, whatever opts.Shard: the whole run, as its
// manifest records it on every shard.
func PlanAll(ds *dataset.Dataset, models []*Model, opts Options) ([]Item, error) {
	opts.Shard = store.All
	return Plan(ds, models, opts)
}

// Plan lists the items of ds x models that fall in opts.Shard, in dataset order per
// model. It hashes every clip (each file once), so a changed clip changes the item id.
// A model need not be started to be planned (its Info and Config are enough); Run
// plays only the items of started ones.
func Plan(ds *dataset.Dataset, models []*Model, opts Options) ([]Item, error) {
	if err := checkModels(models); err != nil {
		return nil, err
	}
	hashes := clipHasher{ds: ds, seen: map[string]string{}}
	preamble, err := hashes.hash(ds.PreamblePath(), "the preamble")
	if err != nil {
		return nil, err
	}
	// A room's background plays under every conversation, so it is part of each one's
	// audio (last, after the turns; a clean set has none, and its keys are as before).
	var bed string
	if p := ds.BackgroundPath(); p != "" {
		if bed, err = hashes.hash(p, "the background"); err != nil {
			return nil, err
		}
	}
	shard := opts.Shard
	if shard.Count == 0 {
		shard = store.All
	}
	var items []Item
	for si := range ds.Scenarios {
		sc := &ds.Scenarios[si]
		content, err := json.Marshal(sc)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.ScenarioID, err)
		}
		sum := sha256.Sum256(content)
		key := store.ScenarioKey{ID: sc.ScenarioID, Condition: sc.Condition, Content: "sha256:" + hex.EncodeToString(sum[:]), Audio: []string{preamble}}
		for ti, t := range sc.Turns {
			if t.Clip == "" {
				return nil, fmt.Errorf("scenario %s (%s line %d) turn %d has no clip: synthesise the dataset first (duplexmpe build)", sc.ScenarioID, ds.File, line(ds, si), ti)
			}
			h, err := hashes.hash(ds.ClipPath(t.Clip), fmt.Sprintf("scenario %s turn %d", sc.ScenarioID, ti))
			if err != nil {
				return nil, err
			}
			key.Audio = append(key.Audio, h)
		}
		if bed != "" {
			key.Audio = append(key.Audio, store.BackgroundKeyPrefix+bed)
		}
		for r := range repeats(opts) {
			for _, m := range models {
				k := store.ItemKey{
					Model: store.ModelKey{Name: m.Name, Plugin: m.Info.Name, Version: m.Info.Version, Hash: m.Hash,
						Identity: m.Info.Identity, Config: sdk.WithoutTransport(m.Info.Config, m.Config)},
					Scenario:    key,
					Schedule:    store.ScheduleOf(opts.Params),
					VAD:         opts.VAD,
					Seed:        RepeatSeed(opts.Seed, r),
					Instruction: m.Instruction,
					Repeat:      r,
				}
				id := k.ID()
				if !shard.Contains(id) {
					continue
				}
				items = append(items, Item{
					Meta: store.Meta{ID: id, Model: m.Name, ScenarioID: sc.ScenarioID, PairID: sc.PairID,
						Condition: sc.Condition, TPosition: sc.TPosition, Repeat: r, Key: k},
					Model: m, Scenario: sc,
				})
			}
		}
	}
	return items, nil
}

func repeats(opts Options) int { return max(opts.Repeats, 1) }

// RepeatSeed is the seed repeat r of a run with seed plays with (docs/protocol.md
// section 6.5): the seed itself for repeat 0, so that a run that does not repeat keeps
// its items; for r >= 1 the first 8 bytes of SHA-256("duplexmpe repeat <seed> <r>"),
// big-endian, with the top bit cleared. Hashing, not seed + r, keeps the repeats of
// seed 1 apart from the first repeats of seeds 2, 3, ...: two runs with neighbouring
// seeds never share plays.
func RepeatSeed(seed int64, r int) int64 {
	if r == 0 {
		return seed
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("duplexmpe repeat %d %d", seed, r)))
	return int64(binary.BigEndian.Uint64(sum[:8]) &^ (1 << 63))
}

func line(ds *dataset.Dataset, i int) int {
	if i < len(ds.Lines) {
		return ds.Lines[i]
	}
	return i + 1
}

func checkModels(models []*Model) error {
	if len(models) == 0 {
		return errors.New("evaluate: no models to evaluate")
	}
	seen := map[string]bool{}
	for _, m := range models {
		if m.Name == "" {
			return errors.New("evaluate: a model has no name")
		}
		if seen[m.Name] {
			return fmt.Errorf("evaluate: model %q is listed twice", m.Name)
		}
		if m.Instruction != "" && !slices.Contains(m.Info.Capabilities, sdk.CapInstruction) {
			return fmt.Errorf("evaluate: model %q has a text instruction, but the plugin does not declare %q and would ignore it; remove the instruction", m.Name, sdk.CapInstruction)
		}
		seen[m.Name] = true
	}
	return nil
}

// clipHasher hashes clip files, each once: "sha256:<hex>" of the file bytes.
type clipHasher struct {
	ds   *dataset.Dataset
	seen map[string]string
}

func (h *clipHasher) hash(path, what string) (string, error) {
	if path == "" {
		return "none", nil
	}
	if s, ok := h.seen[path]; ok {
		return s, nil
	}
	f, _, err := dataset.OpenClipFile(h.ds.Dir, path)
	if err != nil {
		return "", fmt.Errorf("%s: %w (rebuild the dataset with duplexmpe build)", what, err)
	}
	defer f.Close()
	d := sha256.New()
	if _, err := io.Copy(d, f); err != nil {
		return "", fmt.Errorf("%s: %s: %w", what, path, err)
	}
	s := "sha256:" + hex.EncodeToString(d.Sum(nil))
	h.seen[path] = s
	return s, nil
}

// NewManifest fills a run manifest with what this package knows: the model plugins, the
// dataset, the seeds (one per repeat), the protocol and VAD values. The caller adds the harness build, the
// resolved config and the other plugins (tts, asr, judge) before store.Create.
func NewManifest(name string, ds *dataset.Dataset, models []*Model, opts Options) (store.Manifest, error) {
	m := store.Manifest{Name: name, Params: opts.Params, VAD: opts.VAD}
	for r := range repeats(opts) {
		m.Seeds = append(m.Seeds, RepeatSeed(opts.Seed, r))
	}
	for _, mo := range models {
		m.Plugins = append(m.Plugins, mo.Record())
	}
	raw, err := os.ReadFile(ds.File)
	if err != nil {
		return m, fmt.Errorf("dataset: %w", err)
	}
	m.Dataset = provenance.Dataset{Hash: dataset.ContentHash(raw), Scenarios: len(ds.Scenarios)}
	if ds.Manifest != nil {
		m.Dataset.Name, m.Dataset.Version = ds.Manifest.Name, ds.Manifest.Version
		if ds.Manifest.Room != nil {
			m.Dataset.Acoustics = ds.Manifest.Room.Preset
		}
	}
	return m, nil
}

// Summary counts what Run did, per model and in total.
type Summary struct {
	Models map[string]*Counts
	Total  Counts
}

// Counts for one model (or all).
type Counts struct {
	Planned  int // items in this shard
	Reused   int // already done in the store
	Done     int // played now and finished
	Failed   int // played now and failed (saved as failed; a resumed run retries them)
	Restarts int // plugin restarts after a crash or a missed deadline
	Damaged  int // found damaged in the store (store.Damaged) and played again
}

func (c *Counts) add(o Counts) {
	c.Planned += o.Planned
	c.Reused += o.Reused
	c.Done += o.Done
	c.Failed += o.Failed
	c.Restarts += o.Restarts
	c.Damaged += o.Damaged
}

// Run plans the items and plays every one that st has not finished, saving each record.
// It returns the counts; an error means the loop stopped early (cancelled, a plugin that
// cannot be restarted, a store that cannot be written): what finished before is saved.
func Run(ctx context.Context, ds *dataset.Dataset, models []*Model, st *store.Store, opts Options) (Summary, error) {
	sum := Summary{Models: map[string]*Counts{}}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if err := opts.Params.Validate(); err != nil {
		return sum, err
	}
	if err := CheckGaps(ds, opts.Params); err != nil {
		return sum, err
	}
	items := opts.Plan
	if items == nil {
		var err error
		if items, err = Plan(ds, models, opts); err != nil {
			return sum, err
		}
	} else if opts.Shard.Count > 1 {
		items = slices.DeleteFunc(slices.Clone(items), func(it Item) bool { return !opts.Shard.Contains(it.Meta.ID) })
	}
	// Before anything plays, so that `merge` knows what a shard owes even when it is
	// killed at its first conversation.
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.Meta.ID
	}
	if err := st.RecordShard(opts.Shard, ids); err != nil {
		return sum, err
	}
	preamble, err := loadPreamble(ds)
	if err != nil {
		return sum, err
	}
	bed, err := ds.ReadBackground()
	if err != nil {
		return sum, err
	}

	queues := map[string][]Item{}
	for _, m := range models {
		sum.Models[m.Name] = &Counts{}
	}
	for _, it := range items {
		c := sum.Models[it.Model.Name]
		c.Planned++
		switch st.Status(it.Meta.ID) {
		case store.Done:
			c.Reused++
			continue
		case store.Damaged:
			c.Damaged++
			opts.Logger.Warn("a finished conversation is damaged in the run store; playing it again",
				"model", it.Model.Name, "scenario", it.Meta.ScenarioID, "reason", st.Check(it.Meta.ID))
		}
		if it.Model.Model == nil {
			return sum, fmt.Errorf("evaluate: model %q has items to play but was not started", it.Model.Name)
		}
		queues[it.Model.Name] = append(queues[it.Model.Name], it)
	}
	var shares []progress.Share
	for _, m := range models {
		c := sum.Models[m.Name]
		shares = append(shares, progress.Share{Name: m.Name, Total: c.Planned, Reused: c.Reused})
	}
	opts.Progress.StartParts(shares...)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var slots chan struct{} // the global bound, when set
	if opts.Concurrency > 0 {
		slots = make(chan struct{}, opts.Concurrency)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex // guards sum and firstErr
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	var runners []*runner
	for _, m := range models {
		// A model whose plugin cannot be restarted stops alone; the others go on.
		mctx, stop := context.WithCancelCause(ctx)
		defer stop(nil)
		r := &runner{m: m, st: st, opts: opts, preamble: preamble, bed: bed, ds: ds, stop: stop}
		runners = append(runners, r)
		work := make(chan Item)
		go func(q []Item) {
			defer close(work)
			for _, it := range q {
				select {
				case work <- it:
				case <-mctx.Done():
					return
				}
			}
		}(queues[m.Name])
		for range ModelConcurrency(m) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for it := range work {
					if slots != nil {
						select {
						case slots <- struct{}{}:
						case <-mctx.Done():
							return
						}
					}
					c, err := r.play(mctx, it)
					if slots != nil {
						<-slots
					}
					mu.Lock()
					sum.Models[m.Name].add(c)
					mu.Unlock()
					if mctx.Err() != nil {
						return // the run was cancelled, or this model stopped
					}
					if err != nil {
						fail(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	for _, name := range sortedNames(sum.Models) {
		sum.Total.add(*sum.Models[name])
	}
	if firstErr != nil {
		return sum, firstErr
	}
	if err := context.Cause(ctx); err != nil {
		return sum, err
	}
	var errs []error
	for _, r := range runners {
		if r.dead != nil {
			errs = append(errs, r.dead)
		}
	}
	return sum, errors.Join(errs...)
}

// ModelConcurrency is how many conversations m plays at once: m.Concurrency when set,
// else what the plugin declares (sdk.CapConcurrency), else 1.
func ModelConcurrency(m *Model) int {
	if m.Concurrency > 0 {
		return m.Concurrency
	}
	return max(sdk.Concurrency(m.Info.Capabilities), 1)
}

func sortedNames(m map[string]*Counts) []string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func loadPreamble(ds *dataset.Dataset) (audio.PCM, error) {
	path := ds.PreamblePath()
	if path == "" {
		return audio.PCM{}, nil
	}
	p, err := ds.ReadClip(ds.Manifest.Preamble.Clip)
	if err != nil {
		return p, fmt.Errorf("the dataset's preamble: %w", err)
	}
	return p, nil
}

// runner plays one model's items.
type runner struct {
	m        *Model
	st       *store.Store
	opts     Options
	preamble audio.PCM
	bed      audio.PCM // a room's background loop, or none
	ds       *dataset.Dataset
	stop     context.CancelCauseFunc // stops this model's items

	restartMu sync.Mutex
	dead      error // set when the plugin died and could not be restarted

	failMu    sync.Mutex
	lastFail  string // the last failure, its conversation's id taken out and numbers masked
	sameFails int    // consecutive conversations that failed as lastFail
	given     string // set once the model is given up: why its remaining items fail
}

// noteOutcome counts consecutive failures of the same kind (record.Record.FailureKind:
// a start, a missed deadline, an error from a step, bad audio, ...), never by their
// text, which may differ every time (a random temporary path in an exception); at
// Options.SameFailures in a row the model is given up. It reports whether this failure
// gave it up.
//
// A plugin that died is one kind of failure whatever the record says: how the host
// learned it (the stream broke, or the process was seen exiting first) depends on
// timing, and so does the kind the session saw.
func (r *runner) noteOutcome(rec *record.Record, died bool) bool {
	r.failMu.Lock()
	defer r.failMu.Unlock()
	if !rec.Failed() {
		r.lastFail, r.sameFails = "", 0
		return false
	}
	key := rec.FailureKind
	if died {
		key = record.FailDied
	}
	if key == r.lastFail {
		r.sameFails++
	} else {
		r.lastFail, r.sameFails = key, 1
	}
	limit := r.opts.SameFailures
	if limit == 0 {
		limit = DefaultSameFailures
	}
	if limit < 0 || r.sameFails < limit || r.given != "" {
		return false
	}
	r.given = fmt.Sprintf("not played: model %s failed %d conversations in a row the same way (%s; last: %s); fix the model (or its plugin block) and run again, which plays these", r.m.Name, r.sameFails, kindName(key), rec.Failure)
	return true
}

// kindName says a failure kind in words.
func kindName(kind string) string {
	switch kind {
	case record.FailStart:
		return "it could not start a conversation"
	case record.FailFormat:
		return "its format was refused"
	case record.FailDeadline:
		return "it missed a deadline"
	case record.FailStep:
		return "it answered a frame with an error"
	case record.FailAudio:
		return "it sent audio that is not finite"
	case record.FailQueue:
		return "it queued too much audio"
	case record.FailWallTime:
		return "it ran past the conversation's wall-time bound"
	case record.FailDied:
		return "its plugin process died"
	}
	return "failed: " + kind
}

func (r *runner) sameFailsNow() int {
	r.failMu.Lock()
	defer r.failMu.Unlock()
	return r.sameFails
}

// givenUp is why the model's remaining items fail unplayed; "" while it plays.
func (r *runner) givenUp() string {
	r.failMu.Lock()
	defer r.failMu.Unlock()
	return r.given
}

// play runs one item and saves it. The error stops the whole loop.
func (r *runner) play(ctx context.Context, it Item) (Counts, error) {
	var c Counts
	log := r.opts.Logger.With("model", r.m.Name, "scenario", it.Meta.ScenarioID, "item", it.Meta.ID)
	if why := r.givenUp(); why != "" {
		// Saved as failed, so that the report counts it and a resumed run plays it.
		if err := r.st.Save(it.Meta, &record.Record{ConversationID: it.Meta.ScenarioID, Failure: why}); err != nil {
			return c, err
		}
		r.opts.Progress.AddTo(r.m.Name, 1)
		c.Failed++
		return c, nil
	}
	conv, err := r.conversation(it)
	if err != nil {
		return c, err
	}
	rec, err := session.Run(ctx, r.m.Model, conv, session.Options{
		Params: r.opts.Params, VAD: r.opts.VAD, Detector: r.opts.Detector,
		Seed: it.Meta.Key.Seed, Instruction: r.m.Instruction,
		FrameDeadline: r.opts.FrameDeadline, StartDeadline: r.opts.StartDeadline, WallTime: r.m.WallTime,
	})
	if err != nil {
		if ctx.Err() != nil {
			return c, context.Cause(ctx)
		}
		return c, fmt.Errorf("model %s, scenario %s: %w", r.m.Name, it.Meta.ScenarioID, err)
	}
	if err := r.st.Save(it.Meta, rec); err != nil {
		return c, err
	}
	r.opts.Progress.AddTo(r.m.Name, 1)
	if !rec.Failed() {
		r.noteOutcome(rec, false)
		c.Done++
		if r.opts.Finished != nil {
			r.opts.Finished(it.Meta.Entry())
		}
		log.Debug("conversation done", "frames", rec.Frames, "episodes", len(rec.Episodes))
		if r.m.Process != nil && r.m.Process.Exited() {
			// It finished but the plugin did not close it in time and was killed.
			restarted, err := r.restartIfDead(ctx)
			if restarted {
				c.Restarts++
			}
			return c, err
		}
		return c, nil
	}
	c.Failed++
	log.Warn("conversation failed", "reason", rec.Failure)
	died := r.pluginDied()
	if gaveUp := r.noteOutcome(rec, died); gaveUp {
		// One message for the model; its remaining conversations fail unplayed, and
		// its plugin is not restarted for them.
		log.Error("giving up on a model: the same failure on consecutive conversations; its remaining conversations are saved as failed without playing",
			"consecutive", r.sameFailsNow(), "reason", rec.Failure)
		return c, nil
	}
	if !died {
		return c, nil // alive: the failure was the model's answer, not a crash
	}
	restarted, err := r.restartIfDead(ctx)
	if restarted {
		c.Restarts++
	}
	return c, err
}

// CheckGaps refuses gap_profile "natural" on a dataset that records no natural gap for
// some ordinary turn (docs/protocol.md section 3.3): that turn would be followed by no
// silence at all.
func CheckGaps(ds *dataset.Dataset, p protocol.Params) error {
	if !p.Natural() {
		return nil
	}
	for _, sc := range ds.Scenarios {
		for i, t := range sc.Turns {
			if i < len(sc.Turns)-1 && t.Label != protocol.LabelT && t.Label != protocol.LabelN4Q && t.GapAfterS <= 0 {
				return fault.Deterministic(fmt.Errorf("gap_profile = \"natural\": scenario %s turn %d has no natural gap (gap_after_s) in %s; use gap_profile = \"paper\", or a set compiled with gaps (duplexmpe dataset compile)", sc.ScenarioID, i, ds.File))
			}
		}
	}
	return nil
}

// conversation loads the audio of one scenario.
func (r *runner) conversation(it Item) (session.Conversation, error) {
	conv := session.Conversation{ID: it.Meta.ScenarioID, PairID: it.Meta.PairID, Preamble: r.preamble,
		Background: r.bed, BackgroundAt: dataset.BedOffset(it.Meta.PairID, len(r.bed.Samples))}
	for i, t := range it.Scenario.Turns {
		pcm, err := r.ds.ReadClip(t.Clip)
		if err != nil {
			return conv, fmt.Errorf("scenario %s turn %d: %w (rebuild the dataset with duplexmpe build)", it.Meta.ScenarioID, i, err)
		}
		addressee := t.Addressee
		if addressee == "none" {
			addressee = ""
		}
		conv.Turns = append(conv.Turns, session.Turn{Index: i, Label: t.Label, Speaker: t.Speaker, Text: t.Text, Addressee: addressee, Audio: pcm, GapAfterS: t.GapAfterS})
	}
	return conv, nil
}

// exitGrace is how long a failed conversation's plugin gets to be seen as exited: the
// stream breaks a moment before the process is reaped.
const exitGrace = time.Second

// pluginDied reports whether the model's plugin process has exited, waiting up to
// exitGrace for a process whose stream broke to be reaped.
func (r *runner) pluginDied() bool {
	cl := r.m.Process
	if cl == nil {
		return false
	}
	deadline := time.Now().Add(exitGrace)
	for !cl.Exited() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// restartIfDead restarts the plugin when its process died. Only one goroutine restarts;
// the others find it running again. When the restart fails, the model stops: its other
// items stay unplayed and Run reports the error at the end.
func (r *runner) restartIfDead(ctx context.Context) (bool, error) {
	cl := r.m.Process
	if cl == nil {
		return false, nil
	}
	r.restartMu.Lock()
	defer r.restartMu.Unlock()
	if r.dead != nil {
		return false, nil
	}
	if !r.pluginDied() {
		return false, nil // alive: the failure was the model's answer, not a crash
	}
	r.opts.Logger.Warn("plugin process died; restarting it", "model", r.m.Name)
	if err := cl.Restart(ctx); err != nil {
		if ctx.Err() != nil {
			return false, nil
		}
		r.dead = fmt.Errorf("model %s: the plugin process died and could not be restarted, so its remaining conversations were not played (a resumed run plays them): %w", r.m.Name, err)
		r.opts.Logger.Error("giving up on a model", "model", r.m.Name, "error", err)
		r.stop(r.dead)
		return false, nil
	}
	return true, nil
}
