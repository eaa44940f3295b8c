package app

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/plan"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/core/room"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// PlanOptions are what the command line adds to a plan.
type PlanOptions struct {
	// Shard estimates one slice (store.All: the whole run).
	Shard store.Shard
	// Measured are more run directories to measure the models' rates on (a pilot run);
	// the evaluation's own out directory is always measured.
	Measured []string
	// Rates are configured rates per model (--rtf), over the measured ones.
	Rates map[string]plan.Rates
	// Limit, when above 0, plans what `run --limit` plays: the first Limit pairs of the
	// dataset, both conditions of each (construct.FirstPairs).
	Limit int
}

// PlanResult is what a run file's evaluation will cost.
type PlanResult struct {
	Evaluation string
	Out        string
	Shard      store.Shard
	Models     int
	// Conversations is the dataset's size; Repeats how many times each is played per
	// model (one seed per evaluation).
	Conversations, Repeats int
	Estimate               plan.Estimate
	// DurationsFrom says where the conversations' lengths come from.
	DurationsFrom string
	// FreeBytes is the free space of the filesystem the run store goes on (0: unknown).
	FreeBytes uint64
	// Stale is how many items of earlier plans the run directory keeps: never counted.
	Stale int
	// Limit is PlanOptions.Limit; Build what building the dataset for the run still
	// costs (Plan only: zero in the plan `run` prints, once it has built).
	Limit int
	Build plan.Build
	// Notes are caveats of the estimate, for the reader.
	Notes []string
}

// Fits reports whether the run store and the report, when finished, fit the free disk;
// false when either is unknown.
func (r *PlanResult) Fits() bool {
	d := r.Estimate.Total.DiskBytes + r.Estimate.Total.ReportBytes
	return r.FreeBytes > 0 && d == d && d < float64(r.FreeBytes)
}

// StoreFits reports whether the run store alone, when finished, fits the free disk.
func (r *PlanResult) StoreFits() bool {
	d := r.Estimate.Total.DiskBytes
	return r.FreeBytes > 0 && d == d && d < float64(r.FreeBytes)
}

// Plan estimates what ev will cost, without starting any plugin or building anything.
// It plans the run as `run` does (evaluate.PlanAll, then evaluate.Survey against the run
// directory: exact item ids, repeats, a shard's own items), with every model's identity
// from its record in the run directory (pluginstart.Recall), then estimates the audio
// hours, the disk, and the time to play and score, per model (estimate). Where the
// exact plan needs what only a start or a build gives (a model with no record there, a
// dataset not built yet), that model's items are counted as to play, a shard as its
// share of them, and a note says so. A built dataset is planned as built: `run` rebuilds
// it first, so a script edited since counts as its build has it.
func Plan(s *pluginstart.Starter, ev *config.Evaluation, opts PlanOptions) (*PlanResult, error) {
	ds := s.File.Dataset(ev.Dataset)
	if ds == nil {
		return nil, fault.Deterministicf("evaluation %q: dataset %q is not declared", ev.Name, ev.Dataset)
	}
	scs, clips, from, built, err := planScenarios(ds)
	if err != nil {
		return nil, err
	}
	if opts.Limit > 0 {
		if built != nil {
			b, _ := limitPairs(&BuildResult{Block: ds, Dataset: built}, opts.Limit)
			built = b.Dataset
			scs = built.Scenarios
		} else {
			scs, _ = construct.FirstPairs(scs, opts.Limit)
		}
	}
	// A room built from a clean set (as the build reuses one: in a room only)
	// synthesises only what that set lacks, and its babble.
	acoustics, inRoom, err := ds.Acoustics()
	if err != nil {
		return nil, err
	}
	synthesised, fromClean := built, false
	if built == nil && inRoom && ds.Room.Reuse != "" {
		if clean, err := dataset.Load(ds.Room.Reuse); err == nil {
			synthesised, fromClean = clean, true
		}
	}
	build, err := buildEstimate(ds, synthesised, opts.Limit)
	if err != nil {
		return nil, err
	}
	if fromClean {
		build = withBabble(build, acoustics)
	}
	rp, notes, err := recalledPlan(s, ev, built, scs)
	if err != nil {
		return nil, fmt.Errorf("evaluation %q: %w", ev.Name, err)
	}
	res, err := estimate(ev, scs, clips, from, rp, opts)
	if err != nil {
		return nil, err
	}
	res.Limit, res.Build = opts.Limit, build
	if built != nil && build.Clips > 0 {
		notes = append(notes, fmt.Sprintf("the built dataset lacks %d clips the run plays (fewer pairs built, or scripts edited since): its items are counted as built; `run` synthesises them first", build.Clips))
	}
	res.Notes = append(notes, res.Notes...)
	return res, nil
}

