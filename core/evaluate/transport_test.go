package evaluate_test

import (
	"context"
	"errors"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// unplayed is a model that is planned, never played.
type unplayed struct{}

func (unplayed) Start(context.Context, sdk.ConversationStart) (sdk.Conversation, error) {
	return nil, errors.New("not played in this test")
}

// A config field the plugin marks as transport (a server's URL) is in no item id and no
// manifest: the shards of one run may reach their model servers on per-node ports, and
// still have equal manifests. Any other field still changes both.
func TestTransportFieldsAreNotPartOfTheRun(t *testing.T) {
	ds := smallDataset(t)
	opts := options(t)
	schema := []sdk.ConfigField{
		{Name: "url", Type: sdk.TypeString, Transport: true},
		{Name: "temperature", Type: sdk.TypeNumber},
	}
	model := func(url string, temp float64) *evaluate.Model {
		return &evaluate.Model{Name: "m", Model: unplayed{}, Info: sdk.Info{Name: "served", Version: "1", Config: schema},
			Config: map[string]any{"url": url, "temperature": temp}}
	}
	plan := func(m *evaluate.Model) ([]string, store.Manifest) {
		t.Helper()
		items, err := evaluate.Plan(ds, []*evaluate.Model{m}, opts)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, it := range items {
			ids = append(ids, it.Meta.ID)
			if _, ok := it.Meta.Key.Model.Config["url"]; ok {
				t.Errorf("the item key holds the transport field: %+v", it.Meta.Key.Model.Config)
			}
		}
		man, err := evaluate.NewManifest("run", ds, []*evaluate.Model{m}, opts)
		if err != nil {
			t.Fatal(err)
		}
		return ids, man
	}
	ids1, man1 := plan(model("ws://node1:8998", 0.7))
	ids2, man2 := plan(model("ws://node2:9001", 0.7))
	ids3, man3 := plan(model("ws://node1:8998", 0.8))
	if len(ids1) != 4 {
		t.Fatalf("planned %d items, want 4", len(ids1))
	}
	for i := range ids1 {
		if ids1[i] != ids2[i] {
			t.Errorf("item %d: another URL changed the id (%s, then %s)", i, ids1[i], ids2[i])
		}
		if ids1[i] == ids3[i] {
			t.Errorf("item %d: another temperature left the id alone", i)
		}
	}
	if d := store.Diff(man1, man2); len(d) > 0 {
		t.Errorf("another URL changed the manifest in %v", d)
	}
	if d := store.Diff(man1, man3); len(d) == 0 {
		t.Error("another temperature left the manifest alone")
	}
}
