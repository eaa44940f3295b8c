package evaluate_test

import (
	"context"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/tests/reliability/damage"
)

// Before, a damaged finished item was reused as done (and then stopped scoring). Now a
// resumed run plays it again, alone, and leaves the others.
func TestDamagedItemIsReplayedAlone(t *testing.T) {
	ds := smallDataset(t)
	models := []*evaluate.Model{startModel(t, "always-talk")}
	opts := options(t)
	st := newStore(t, ds, models, opts)
	if _, err := evaluate.Run(context.Background(), ds, models, st, opts); err != nil {
		t.Fatal(err)
	}
	items, _ := evaluate.Plan(ds, models, opts)
	for _, d := range damage.Items {
		t.Run(d.Name, func(t *testing.T) {
			victim := items[1].Meta.ID
			if err := d.Damage(st.ItemDir(victim)); err != nil {
				t.Fatal(err)
			}
			sum, err := evaluate.Run(context.Background(), ds, models, st, opts)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Total != (evaluate.Counts{Planned: 4, Reused: 3, Done: 1, Damaged: 1}) {
				t.Fatalf("resumed %+v; want the damaged item played again and the others reused", sum.Total)
			}
			if st.Status(victim) != store.Done {
				t.Fatalf("after the replay: %v", st.Check(victim))
			}
		})
	}
}