// buildEstimate is what building ds for a run of its first limit pairs (all when
// limit <= 0) still has to synthesise (plan.Build): the lines of the scripts' scenarios
// that the built dataset (nil: none yet) does not hold, each speaker's line once, and
// the preamble when nothing is built.
func buildEstimate(ds *config.Dataset, built *dataset.Dataset, limit int) (plan.Build, error) {
	scripts, _, _, err := scriptScenarios(ds)
	if err != nil {
		return plan.Build{}, err
	}
	need, of := construct.FirstPairs(scripts, limit)
	b := plan.Build{OfPairs: of}
	pairs := map[string]bool{}
	for _, sc := range need {
		pairs[sc.PairID] = true
	}
	b.Pairs = len(pairs)
	have := map[string]bool{}
	inBuilt := map[string]bool{}
	line := func(speaker, text string) string { return speaker + "\x00" + text }
	if built != nil {
		for _, sc := range built.Scenarios {
			inBuilt[sc.ScenarioID] = true
			for _, t := range sc.Turns {
				have[line(t.Speaker, t.Text)] = true
			}
		}
	} else {
		preamble := construct.DefaultPreamble
		if ds.Preamble != "" && ds.Preamble != "default" {
			raw, err := os.ReadFile(ds.Preamble)
			if err != nil {
				return plan.Build{}, fault.Deterministic(fmt.Errorf("dataset %q: preamble: %w", ds.Name, err))
			}
			preamble = string(raw)
		}
		b.Clips++
		b.AudioS += float64(len(strings.Fields(preamble))) * plan.SecondsPerWord
	}
	for _, sc := range need {
		if inBuilt[sc.ScenarioID] {
			continue
		}
		for _, t := range sc.Turns {
			if k := line(t.Speaker, t.Text); !have[k] {
				have[k] = true
				b.Clips++
				b.AudioS += t.DurationS
			}
		}
	}
	b.CPUSeconds = b.AudioS * plan.SynthesisCPUPerAudioS
	return b, nil
}

// withBabble adds to a room's build from a clean set the lines its babble is made of,
// which no clean set holds.
func withBabble(b plan.Build, p room.Preset) plan.Build {
	if p.Background != "babble" {
		return b
	}
	for _, l := range construct.BabbleLines {
		b.Clips++
		b.AudioS += float64(len(strings.Fields(l))) * plan.SecondsPerWord
	}
	b.CPUSeconds = b.AudioS * plan.SynthesisCPUPerAudioS
	return b
}

// Estimate is the cost of playing pl in shard (PlanOptions.Shard), from the same plan
// `run` prints item by item: what `run` prints first.
func (pl *Planned) Estimate(opts PlanOptions) (*PlanResult, error) {
	ds := pl.Build.Dataset
	return estimate(pl.Evaluation, ds.Scenarios, clipsOf(ds), "the built dataset "+ds.Dir, pl.Plan, opts)
}

