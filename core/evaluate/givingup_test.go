package evaluate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// Before, a model that crashed in every conversation was restarted for each (8
// crashes, 8 restarts in the fault campaign; a model hanging in each cost the frame
// deadline each). Now the same failure on 3 consecutive conversations gives the model
// up: its remaining conversations are saved as failed without playing, with one reason
// that a resumed run plays them, and the plugin is not restarted for them.
func TestSameFailureInARowGivesTheModelUp(t *testing.T) {
	ds := smallDataset(t) // 4 conversations
	m := startFaulty(t, pluginhost.Spec{}, map[string]any{"fault": "crash", "at_frame": 2.0})
	m.Concurrency = 1
	models := []*evaluate.Model{m}
	opts := options(t)
	st := newStore(t, ds, models, opts)
	sum, err := evaluate.Run(context.Background(), ds, models, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Three crashes, restarted after the first two; the fourth is never played.
	want := evaluate.Counts{Planned: 4, Failed: 4, Restarts: 2}
	if sum.Total != want {
		t.Errorf("summary %+v, want %+v", sum.Total, want)
	}
	items, _ := evaluate.Plan(ds, models, opts)
	notPlayed := 0
	for _, it := range items {
		if s := st.Status(it.Meta.ID); s != store.Failed {
			t.Errorf("%s: %v, want failed", it.Meta.ScenarioID, s)
			continue
		}
		why, _ := st.Failure(it.Meta.ID)
		if strings.HasPrefix(why, "not played") {
			notPlayed++
			for _, w := range []string{"model faulty", "3 conversations in a row", "run again"} {
				if !strings.Contains(why, w) {
					t.Errorf("the reason %q does not say %q", why, w)
				}
			}
		}
	}
	if notPlayed != 1 {
		t.Errorf("%d conversations not played, want 1", notPlayed)
	}

	// Different failures, or a success between them, never give a model up.
	// Played one at a time in plan order: fail, fail, done, fail.
	var failing []any
	for i, it := range items {
		if i != 2 {
			failing = append(failing, it.Meta.ScenarioID)
		}
	}
	ds2 := smallDataset(t)
	m2 := startFaulty(t, pluginhost.Spec{}, map[string]any{"fault": "crash", "at_frame": 2.0, "conversations": failing})
	m2.Concurrency = 1
	st2 := newStore(t, ds2, []*evaluate.Model{m2}, opts)
	sum2, err := evaluate.Run(context.Background(), ds2, []*evaluate.Model{m2}, st2, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Total.Failed != 3 || sum2.Total.Done != 1 {
		t.Errorf("a success between failures: %+v, want 3 failed (all played) and 1 done", sum2.Total)
	}
}

// Before, the give-up rule compared the failures' text (numbers masked), so a model
// whose message changed every time (a random temporary path in its exception) played
// every conversation to failure (8 of 8 in the campaign). Now it counts failures by
// kind: three errors from a step in a row give the model up, whatever they say.
func TestGiveUpCountsFailuresByKind(t *testing.T) {
	ds := smallDataset(t) // 4 conversations
	m := startFaulty(t, pluginhost.Spec{}, map[string]any{"fault": "random_error", "at_frame": 2.0})
	m.Concurrency = 1
	models := []*evaluate.Model{m}
	opts := options(t)
	st := newStore(t, ds, models, opts)
	sum, err := evaluate.Run(context.Background(), ds, models, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The plugin stays alive (an error is an answer): no restart.
	if want := (evaluate.Counts{Planned: 4, Failed: 4}); sum.Total != want {
		t.Errorf("summary %+v, want %+v", sum.Total, want)
	}
	items, _ := evaluate.Plan(ds, models, opts)
	var texts []string
	notPlayed := 0
	for _, it := range items {
		why, _ := st.Failure(it.Meta.ID)
		if strings.HasPrefix(why, "not played") {
			notPlayed++
			if !strings.Contains(why, "answered a frame with an error") {
				t.Errorf("the reason %q does not name the kind of failure", why)
			}
			continue
		}
		texts = append(texts, why)
	}
	if notPlayed != 1 {
		t.Errorf("%d conversations not played, want 1 (the failures: %q)", notPlayed, texts)
	}
	if len(texts) == 3 && (texts[0] == texts[1] || texts[1] == texts[2]) {
		t.Errorf("the failures' texts are alike (%q): the test needs them to differ", texts)
	}
}
