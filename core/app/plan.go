package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/plan"
	"github.com/duplexmpe/duplexmpe/core/protocol"
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

// Plan expands an evaluation block into its items (models x conversations x repeats)
// without starting any plugin, finds each item's status in the run store, and estimates
// the audio hours, the disk, and the time to play and score, per model. Item statuses
// are matched by model and scenario: an item finished by a plugin that has changed since
// counts as done here, though `run` plays it again (its id differs).
//
// When the store exposes the plan as data (a-app's evaluate.Survey: a RunPlan of
// PlannedItems, each a store.PlanEntry with its state done, todo, failed, damaged or
// stale), storeStatuses and everyNth give way to it: each PlannedItem becomes a
// plan.Item (Model, ScenarioID, its state as a plan.Status, AudioS from
// conversationSeconds), the stale ones are counted and not estimated, and a shard is the
// items whose id it contains (store.Shard.Contains), not every Nth. The disk check
// before playing should then ask this estimate (16-bit FLAC rates) for what it needs.
func Plan(f *config.File, ev *config.Evaluation, opts PlanOptions) (*PlanResult, error) {
	ds := f.Dataset(ev.Dataset)
	if ds == nil {
		return nil, fault.Deterministicf("evaluation %q: dataset %q is not declared", ev.Name, ev.Dataset)
	}
	shard := opts.Shard
	if shard.Count == 0 {
		shard = store.All
	}
	res := &PlanResult{Evaluation: ev.Name, Out: ev.Out, Shard: shard, Models: len(ev.Models), Repeats: 1}
	scs, preambleS, from, err := planScenarios(ds)
	if err != nil {
		return nil, err
	}
	res.Conversations, res.DurationsFrom = len(scs), from

	status, err := storeStatuses(ev.Out)
	if err != nil {
		return nil, err
	}
	var items []plan.Item
	for _, m := range ev.Models {
		for i := range scs {
			sc := &scs[i]
			st, ok := status[m+"\x00"+sc.ScenarioID]
			if !ok {
				st = plan.Todo
			}
			items = append(items, plan.Item{Model: m, Scenario: sc.ScenarioID, Status: st, AudioS: conversationSeconds(sc, preambleS, ev.Protocol)})
		}
	}
	if shard.Count > 1 {
		// The split is by item id, which needs every plugin's description: a shard is
		// estimated as its share of every model's items.
		items = everyNth(items, shard)
		res.Notes = append(res.Notes, fmt.Sprintf("shard %s is estimated as 1/%d of each model's items; the exact split is by item id, known once the plugins have described themselves", shard, shard.Count))
	}
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

// planScenarios gives the dataset's conversations and the preamble's length: a built
// dataset's as synthesised; otherwise its scripts (generated procedurally, read from
// its scenarios), with lengths from their words at the speaking rate of flite.
func planScenarios(ds *config.Dataset) ([]dataset.Scenario, float64, string, error) {
	if d, err := dataset.Load(ds.Out); err == nil {
		pre := 0.0
		if d.Manifest != nil && d.Manifest.Preamble != nil {
			pre = d.Manifest.Preamble.DurationS
		}
		return d.Scenarios, pre, "the built dataset " + ds.Out, nil
	}
	preWords := len(strings.Fields(construct.DefaultPreamble))
	from := fmt.Sprintf("words at %.3f s each (flite, measured); build the dataset for exact lengths", plan.SecondsPerWord)
	switch {
	case ds.Generate == nil:
		d, err := dataset.Load(ds.Scenarios)
		if err != nil {
			return nil, 0, "", fault.Deterministic(fmt.Errorf("dataset %q: %w", ds.Name, err))
		}
		return withSpokenLengths(d.Scenarios), float64(preWords) * plan.SecondsPerWord, from, nil
	case ds.Generate.Generator == "procedural":
		scs, err := construct.Generate(construct.GenerateSpec{Pairs: ds.Generate.Pairs, Seed: ds.Generate.Seed, FourSpeakerShare: ds.Generate.FourSpeakerShare})
		if err != nil {
			return nil, 0, "", fault.Deterministic(fmt.Errorf("dataset %q: %w", ds.Name, err))
		}
		return withSpokenLengths(scs), float64(preWords) * plan.SecondsPerWord, from, nil
	default:
		// An LLM writes the scripts at build time; the procedural ones stand in for
		// their lengths.
		scs, err := construct.Generate(construct.GenerateSpec{Pairs: ds.Generate.Pairs, Seed: ds.Generate.Seed, FourSpeakerShare: ds.Generate.FourSpeakerShare})
		if err != nil {
			return nil, 0, "", fault.Deterministic(fmt.Errorf("dataset %q: %w", ds.Name, err))
		}
		return withSpokenLengths(scs), float64(preWords) * plan.SecondsPerWord, "procedural scripts of the same size (an LLM writes the real ones); " + from, nil
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

// conversationSeconds is the nominal length of a conversation as played (protocol
// section 3): the preamble and its gap, the turns with a gap after each, the wait after
// T (its onset window, what a model that does not answer gets), N4's gap, the tail.
func conversationSeconds(sc *dataset.Scenario, preambleS float64, p protocol.Params) float64 {
	s := preambleS + p.PreambleGap + p.Tail
	for _, t := range sc.Turns {
		s += t.DurationS + p.TurnGap
		switch t.Label {
		case "T":
			s += p.TOnsetWindow
		case "N4_R":
			s += p.N4Gap
		}
	}
	return s
}

// storeStatuses maps "model\x00scenario" to the status of that item in the run store
// at dir; an empty map when there is no run there yet.
func storeStatuses(dir string) (map[string]plan.Status, error) {
	out := map[string]plan.Status{}
	if _, err := os.Stat(filepath.Join(dir, store.ManifestFile)); errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	st, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	ids, err := st.IDs()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		meta, s, err := st.LoadMeta(id)
		if err != nil {
			continue // unfinished (no marker) or unreadable: to play
		}
		k := meta.Model + "\x00" + meta.ScenarioID
		switch s {
		case store.Done:
			out[k] = plan.Done
		case store.Failed:
			if out[k] != plan.Done {
				out[k] = plan.Failed
			}
		}
	}
	return out, nil
}

// everyNth keeps the shard's share of each model's items.
func everyNth(items []plan.Item, sh store.Shard) []plan.Item {
	var out []plan.Item
	seen := map[string]int{}
	for _, it := range items {
		if seen[it.Model]%sh.Count == sh.Index {
			out = append(out, it)
		}
		seen[it.Model]++
	}
	return out
}
