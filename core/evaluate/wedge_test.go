package evaluate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// startFaulty starts tests/reliability's fault plugin with spec's bounds and config.
func startFaulty(t *testing.T, spec pluginhost.Spec, cfg map[string]any) *evaluate.Model {
	t.Helper()
	spec.Name, spec.Source = "faulty", plugintest.BuildGo(t, "../../tests/reliability/faulty")
	ctx := context.Background()
	c, err := pluginhost.Start(ctx, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	if err := c.Configure(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	m, err := evaluate.NewModel(ctx, "faulty", c, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Before, a step past its deadline left the wedged plugin in place: every later
// conversation of the model failed too (8/8 in the fault campaign) and nothing was
// restarted. Now the wedged conversation fails alone and the plugin is restarted.
func TestWedgedPluginFailsOneConversation(t *testing.T) {
	for _, fault := range []string{"wedge", "hang_start", "hang_close"} {
		t.Run(fault, func(t *testing.T) {
			ds := smallDataset(t)
			m := startFaulty(t, pluginhost.Spec{FrameTimeout: 2 * time.Second, ConversationStartTimeout: 2 * time.Second},
				map[string]any{"fault": fault, "at_frame": 3.0, "conversations": []any{"p0-implicit"}})
			m.Concurrency = 1
			models := []*evaluate.Model{m}
			opts := options(t)
			st := newStore(t, ds, models, opts)
			sum, err := evaluate.Run(context.Background(), ds, models, st, opts)
			if err != nil {
				t.Fatal(err)
			}
			want := evaluate.Counts{Planned: 4, Done: 3, Failed: 1, Restarts: 1}
			if fault == "hang_close" {
				// Every frame was answered: the conversation is recorded; only the plugin
				// is replaced before the next one.
				want = evaluate.Counts{Planned: 4, Done: 4, Restarts: 1}
			}
			if sum.Total != want {
				t.Errorf("summary %+v, want %+v", sum.Total, want)
			}
			items, _ := evaluate.Plan(ds, models, opts)
			for _, it := range items {
				if it.Meta.ScenarioID != "p0-implicit" || fault == "hang_close" {
					if st.Status(it.Meta.ID) != store.Done {
						t.Errorf("%s: %v, want done", it.Meta.ScenarioID, st.Status(it.Meta.ID))
					}
					continue
				}
				got, err := st.Load(it.Meta.ID)
				if err != nil {
					t.Fatal(err)
				}
				setting := map[string]string{"wedge": "frame_timeout = 2s", "hang_start": "conversation_start_timeout = 2s"}[fault]
				if !strings.Contains(got.Record.Failure, setting) || !strings.Contains(got.Record.Failure, "raise") {
					t.Errorf("failure %q does not name %s and how to raise it", got.Record.Failure, setting)
				}
			}
		})
	}
}
