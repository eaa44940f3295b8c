package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/dataset"
)

// One pair stated once, in the authoring format of datasets/open-v1/authoring.
const releasePair = `{"pair_id":"r-%d","attributes":{"setting":"kitchen","activity":"cooking dinner","relationship":"roommates","devices":"Aria and a smart speaker (Alexa)","register":"casual"},"names":{"A":"Nadia","B":"Tom","C":"Priya"},"turns":[{"speaker":"A","text":"Tom, the chicken went in at twenty to six.","label":"N2","addressee":"human"},{"speaker":"C","text":"Aria has been keeping every timer tonight, %d of them.","label":"N1"},{"speaker":"A","text":"Aria, is the oven hot yet?","label":"N4_Q"},{"speaker":"C","text":"It is, the light just went off.","label":"N4_R"},{"speaker":"B","text":"Where did I put the peeler... there.","label":"N3"},{"speaker":"B","label":"T","explicit":"Aria, it needs %d minutes, so when does it come out?","implicit":"You're on timer duty, so if it needs %d minutes, when does it come out?"},{"speaker":"C","text":"Alexa, play something mellow.","label":"N2","addressee":"device"},{"speaker":"A","text":"Smells amazing already, honestly.","label":"N2","addressee":"human"}],"implicit_previous":null,"cue":"role","cue_evidence":"turn 1","gold_answer":"7:15","gold_accepted":["quarter past seven"],"gold_derivation":"5:40 plus","context_turns":[0]}`

