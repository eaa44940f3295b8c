package app

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
	"github.com/duplexmpe/duplexmpe/tools/clitest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	plugintest.RemoveBuilt()
	os.Exit(code)
}

// The package doc's rule lists every function of this package the CLI calls: a command
// that goes through app without being named there (or a name there that is no longer
// called) fails here, so the written rule stays true.
func TestPackageDocNamesWhatTheCLICalls(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	doc := ""
	funcs := map[string]bool{}
	for _, f := range pkgs["app"].Files {
		if f.Doc != nil {
			doc += f.Doc.Text()
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.IsExported() {
				funcs[fd.Name.Name] = true
			}
		}
	}
	if !strings.Contains(doc, "The rule for which commands go through app") {
		t.Fatal("the package doc states no rule for which commands go through app")
	}
	cli, err := parser.ParseDir(fset, "../cli", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	called := map[string]bool{}
	for _, f := range cli["cli"].Files {
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "app" && funcs[sel.Sel.Name] {
					called[sel.Sel.Name] = true
				}
			}
			return true
		})
	}
	if len(called) < 8 {
		t.Fatalf("the CLI calls only %v of app", called)
	}
	for name := range called {
		if !regexp.MustCompile(`\b` + name + `\b`).MatchString(doc) {
			t.Errorf("the CLI calls app.%s, which the package doc's rule does not name", name)
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^\t(\w+)(?:, (\w+))?\s{2,}`).FindAllStringSubmatch(doc, -1) {
		for _, name := range m[1:] {
			if name != "" && !called[name] {
				t.Errorf("the package doc lists %s, which no command calls", name)
			}
		}
	}
}

// limitPairs keeps both conditions of the first n pairs, in the dataset's order, and
// says what it left out; a limit at or above the pair count is no limit.
func TestLimitPairs(t *testing.T) {
	var scs []dataset.Scenario
	for _, p := range []string{"b", "a", "c"} {
		for _, c := range []string{"explicit", "implicit"} {
			scs = append(scs, dataset.Scenario{ScenarioID: p + "-" + c, PairID: p, Condition: c})
		}
	}
	full := &BuildResult{Block: &config.Dataset{Name: "d"}, Dataset: &dataset.Dataset{Scenarios: scs, Lines: []int{1, 2, 3, 4, 5, 6}}}
	got, partial := limitPairs(full, 2)
	var ids []string
	for _, sc := range got.Dataset.Scenarios {
		ids = append(ids, sc.ScenarioID)
	}
	if strings.Join(ids, " ") != "b-explicit b-implicit a-explicit a-implicit" || fmt.Sprint(got.Dataset.Lines) != "[1 2 3 4]" {
		t.Errorf("limit 2 kept %v (lines %v)", ids, got.Dataset.Lines)
	}
	if partial == nil || partial.Pairs != 2 || partial.OfPairs != 3 || partial.Dataset != "d" || !strings.Contains(partial.String(), "the first 2 of the 3 pairs of dataset d") {
		t.Errorf("partial = %+v", partial)
	}
	if len(full.Dataset.Scenarios) != 6 {
		t.Error("limitPairs changed the built dataset it was given")
	}
	if same, p := limitPairs(full, 3); same != full || p != nil {
		t.Errorf("limit 3 of 3 pairs: %v, %+v", same == full, p)
	}
}

// The main entry points, called as the CLI calls them, on real plugin processes: Plan
// before anything exists, Evaluate (build, play, score, report), Score again (every
// verdict reused), Compare of the run with itself, Prune with nothing stale, and
// TestPlugins on the silent model.
func TestEntryPointsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real plugins end to end")
	}
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("flite is not installed (scripts/install-apt.sh)")
	}
	bins := map[string]string{}
	for _, p := range []string{"flite", "silent", "pocketsphinx", "lexical-judge"} {
		bins[p] = plugintest.BuildGo(t, "../../plugins/"+p)
	}
	dir := t.TempDir()
	clitest.FirstPair(t, dir)
	runFile := filepath.Join(dir, "run.hcl")
	clitest.WriteFile(t, runFile, fmt.Sprintf(`
plugin "flite" { source = %q }
plugin "silent" { source = %q }
plugin "pocketsphinx" { source = %q }
plugin "lexical" { source = %q }

dataset "one" {
  scenarios = "scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  out       = "build/one"
}

evaluation "e" {
  dataset = dataset.one
  models  = [plugin.silent]
  asr     = plugin.pocketsphinx
  judge   = plugin.lexical
  out     = "runs/e"
}
`, bins["flite"], bins["silent"], bins["pocketsphinx"], bins["lexical-judge"]))
	load := func(path string, _ []string) (*config.File, error) {
		f, diags := config.Load(path, config.Options{Cwd: dir})
		if diags.HasErrors() {
			return nil, diags
		}
		return f, nil
	}
	f, err := load(runFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := f.Evaluation("e")
	ctx := context.Background()

	s, err := pluginstart.NewStarter(f, pluginstart.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Plan(s, ev, PlanOptions{})
	if err != nil || p.Models != 1 || p.Conversations != 2 {
		t.Fatalf("Plan before the run: %+v, %v", p, err)
	}
	res, err := Evaluate(ctx, s, ev, EvaluateOptions{Score: true}, UI{})
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	c := res.Play.Total
	if c.Planned != 2 || c.Done != 2 || c.Failed != 0 || res.Play.Partial != nil {
		t.Errorf("Evaluate played %+v (partial %v), want 2 of 2 done", c, res.Play.Partial)
	}
	if res.Score == nil || len(res.Score.Items) != 2 || res.Score.Meta.Partial != "" || len(res.Score.Summary.Entries) != 2 {
		t.Fatalf("Evaluate's scoring: %+v", res.Score)
	}
	for _, e := range res.Score.Summary.Entries {
		if e.Model != "silent" || e.FreshOnset.K != 0 || e.Silence.N == 0 || e.Silence.K != e.Silence.N {
			t.Errorf("silent %s: fresh onset %d/%d, silence %d/%d", e.Condition, e.FreshOnset.K, e.FreshOnset.N, e.Silence.K, e.Silence.N)
		}
	}
	info, err := ReadRunInfo(ev.Out)
	if err != nil || info.RunFile != runFile || info.Evaluation != "e" || info.Partial != nil {
		t.Errorf("run.json: %+v, %v", info, err)
	}

	sr, err := Score(ctx, ScoreRequest{Dir: ev.Out, Load: load}, UI{})
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	if sr.Now != 0 || sr.Reused != 2 || len(sr.Started) != 0 {
		t.Errorf("Score again: %d now, %d reused, started %v; want every verdict reused and no plugin started", sr.Now, sr.Reused, sr.Started)
	}

	cmp, err := Compare([]string{ev.Out, ev.Out})
	if err != nil || len(cmp.Sides) != 2 || len(cmp.Rows) != 2 {
		t.Fatalf("Compare of the run with itself: %+v, %v", cmp, err)
	}
	for _, r := range cmp.Rows {
		if r.Shared != 1 || r.OnlyA != 0 || r.OnlyB != 0 {
			t.Errorf("Compare row %s %s: shared %d, only A %d, only B %d", r.Model, r.Condition, r.Shared, r.OnlyA, r.OnlyB)
		}
	}

	pr, err := Prune(ev.Out)
	if err != nil || pr.Removed != 0 || pr.Kept != 2 {
		t.Errorf("Prune with nothing stale: %+v, %v", pr, err)
	}

	tests, err := TestPlugins(s, "silent", UI{})
	if err != nil || len(tests) != 1 || tests[0].Name != "silent" || len(tests[0].Failures) != 0 || len(tests[0].Results) == 0 {
		t.Errorf("TestPlugins silent: %+v, %v", tests, err)
	}
}
