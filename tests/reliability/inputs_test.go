package reliability

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/tests/reliability/damage"
)

// catalogue counts the damaged inputs tried and those caught as the suite expects.
type catalogue struct {
	t             *testing.T
	tried, caught int
}

func (c *catalogue) check(what string, ok bool, format string, args ...any) {
	c.t.Helper()
	c.tried++
	if ok {
		c.caught++
		return
	}
	c.t.Errorf("%s: "+format, append([]any{what}, args...)...)
}

// TestDamagedInputs is the catalogue of damaged inputs, through the command line: clips
// damaged after a build (each caught by `dataset validate` and re-synthesised by the
// next build, never played), finished items damaged in the run store (each reported by
// `score`, which still scores the rest, and replayed alone by the next `run`, which then
// equals the undamaged run), and bad input files (each refused with its file, line or
// scenario and what to do).
func TestDamagedInputs(t *testing.T) {
	c := &catalogue{t: t}
	dir := t.TempDir()
	scen := scenarios(t, dir, 2)
	runFile := killRunFile(t, dir, scen, filepath.Join(dir, "dataset"))
	if code, out, _, _ := duplexmpe(t, dir, "run", runFile); code != 0 {
		t.Fatalf("the first run: exit %d\n%s", code, out)
	}
	ds := filepath.Join(dir, "dataset")
	clips, _ := filepath.Glob(filepath.Join(ds, "clips", "*.wav"))

	for i, d := range damage.Clips {
		clip := clips[i%len(clips)]
		rel := "clips/" + filepath.Base(clip)
		if err := d.Damage(clip); err != nil {
			t.Fatal(err)
		}
		code, out, _, _ := duplexmpe(t, dir, "dataset", "validate", ds)
		// Exit 3: the dataset is wrong as it stands, so a scheduler does not retry it.
		c.check("clip "+d.Name, code == 3 && strings.Contains(out, rel), "dataset validate: exit %d\n%s", code, out)
		// `run` builds first: the damaged clip is re-synthesised before anything plays.
		code, out, _, _ = duplexmpe(t, dir, "run", "--no-score", runFile)
		c.check("clip "+d.Name, code == 0 && strings.Contains(out, rel) && strings.Contains(out, "synthesised it again"),
			"run: exit %d\n%s", code, out)
		code, out, _, _ = duplexmpe(t, dir, "dataset", "validate", ds)
		c.check("clip "+d.Name, code == 0, "dataset validate after the rebuild: exit %d\n%s", code, out)
	}

	runDir := filepath.Join(dir, "runs", "e")
	ref := filepath.Join(t.TempDir(), "reference")
	if out, err := exec.Command("cp", "-a", runDir, ref).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	ids, _ := os.ReadDir(filepath.Join(runDir, "items"))
	for i, d := range damage.Items {
		id := ids[i%len(ids)].Name()
		if err := d.Damage(filepath.Join(runDir, "items", id)); err != nil {
			t.Fatal(err)
		}
		code, out, _, _ := duplexmpe(t, dir, "score", "runs/e")
		c.check("item "+d.Name, code == 1 && strings.Contains(out, id) && strings.Contains(out, fmt.Sprintf("scored %d conversations", len(ids)-1)),
			"score: exit %d\n%s", code, out)
		code, out, _, _ = duplexmpe(t, dir, "run", runFile)
		c.check("item "+d.Name, code == 0 && strings.Contains(out, "(1 of them found damaged in the store)"), "run: exit %d\n%s", code, out)
		lost, differ, diffs := compareRuns(ref, runDir)
		c.check("item "+d.Name, lost+differ == 0, "after the replay: %s", strings.Join(diffs, "; "))
	}

	// Bad input files.
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	expect := func(what string, wantCode int, want string, args ...string) {
		t.Helper()
		code, out, _, _ := duplexmpe(t, dir, args...)
		c.check(what, code == wantCode && strings.Contains(out, want), "%v: exit %d, want %d and %q:\n%s", args, code, wantCode, want, out)
	}
	// Bad input is a deterministic failure: exit 3 (docs/scale.md).
	expect("empty run file", 3, "Empty run file", "validate", write("empty.hcl", nil))
	rf, _ := os.ReadFile(runFile)
	expect("run file with a BOM", 0, "ok", "validate", write("bom.hcl", append([]byte("\xef\xbb\xbf"), rf...)))
	src, _ := os.ReadFile(filepath.Join(scen, "scenarios.jsonl"))
	expect("scenarios with a BOM", 0, "valid", "dataset", "validate", write("bom.jsonl", append([]byte("\xef\xbb\xbf"), src...)))
	latin1 := strings.Replace(string(src), "e", "\xe9", 1)
	expect("scenarios in Latin-1", 3, "latin1.jsonl:1: [parse] byte", "dataset", "validate", write("latin1.jsonl", []byte(latin1)))
	built, _ := os.ReadFile(filepath.Join(ds, "scenarios.jsonl"))
	escaped := strings.Replace(string(built), `"clip":"clips/`, `"clip":"/etc/hostname#`, 1)
	expect("a clip outside the dataset", 3, "outside the dataset directory", "dataset", "validate", write("escape.jsonl", []byte(escaped)))
	x := make([]float64, 16000)
	x[5] = math.NaN()
	expect("NaN samples given to vad", 1, "not a finite number", "vad", write("nan.wav", damage.WAV(true, 32, 1, 16000, x)))

	// A relative path in a plugin's config resolves against the run file, from any cwd.
	sub := filepath.Join(dir, "elsewhere")
	os.MkdirAll(filepath.Join(dir, "conf"), 0o755)
	os.MkdirAll(sub, 0o755)
	pathRun := write("conf/path.hcl", []byte(strings.Replace(string(rf), `plugin "silent" {`, fmt.Sprintf(`plugin "toucher" {
  source = %q
  config { touch = "marker" }
}
plugin "silent" {`, faultyBin(t)), 1)+"\n"+`evaluation "touch" {
  dataset = dataset.d
  models  = [plugin.toucher]
  asr     = plugin.pocketsphinx
  judge   = plugin.lexical
  out     = "runs/touch"
}
`))
	code, out, _, _ := duplexmpe(t, sub, "run", "--no-score", "--evaluation", "touch", pathRun)
	_, errMarker := os.Stat(filepath.Join(dir, "conf", "marker"))
	_, errWrong := os.Stat(filepath.Join(sub, "marker"))
	c.check("a relative path in plugin config", code == 0 && errMarker == nil && errWrong != nil,
		"exit %d, next to the run file: %v, in the working directory: %v\n%s", code, errMarker, errWrong, out)

	report(t, map[string]any{"tried": c.tried, "caught": c.caught, "clip_damage": len(damage.Clips), "item_damage": len(damage.Items)})
}