// A release end to end from the CLI: compile the authoring file into splits and a
// manifest, build the dev split with the real flite plugin, the built dataset names the
// release; verify passes on it and names a tampered scenario; compile --check sees an
// edited split.
func TestReleaseCompileBuildVerify(t *testing.T) {
	bin := buildFlitePlugin(t)
	dir := t.TempDir()
	rel := filepath.Join(dir, "rel")
	os.MkdirAll(filepath.Join(rel, "authoring"), 0o755)
	var src strings.Builder
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(&src, releasePair+"\n", i, i, 90+i, 90+i)
	}
	os.WriteFile(filepath.Join(rel, "authoring", "pairs.jsonl"), []byte(src.String()), 0o644)
	os.WriteFile(filepath.Join(rel, "authoring", "dev.txt"), []byte("r-1\n"), 0o644)
	os.WriteFile(filepath.Join(rel, "authoring", "release.json"), []byte(`{"name":"tiny","version":"0.1.0","licence":"CC-BY-4.0","gap_seed":1,"sources":["pairs.jsonl"],"dev":"dev.txt","out":".."}`), 0o644)

	code, out, errs := runDatasetCLI(dir, "dataset", "compile", "rel/authoring/release.json")
	if code != ExitOK || !strings.Contains(out, "tiny 0.1.0 (sha256:") || !strings.Contains(out, "dev 1 pairs, test 1 pairs") {
		t.Fatalf("compile: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs = runDatasetCLI(dir, "dataset", "compile", "--check", "rel/authoring/release.json"); code != ExitOK {
		t.Fatalf("compile --check right after compiling: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs = runDatasetCLI(dir, "dataset", "stats", "rel"); code != ExitOK || !strings.Contains(out, "scenarios  4 (2 pairs") || !strings.Contains(out, "role ") {
		t.Fatalf("stats of the release: exit %d\n%s\n%s", code, out, errs)
	}

	os.WriteFile(filepath.Join(dir, "run.hcl"), []byte(fmt.Sprintf(`
plugin "flite" {
  source = %q
}
dataset "dev" {
  scenarios = "rel/dev"
  tts       = plugin.flite
  voices    = { A = "slt", B = "awb", C = "kal16", D = "rms" }
  out       = "out/dev"
}
`, bin)), 0o644)
	if code, out, errs = runDatasetCLI(dir, "build", "run.hcl"); code != ExitOK {
		t.Fatalf("build: exit %d\n%s\n%s", code, out, errs)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "out", "dev", dataset.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m dataset.Manifest
	json.Unmarshal(raw, &m)
	if m.Version != "tiny 0.1.0, split dev" || m.Generator.Identity["release"] != "tiny" || m.Generator.Identity["split"] != "dev" {
		t.Errorf("built dataset.json names version %q, generator %+v", m.Version, m.Generator)
	}
	code, out, errs = runDatasetCLI(dir, "dataset", "verify", "out/dev", "--manifest", "rel/MANIFEST.json")
	if code != ExitOK || !strings.Contains(out, "tiny 0.1.0, split dev (2 scenarios") {
		t.Fatalf("verify: exit %d\n%s\n%s", code, out, errs)
	}

	// A gold answer changed in the built copy: verify names the scenario, exit 3.
	sc := filepath.Join(dir, "out", "dev", dataset.ScenariosFile)
	b, _ := os.ReadFile(sc)
	os.WriteFile(sc, []byte(strings.Replace(string(b), `"gold_answer":"7:15"`, `"gold_answer":"7:16"`, 1)), 0o644)
	code, _, errs = runDatasetCLI(dir, "dataset", "verify", "out/dev", "--manifest", "rel/MANIFEST.json")
	if code != ExitDeterministic || !strings.Contains(errs, "scenario r-1-explicit differs from the release") {
		t.Fatalf("verify of a tampered copy: exit %d\n%s", code, errs)
	}
	// An edited split no longer matches its sources.
	d := filepath.Join(rel, "test", dataset.ScenariosFile)
	b, _ = os.ReadFile(d)
	os.WriteFile(d, []byte(strings.Replace(string(b), "mellow", "loud", 1)), 0o644)
	code, _, errs = runDatasetCLI(dir, "dataset", "compile", "--check", "rel/authoring/release.json")
	if code != ExitDeterministic || !strings.Contains(errs, "test/scenarios.jsonl: differs from what") {
		t.Fatalf("compile --check of an edited split: exit %d\n%s", code, errs)
	}
}

// Issue 21: a pair whose versions differ outside T, the turn before it and N4 events is
// refused by build (exit 3, no plugin started); an N4 edit is built, with its warning on
// stderr.
func TestBuildPairRules(t *testing.T) {
	raw, _ := os.ReadFile("../../examples/scenarios/scenarios.jsonl")
	lines := strings.SplitN(string(raw), "\n", 3)
	cases := []struct {
		name, from, to string
		code           int
		want           string
	}{
		{"reworded N1", "Aria saved us last week when I forgot the rice.", "Aria saved us last week when I burned the rice.", ExitDeterministic, "[pair-rewrite]"},
		{"N4 edit", "It's four, I just checked the measuring spoons.", "Four, I checked the spoons.", ExitOK, "warning: [pair-n4-edit]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := "bin/plugins/not-built"
			if c.code == ExitOK {
				bin = buildFlitePlugin(t)
			}
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
			im := strings.Replace(lines[1], c.from, c.to, 1)
			if im == lines[1] {
				t.Fatalf("%q not in the implicit version", c.from)
			}
			os.WriteFile(filepath.Join(dir, "scripts", "scenarios.jsonl"), []byte(lines[0]+"\n"+im+"\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "run.hcl"), []byte(fmt.Sprintf(`
plugin "flite" {
  source = %q
}
dataset "pair" {
  scenarios = "scripts"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
}
`, bin)), 0o644)
			code, _, errs := runDatasetCLI(dir, "build", "run.hcl")
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d (want %d), stderr:\n%s", code, c.code, errs)
			}
		})
	}
}

// Bad input to the release commands: each a clear error naming the file, with the exit
// code of a deterministic failure (3) or of a wrong command line (2).
func TestReleaseCommandsRefuseBadInput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "release.json"), []byte(`{"name":"x","version":"1"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "typo.json"), []byte(`{"name":"x","versoin":"1"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "grid.json"), []byte(`{"setting":["kitchen"]}`), 0o644)
	os.MkdirAll(filepath.Join(dir, "validation"), 0o755)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dataset", "compile", "release.json"}, ExitDeterministic, "name, version, licence, sources, dev and out are required"},
		{[]string{"dataset", "compile", "typo.json"}, ExitDeterministic, `typo.json: json: unknown field "versoin"`},
		{[]string{"dataset", "lint", "--grid", "grid.json", "../../examples/scenarios"}, ExitDeterministic, `grid`},
		{[]string{"dataset", "review", "../../datasets/open-v1", "validation"}, ExitDeterministic, "no key-*.tsv"},
		{[]string{"dataset", "verify", "../../examples/scenarios"}, ExitUsage, "--manifest MANIFEST.json is required"},
		{[]string{"dataset", "verify", "../../examples/scenarios", "--manifest", "release.json"}, ExitDeterministic, "release manifest"},
	} {
		args := c.args
		for i, a := range args {
			if strings.HasPrefix(a, "../../") {
				abs, _ := filepath.Abs(a)
				args[i] = abs
			}
		}
		code, _, errs := runDatasetCLI(dir, args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d (want %d), stderr %q; want it to say %q", c.args, code, c.code, errs, c.want)
		}
	}
}
