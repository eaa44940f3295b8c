package evaluate_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/evaluate"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/core/score"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// Verdicts produced while a scorer process was dying are not saved: the items are
// unscored, named with the scorer, and the next Score redoes them instead of reusing
// failures that were the plugin's, not the model's. The silent model's items need no
// ASR or judge call, so nil scorers are never used.
func TestScoreDoesNotSaveVerdictsOfADeadScorer(t *testing.T) {
	ds := smallDataset(t)
	models := []*evaluate.Model{startModel(t, "silent")}
	opts := options(t)
	st := newStore(t, ds, models, opts)
	if _, err := evaluate.Run(context.Background(), ds, models, st, opts); err != nil {
		t.Fatal(err)
	}
	gold := map[string]string{}
	for _, sc := range ds.Scenarios {
		gold[sc.ScenarioID] = sc.GoldAnswer
	}
	sopts := evaluate.ScoreOptions{Params: opts.Params, VAD: opts.VAD, Detector: opts.Detector, Gold: gold}
	verdicts := func() int {
		ids, _ := st.IDs()
		n := 0
		for _, id := range ids {
			if _, err := os.Stat(filepath.Join(st.ItemDir(id), "verdicts.json")); err == nil {
				n++
			}
		}
		return n
	}

	dead := evaluate.Scorers{Records: []provenance.Plugin{{Name: "sphinx", Role: "asr"}}, ASRProcess: gone{}}
	res, err := evaluate.Score(context.Background(), st, dead, sopts)
	if err != nil || len(res.Unscored) != 4 || len(res.Items) != 0 || res.Complete() {
		t.Fatalf("scoring with a dead scorer: %+v, %v; want every item unscored", res, err)
	}
	if u := res.Unscored[0]; u.Service != "asr" || u.Plugin != "sphinx" || !strings.Contains(u.String(), `the asr plugin "sphinx" failed: the asr plugin "sphinx" stopped while scoring`) {
		t.Errorf("unscored item %+v does not name the scorer and its error", u)
	}
	// The summary counts them beside the rates, per model and condition.
	for _, e := range score.Summarize(res.Summarized(), opts.Params).Entries {
		if e.Items != 0 || e.Unscored != 2 {
			t.Errorf("%s %s: %d in the rates, %d unscored; want 0 and 2", e.Model, e.Condition, e.Items, e.Unscored)
		}
	}
	if n := verdicts(); n != 0 {
		t.Errorf("%d items kept verdicts given while the scorer was dead", n)
	}

	res, err = evaluate.Score(context.Background(), st, evaluate.Scorers{}, sopts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Now != 4 || res.Reused != 0 || len(res.Items) != 4 || verdicts() != 4 {
		t.Errorf("healthy scoring: %d now, %d reused, %d items, %d saved; want 4 scored and saved", res.Now, res.Reused, len(res.Items), verdicts())
	}
	res, err = evaluate.Score(context.Background(), st, evaluate.Scorers{}, sopts)
	if err != nil || res.Now != 0 || res.Reused != 4 {
		t.Errorf("scoring again: %d now, %d reused (%v); want every item reused", res.Now, res.Reused, err)
	}
	// Another judge is another key: everything is scored again.
	other := evaluate.Scorers{Records: []provenance.Plugin{{Name: "judge2", Role: "judge", Plugin: "lexical-judge"}}}
	if res, err = evaluate.Score(context.Background(), st, other, sopts); err != nil || res.Now != 4 {
		t.Errorf("another judge: %d now (%v); want 4", res.Now, err)
	}
	if _, err := st.Load(mustFirstID(t, st)); err != nil {
		t.Error(err)
	}
}

func mustFirstID(t *testing.T, st *store.Store) string {
	t.Helper()
	ids, err := st.IDs()
	if err != nil || len(ids) == 0 {
		t.Fatalf("no items: %v", err)
	}
	return ids[0]
}

// The scoring key keeps the shape runs were scored under before the provenance records
// became one type (its scorers as {"role", "plugin": {name, plugin, version, hash,
// identity}, "config"}), with the revision of the scoring rules after them: a key
// changes when the rules do, and only then.
func TestScoringKeyKeepsItsShape(t *testing.T) {
	p, v := protocol.Defaults(), protocol.DefaultVAD()
	scorers := []provenance.Plugin{
		{Name: "pocketsphinx", Role: "asr", Plugin: "pocketsphinx", Version: "0.1.0", Hash: "sha256:ab",
			Identity: map[string]string{"model": "en-us"}, Config: map[string]any{"language": "en"}},
		{Name: "lexical", Role: "judge", Plugin: "lexical-judge", Version: "0.2.0"},
	}
	pj, _ := json.Marshal(p)
	vj, _ := json.Marshal(v)
	old := `{"Scorers":[` +
		`{"role":"asr","plugin":{"name":"pocketsphinx","plugin":"pocketsphinx","version":"0.1.0","hash":"sha256:ab","identity":{"model":"en-us"}},"config":{"language":"en"}},` +
		`{"role":"judge","plugin":{"name":"lexical","plugin":"lexical-judge","version":"0.2.0"}}` +
		`],"Protocol":` + string(pj) + `,"VAD":` + string(vj) + `,"Rules":` + strconv.Itoa(protocol.ScoringRevision) + `}`
	sum := sha256.Sum256([]byte(old))
	if got, want := evaluate.ScoringKey(scorers, p, v), "sha256:"+hex.EncodeToString(sum[:]); got != want {
		t.Errorf("ScoringKey = %s; the key of the same scorers before was %s", got, want)
	}
}

// gone is a scorer process that stopped and cannot be started again.
type gone struct{}

func (gone) Exited() bool                  { return true }
func (gone) Restart(context.Context) error { return errors.New("cannot restart") }
