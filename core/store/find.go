package store

import (
	"fmt"
	"slices"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/fault"
)

// Find is the id of the item of the run's plan (Planned) that plays scenario to model:
// scenario is a scenario id ("ov1-0034-implicit"), or a pair id ("ov1-0034") with
// condition naming its version; repeat is which repeat (0, the first). Items of earlier
// plans are never found. An unknown model or scenario, or a pair id without a condition
// where the pair has two, is a deterministic error that lists what there is.
func (s *Store) Find(scenario, condition, model string, repeat int) (string, error) {
	plan, err := s.Planned()
	if err != nil {
		return "", err
	}
	var models []string
	var found []PlanEntry
	for _, e := range plan {
		if !slices.Contains(models, e.Model) {
			models = append(models, e.Model)
		}
		if e.Model != model || e.Repeat != repeat {
			continue
		}
		if e.ScenarioID == scenario || (e.PairID == scenario && (condition == "" || e.Condition == condition)) {
			if e.ScenarioID == scenario && condition != "" && e.Condition != condition {
				continue
			}
			found = append(found, e)
		}
	}
	switch {
	case !slices.Contains(models, model):
		return "", fault.Deterministicf("run %s plays no model %q; its models: %s", s.dir, model, strings.Join(models, ", "))
	case len(found) == 1:
		return found[0].ID, nil
	case len(found) > 1:
		var conds []string
		for _, e := range found {
			conds = append(conds, e.Condition)
		}
		return "", fault.Deterministicf("pair %q has %d versions in run %s (%s): name one with --condition", scenario, len(found), s.dir, strings.Join(conds, ", "))
	}
	what := fmt.Sprintf("scenario %q", scenario)
	if condition != "" {
		what += fmt.Sprintf(", condition %q", condition)
	}
	if repeat > 0 {
		what += fmt.Sprintf(", repeat %d", repeat)
	}
	return "", fault.Deterministicf("run %s has no %s for model %q in its plan: give a scenario id or a pair id of its dataset (as in RUN_DIR/items/*/item.json)", s.dir, what, model)
}

// Marked is item id's status by its marker alone (done, failed or missing), without
// reading its files back as Status does: cheap enough to count a whole run's items.
func (s *Store) Marked(id string) Status { return statusOf(s.ItemDir(id)) }