// recalledPlan plans ev's items and states them against its run directory, with the
// identities the run directory records (nothing is started). The items of a model
// whose identity is not known so (or of every model, when the dataset is not built)
// have no id: they are to play.
func recalledPlan(s *pluginstart.Starter, ev *config.Evaluation, built *dataset.Dataset, scs []dataset.Scenario) (*evaluate.RunPlan, []string, error) {
	var st *store.Store
	if _, err := os.Stat(filepath.Join(ev.Out, store.ManifestFile)); err == nil {
		if st, err = store.Open(ev.Out); err != nil {
			return nil, nil, err
		}
	}
	s = runStarter(s, ev.Out)
	var known []*evaluate.Model
	var unknown, notes []string
	for _, name := range ev.Models {
		b := s.File.Plugin(name)
		if b == nil {
			return nil, nil, fmt.Errorf("model plugin %q is not declared", name)
		}
		if built == nil {
			unknown = append(unknown, name)
			continue
		}
		k, err := s.Recall(b)
		if err == nil && k != nil {
			m := &evaluate.Model{Name: name}
			if err = setModel(m, k); err == nil {
				known = append(known, m)
				continue
			}
		}
		unknown = append(unknown, name)
		why := "it has not described itself in " + ev.Out + " yet"
		if err != nil {
			why = err.Error()
		}
		notes = append(notes, fmt.Sprintf("model %s: every item counted as to play, since what it is is known only once it starts (%s)", name, why))
	}
	if built == nil {
		notes = append(notes, "the dataset is not built: every item is counted as to play; `duplexmpe build` it for the exact plan")
	}
	rp := &evaluate.RunPlan{}
	if len(known) > 0 {
		items, err := evaluate.PlanAll(built, known, evaluate.Options{Params: ev.Protocol, VAD: ev.VAD, Seed: ev.Seed, Repeats: ev.Repeats})
		if err != nil {
			return nil, nil, err
		}
		if rp, err = survey(st, items); err != nil {
			return nil, nil, err
		}
	}
	for _, name := range unknown {
		for i := range scs {
			for r := range max(ev.Repeats, 1) {
				rp.Items = append(rp.Items, evaluate.PlannedItem{PlanEntry: store.PlanEntry{Model: name, ScenarioID: scs[i].ScenarioID, Repeat: r},
					State: store.StateTodo, Why: "not known until it starts"})
			}
		}
	}
	return rp, notes, nil
}

// survey states items against the run directory st (nil: none yet, every item new).
func survey(st *store.Store, items []evaluate.Item) (*evaluate.RunPlan, error) {
	if st != nil {
		return evaluate.Survey(st, items)
	}
	rp := &evaluate.RunPlan{}
	for _, it := range items {
		rp.Items = append(rp.Items, evaluate.PlannedItem{PlanEntry: it.Meta.Entry(), State: store.StateTodo, Why: "new"})
	}
	return rp, nil
}

// estimate is the cost of the items of rp in opts.Shard: each planned item becomes a
// plan.Item (its state, the length of its conversation as the scheduler lays it out for
// the model: plan.ConversationSeconds), the items of earlier plans are counted, not
// estimated, and the models' rates are measured on the run directory and
// opts.Measured, or configured.
func estimate(ev *config.Evaluation, scs []dataset.Scenario, clips plan.Clips, from string, rp *evaluate.RunPlan, opts PlanOptions) (*PlanResult, error) {
	shard := opts.Shard
	if shard.Count == 0 {
		shard = store.All
	}
	res := &PlanResult{Evaluation: ev.Name, Out: ev.Out, Shard: shard, Models: len(ev.Models), Repeats: max(ev.Repeats, 1),
		Conversations: len(scs), DurationsFrom: from}
	measured, err := plan.Measure(append([]string{ev.Out}, opts.Measured...)...)
	if err != nil {
		return nil, err
	}
	rates := map[string]plan.Rates{}
	for _, m := range ev.Models {
		r := opts.Rates[m]
		if mr, ok := measured[m]; ok {
			r = mergeRates(r, mr)
		}
		rates[m] = r
		if r.RTF == 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("model %s: no measured play rate; play a few conversations first (`run` resumes them) or give one with --rtf %s=SECONDS_PER_SECOND", m, m))
		}
	}
	byID := make(map[string]*dataset.Scenario, len(scs))
	for i := range scs {
		byID[scs[i].ScenarioID] = &scs[i]
	}
	seconds := func(e store.PlanEntry) float64 {
		sc := byID[e.ScenarioID]
		if sc == nil {
			return 0
		}
		return plan.ConversationSeconds(sc, clips, ev.Protocol, evaluate.RepeatSeed(ev.Seed, e.Repeat), rates[e.Model].Frame)
	}
	order := map[string]int{}
	for i, m := range ev.Models {
		order[m] = i
	}
	var items []plan.Item
	share := map[string]int{}
	shared := false
	for _, it := range rp.Items {
		if it.ID == "" {
			// No id without the plugin's description: the shard's share of them.
			n := share[it.Model]
			share[it.Model]++
			if n%shard.Count != shard.Index {
				continue
			}
			shared = shard.Count > 1
		} else if !shard.Contains(it.ID) {
			continue
		}
		items = append(items, plan.Item{Model: it.Model, Scenario: it.ScenarioID, Status: it.State, AudioS: seconds(it.PlanEntry)})
	}
	for _, it := range rp.Stale {
		if _, ok := order[it.Model]; ok {
			items = append(items, plan.Item{Model: it.Model, Scenario: it.ScenarioID, Status: store.StateStale})
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return order[items[i].Model] < order[items[j].Model] })
	res.Stale = len(rp.Stale)
	if shared {
		res.Notes = append(res.Notes, fmt.Sprintf("shard %s is estimated as 1/%d of the items whose id is not known yet; the exact split is by item id", shard, shard.Count))
	}
	res.Estimate = plan.EstimateItems(items, rates, plan.Defaults)
	res.FreeBytes, _, _ = freeSpace(ev.Out)
	return res, nil
}

