package evaluate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/store"
)

// PlannedItem is one item of a run plan with its state in the store, and why: for a
// todo item "new" or what changed since an earlier play of the same model and scenario
// (a changed model identity, config or hash, scenario content or audio, schedule); for
// a failed one the failure; for a damaged one the damage; for a stale one which current
// item replaces it, if any.
type PlannedItem struct {
	store.PlanEntry
	State store.ItemState `json:"state"`
	Why   string          `json:"why,omitempty"`
}

// RunPlan is what a run consists of now and what its store holds of it: the plan as
// data, for `run` to say what it reuses and plays and for the `plan` command to print.
type RunPlan struct {
	// Items is the current plan in plan order (every shard's items).
	Items []PlannedItem `json:"items"`
	// Stale are the items in the store that the plan does not hold.
	Stale []PlannedItem `json:"stale,omitempty"`
}

// Survey states every planned item against st (items of all shards: a shard plays only
// its own). Items on disk outside the plan are Stale; a todo item that replaces one of
// them says what changed.
func Survey(st *store.Store, items []Item) (*RunPlan, error) {
	plan := &RunPlan{}
	in := make(map[string]bool, len(items))
	for _, it := range items {
		in[it.Meta.ID] = true
	}
	ids, err := st.IDs()
	if err != nil {
		return nil, err
	}
	// Earlier plays of the same (model, scenario, repeat), by the key they were played
	// under.
	type play struct {
		model, scenario string
		repeat          int
	}
	earlier := map[play][]store.Meta{}
	for _, id := range ids {
		if in[id] {
			continue
		}
		m, err := st.ReadMeta(id)
		if err != nil || m.ID != id {
			plan.Stale = append(plan.Stale, PlannedItem{PlanEntry: store.PlanEntry{ID: id}, State: store.StateStale, Why: "unreadable item.json"})
			continue
		}
		k := play{m.Model, m.ScenarioID, m.Repeat}
		earlier[k] = append(earlier[k], m)
		plan.Stale = append(plan.Stale, PlannedItem{PlanEntry: m.Entry(), State: store.StateStale})
	}
	replaced := map[string]string{} // stale id -> the current item replacing it
	for _, it := range items {
		p := PlannedItem{PlanEntry: it.Meta.Entry()}
		switch st.Status(it.Meta.ID) {
		case store.Done:
			p.State = store.StateDone
		case store.Failed:
			p.State = store.StateFailed
			p.Why, _ = st.Failure(it.Meta.ID)
		case store.Missing:
			p.State, p.Why = store.StateTodo, "new"
			if prev := earlier[play{it.Meta.Model, it.Meta.ScenarioID, it.Meta.Repeat}]; len(prev) > 0 {
				old := closest(prev, it.Meta.Key)
				p.Why = strings.Join(it.Meta.Key.Changes(old.Key), "; ")
				replaced[old.ID] = it.Meta.ID
			}
		case store.Damaged:
			p.State, p.Why = store.StateDamaged, "its files do not read back"
			if err := st.Check(it.Meta.ID); err != nil {
				p.Why = err.Error()
			}
		}
		plan.Items = append(plan.Items, p)
	}
	for i := range plan.Stale {
		if by, ok := replaced[plan.Stale[i].ID]; ok {
			plan.Stale[i].Why = "replaced by item " + by
		}
	}
	return plan, nil
}

// closest is the earlier play whose key differs from k in the fewest places.
func closest(prev []store.Meta, k store.ItemKey) store.Meta {
	best, n := prev[0], -1
	for _, m := range prev {
		if c := len(k.Changes(m.Key)); n < 0 || c < n {
			best, n = m, c
		}
	}
	return best
}

// Count is how many planned items are in state, for model ("" for all).
func (p *RunPlan) Count(model string, state store.ItemState) int {
	n := 0
	for _, it := range p.Items {
		if it.State == state && (model == "" || it.Model == model) {
			n++
		}
	}
	return n
}

// ToPlay is how many items of model ("" for all) a run plays: todo, failed, damaged.
func (p *RunPlan) ToPlay(model string) int {
	return p.Count(model, store.StateTodo) + p.Count(model, store.StateFailed) + p.Count(model, store.StateDamaged)
}

// Reasons sums up why model's todo items are to be played: each distinct reason
// ("new", or what changed) with how many items it holds for, most frequent first.
func (p *RunPlan) Reasons(model string) []Reason {
	counts := map[string]int{}
	for _, it := range p.Items {
		if it.Model == model && it.State == store.StateTodo {
			counts[it.Why]++
		}
	}
	var out []Reason
	for why, n := range counts {
		out = append(out, Reason{Why: why, Items: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Items != out[j].Items {
			return out[i].Items > out[j].Items
		}
		return out[i].Why < out[j].Why
	})
	return out
}

// Reason is one reason for playing items, and how many.
type Reason struct {
	Why   string
	Items int
}

func (r Reason) String() string { return fmt.Sprintf("%d %s", r.Items, r.Why) }

// Entries is the plan as the manifest records it.
func Entries(items []Item) []store.PlanEntry {
	out := make([]store.PlanEntry, len(items))
	for i, it := range items {
		out[i] = it.Meta.Entry()
	}
	return out
}
