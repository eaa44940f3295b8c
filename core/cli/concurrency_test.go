package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/record"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/store"
	"github.com/duplexmpe/duplexmpe/tools/clitest"
)

// Concurrency is transport: the first shipped pair played one conversation at a time and
// four at a time (the cascade two or more at once in one process, beside the silent
// baseline), by real plugin processes, gives the same item keys, the same records (audio bit for bit; only the Step wall-time latencies may
// differ) and the same verdicts and report entries. Nothing here depends on how the
// conversations happen to interleave: any schedule must give these results.
func TestConcurrencyDoesNotChangeResults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real plugins end to end")
	}
	flite := buildFlitePlugin(t)
	bins := map[string]string{}
	for _, pkg := range []string{"plugins/silent", "plugins/cascade", "plugins/pocketsphinx", "plugins/lexical-judge"} {
		bins[filepath.Base(pkg)] = buildPlugin(t, pkg)
	}
	dir := t.TempDir()
	clitest.FirstPair(t, dir)
	evaluation := func(name string, concurrency int) string {
		return fmt.Sprintf(`
evaluation %q {
  dataset     = dataset.one
  models      = [plugin.silent, plugin.cascade]
  asr         = plugin.pocketsphinx
  judge       = plugin.lexical
  concurrency = %d
  out         = "runs/%s"
}
`, name, concurrency, name)
	}
	runFile := filepath.Join(dir, "run.hcl")
	hcl := fmt.Sprintf(`
plugin "flite" { source = %q }
plugin "silent" { source = %q }
plugin "cascade" { source = %q }
plugin "pocketsphinx" { source = %q }
plugin "lexical" { source = %q }

dataset "one" {
  scenarios = "scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out       = "build/one"
}
`, flite, bins["silent"], bins["cascade"], bins["pocketsphinx"], bins["lexical-judge"]) +
		evaluation("serial", 1) + evaluation("parallel", 4)
	if err := os.WriteFile(runFile, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, dir, "run", runFile)
	if code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	clitest.InOrder(t, "run", errs, "evaluation serial: playing up to 1 conversation at once",
		"evaluation parallel: playing up to 4 conversations at once (per model: silent 4, cascade ")

	serial, parallel := openRun(t, dir, "serial"), openRun(t, dir, "parallel")
	ids, err := serial.IDs()
	if err != nil {
		t.Fatal(err)
	}
	pids, err := parallel.IDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 4 || !reflect.DeepEqual(ids, pids) {
		t.Fatalf("item keys differ: one at a time %v, four at a time %v", ids, pids)
	}
	spoke := 0
	for _, id := range ids {
		a, b := loadItem(t, serial, id), loadItem(t, parallel, id)
		if !reflect.DeepEqual(a.Meta, b.Meta) || !reflect.DeepEqual(a.Record, b.Record) {
			t.Errorf("item %s (%s, %s): the record played four at a time differs:\n episodes %v\n vs       %v\n text %v\n vs   %v",
				id, a.Meta.Model, a.Meta.ScenarioID, a.Record.Episodes, b.Record.Episodes, a.Record.Text, b.Record.Text)
		}
		if len(a.Record.Episodes) > 0 {
			spoke++
		}
		var va, vb json.RawMessage
		if err := serial.LoadVerdicts(id, &va); err != nil {
			t.Fatal(err)
		}
		if err := parallel.LoadVerdicts(id, &vb); err != nil {
			t.Fatal(err)
		}
		if string(va) != string(vb) {
			t.Errorf("item %s (%s, %s): verdicts differ:\n%s\nvs\n%s", id, a.Meta.Model, a.Meta.ScenarioID, va, vb)
		}
	}
	if spoke < 1 {
		t.Errorf("only %d conversations have model speech: too little was compared", spoke)
	}
	sa, _, err := report.Load(serial.Dir())
	if err != nil {
		t.Fatal(err)
	}
	sb, _, err := report.Load(parallel.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sa.Entries, sb.Entries) {
		t.Errorf("report entries differ:\n%+v\nvs\n%+v", sa.Entries, sb.Entries)
	}
}

func openRun(t *testing.T, dir, name string) *store.Store {
	t.Helper()
	s, err := store.Open(filepath.Join(dir, "runs", name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// loadItem reads an item with its Step latencies cleared: they are wall time, which
// concurrency (and the machine's load) is free to change.
func loadItem(t *testing.T, s *store.Store, id string) *store.Item {
	t.Helper()
	it, err := s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	it.Record.Latency = record.Latency{}
	return it
}