func mergeRates(configured, measured plan.Rates) plan.Rates {
	out := measured
	if configured.RTF > 0 {
		out.RTF = configured.RTF
		out.Source = "configured play rate; " + measured.Source
	}
	return out
}

// planScenarios gives the dataset's conversations and the length of its clips: a built
// dataset's as synthesised; otherwise its scripts (generated procedurally, read from
// its scenarios), with lengths from their words at the speaking rate of flite.
func planScenarios(ds *config.Dataset) ([]dataset.Scenario, plan.Clips, string, *dataset.Dataset, error) {
	if d, err := dataset.Load(ds.Out); err == nil {
		return d.Scenarios, clipsOf(d), "the built dataset " + ds.Out, d, nil
	}
	scs, words, from, err := scriptScenarios(ds)
	return scs, words, from, nil, err
}

// scriptScenarios is the dataset's scripts as written or generated (not built), with
// lengths from their words at the speaking rate of flite.
func scriptScenarios(ds *config.Dataset) ([]dataset.Scenario, plan.Clips, string, error) {
	words := plan.Clips{PreambleS: float64(len(strings.Fields(construct.DefaultPreamble))) * plan.SecondsPerWord}
	from := fmt.Sprintf("words at %.3f s each (flite, measured); build the dataset for exact lengths", plan.SecondsPerWord)
	switch {
	case ds.Generate == nil:
		d, err := dataset.Load(ds.Scenarios)
		if err != nil {
			return nil, plan.Clips{}, "", fault.Deterministic(fmt.Errorf("dataset %q: %w", ds.Name, err))
		}
		return withSpokenLengths(d.Scenarios), words, from, nil
	case ds.Generate.Generator == "procedural":
		scs, err := construct.Generate(construct.GenerateSpec{Pairs: ds.Generate.Pairs, Seed: ds.Generate.Seed, FourSpeakerShare: ds.Generate.FourSpeakerShare})
		if err != nil {
			return nil, plan.Clips{}, "", fault.Deterministic(fmt.Errorf("dataset %q: %w", ds.Name, err))
		}
		return withSpokenLengths(scs), words, from, nil
	default:
		// An LLM writes the scripts at build time; the procedural ones stand in for
		// their lengths.
		scs, err := construct.Generate(construct.GenerateSpec{Pairs: ds.Generate.Pairs, Seed: ds.Generate.Seed, FourSpeakerShare: ds.Generate.FourSpeakerShare})
		if err != nil {
			return nil, plan.Clips{}, "", fault.Deterministic(fmt.Errorf("dataset %q: %w", ds.Name, err))
		}
		return withSpokenLengths(scs), words, "procedural scripts of the same size (an LLM writes the real ones); " + from, nil
	}
}

func withSpokenLengths(scs []dataset.Scenario) []dataset.Scenario {
	for i := range scs {
		for j := range scs[i].Turns {
			t := &scs[i].Turns[j]
			if t.DurationS == 0 {
				t.DurationS = float64(len(strings.Fields(t.Text))) * plan.SecondsPerWord
			}
		}
	}
	return scs
}

// clipsOf is the length of a built dataset's clips: their sample rate and the
// preamble's length (0 when it records none).
func clipsOf(d *dataset.Dataset) plan.Clips {
	var c plan.Clips
	if d.Manifest != nil {
		c.Rate = d.Manifest.SampleRate
		if d.Manifest.Preamble != nil {
			c.PreambleS = d.Manifest.Preamble.DurationS
		}
	}
	return c
}
