package config

import (
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/protocol"
	"github.com/duplexmpe/duplexmpe/core/score"
)

var update = flag.Bool("update", false, "rewrite the generated part of docs/run-files.md")

const docsPath = "../../docs/run-files.md"

// docs/run-files.md carries the reference generated from Spec; this keeps them equal.
func TestDocs(t *testing.T) {
	b, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	begin, end := strings.Index(doc, DocsBegin), strings.Index(doc, DocsEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the markers %q and %q", docsPath, DocsBegin, DocsEnd)
	}
	want := doc[:begin+len(DocsBegin)] + "\n\n" + Markdown() + "\n" + doc[end:]
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(docsPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is out of date with config.Spec; run: go test ./core/config -run TestDocs -update", docsPath)
}

// The shipped run files are valid (warnings, such as plugins not built yet, are allowed).
func TestShippedRunFiles(t *testing.T) {
	files, _ := filepath.Glob("../../examples/runs/*.hcl")
	files = slices.DeleteFunc(files, IsLockFile)
	files = append(files, "../../bench.hcl")
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	for _, path := range files {
		vars := map[string]string{}
		f, diags := Load(path, Options{Vars: vars})
		if diags.HasErrors() {
			t.Errorf("%s:\n%s", path, diagText(f, diags))
		}
	}
	f, _ := Load("../../bench.hcl", Options{})
	ev := f.Evaluation("default")
	if ev == nil || !slices.Equal(ev.Models, []string{"silent", "pause_responder", "cascade", "oracle"}) || ev.Protocol.GapProfile != "natural" || ev.ASR != "whisper" || ev.Judge != "lexical" || f.Dataset(ev.Dataset).TTS != "onnx_tts" {
		t.Errorf("bench.hcl default evaluation = %+v", ev)
	}
	// Every model of the default is a baseline, the reference or the oracle (section 6.3).
	if roles := f.ModelRoles(ev); !maps.Equal(roles, map[string]string{"silent": "baseline", "pause_responder": "baseline", "cascade": "reference", "oracle": "calibration"}) {
		t.Errorf("bench.hcl roles %v", roles)
	}
	// Every plugin is one the repository builds (bin/plugins) or ships with its
	// launcher (plugins/<name>/run.sh, installed by make deps).
	for _, p := range f.Plugins {
		inTree := strings.HasPrefix(p.Spec.Source, f.Dir+"/bin/plugins/") ||
			(p.Spec.Source == "" && strings.HasPrefix(p.Spec.Dir, f.Dir+"/plugins/") && slices.Equal(p.Spec.Command, []string{"./run.sh"}))
		if !inTree {
			t.Errorf("bench.hcl plugin %s runs %s %v in %s, not a plugin of this repository", p.Name, p.Spec.Source, p.Spec.Command, p.Spec.Dir)
		}
	}
}

// The h1 pins of examples/runs/pinned.hcl match the example plugin directories they pin,
// so the example works as shipped.
func TestPinnedExampleMatches(t *testing.T) {
	f, diags := Load("../../examples/runs/pinned.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	pinned := 0
	for _, p := range f.Plugins {
		if !strings.HasPrefix(p.Spec.Checksum, "h1:") {
			continue
		}
		pinned++
		got, err := pluginhost.HashDir(p.Spec.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if got != p.Spec.Checksum {
			t.Errorf("%s changed: examples/runs/pinned.hcl pins plugin %q to %s, but it now hashes to %s; update the pin there",
				p.Spec.Dir, p.Name, p.Spec.Checksum, got)
		}
	}
	if pinned == 0 {
		t.Error("pinned.hcl pins no directory")
	}
}

// Issue 11, finding 6: paper.hcl's statistics family is its five speech models (the
// cascade is a baseline), so its summary makes 80 comparisons, not 120, and ranks 10
// entries with Spearman, not 12.
func TestPaperFamily(t *testing.T) {
	f, diags := Load("../../examples/runs/paper.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diagText(f, diags))
	}
	ev := f.Evaluation("paper")
	roles := f.ModelRoles(ev)
	var items []score.Scored
	for _, m := range ev.Models {
		for _, cond := range []string{protocol.Explicit, protocol.Implicit} {
			items = append(items, score.Scored{Model: m, Condition: cond, PairID: "p1", ScenarioID: "p1-" + cond,
				Events: []score.Event{{Label: protocol.LabelT, T: &score.TVerdict{Presence: true, FreshOnset: m < "m"}}}})
		}
	}
	p := protocol.Defaults()
	p.BootstrapResamples = 10
	s := score.SummarizeWith(items, p, score.Options{Roles: roles})
	if len(ev.Models) != 6 || s.Family.Comparisons != 80 || len(s.Comparisons) != 80 || s.Spearman.N != 10 {
		t.Errorf("%d models, family %+v, %d comparisons, Spearman over %d; want 6 models, 80 comparisons, 10 entries",
			len(ev.Models), s.Family, len(s.Comparisons), s.Spearman.N)
	}
	if roles["cascade"] != protocol.RoleBaseline {
		t.Errorf("paper.hcl roles %v: the cascade is the keyword baseline", roles)
	}
}

// The calibration run file plays always-talk and random-talk on bench.hcl's dataset: the same scenarios,
// voices, preamble and directory, so the clips are built once and its rows compare with
// bench.hcl's.
func TestCalibrationRunsTheBenchDataset(t *testing.T) {
	bench, diags := Load("../../bench.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diagText(bench, diags))
	}
	cal, diags := Load("../../examples/runs/calibration.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diagText(cal, diags))
	}
	b, c := bench.Dataset("open_v2_dev"), cal.Dataset("open_v2_dev")
	if b == nil || c == nil {
		t.Fatal("both files declare dataset \"open_v2_dev\"")
	}
	if b.Scenarios != c.Scenarios || b.Preamble != c.Preamble || b.Out != c.Out || !maps.Equal(b.Voices, c.Voices) || !maps.Equal(b.VoicePool, c.VoicePool) ||
		b.VoiceSeed != c.VoiceSeed || b.Narrator != c.Narrator || b.Loudness != c.Loudness || b.TTS != c.TTS {
		t.Errorf("calibration.hcl's dataset %+v is not bench.hcl's %+v", c, b)
	}
	if bf, cf := bench.Plugin(b.TTS), cal.Plugin(c.TTS); bf.Spec.Source != cf.Spec.Source {
		t.Errorf("TTS %s vs %s", cf.Spec.Source, bf.Spec.Source)
	}
	ev, bev := cal.Evaluation("calibration"), bench.Evaluation("default")
	if ev == nil || !slices.Equal(ev.Models, []string{"always_talk", "random_talk"}) || ev.ASR != bev.ASR || ev.Judge != bev.Judge || ev.Protocol != bev.Protocol || ev.VAD != bev.VAD {
		t.Errorf("calibration evaluation %+v does not score like bench.hcl's", ev)
	}
	for _, m := range []string{"always_talk", "random_talk"} {
		if slices.Contains(bev.Models, m) {
			t.Errorf("bench.hcl plays %s again: see the note at its top", m)
		}
	}
}

// The test split's run file speaks like bench.hcl (the same pool, seed, narrator, loudness
// and TTS) and scores like it, under the same gap profile by default: a result on test is
// comparable with make run's on dev.
func TestOpenV2RunFileSpeaksLikeBench(t *testing.T) {
	bench, diags := Load("../../bench.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diagText(bench, diags))
	}
	v2, diags := Load("../../examples/runs/open-v2.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diagText(v2, diags))
	}
	b, d := bench.Dataset("open_v2_dev"), v2.Dataset("open_v2_test")
	if b == nil || d == nil {
		t.Fatal("bench.hcl declares open_v2_dev and open-v2.hcl open_v2_test")
	}
	if !maps.Equal(b.VoicePool, d.VoicePool) || !maps.Equal(b.VoiceSex, d.VoiceSex) || b.VoiceSeed != d.VoiceSeed || b.VoiceMinSemitones != d.VoiceMinSemitones ||
		b.Narrator != d.Narrator || b.Loudness != d.Loudness || b.Preamble != d.Preamble {
		t.Errorf("open-v2.hcl's voices %+v are not bench.hcl's %+v", d, b)
	}
	ev, bev := v2.Evaluation("open_v2_test"), bench.Evaluation("default")
	if ev == nil || ev.Protocol != bev.Protocol || ev.VAD != bev.VAD || ev.ASR != bev.ASR || ev.Judge != bev.Judge {
		t.Errorf("open-v2.hcl's evaluation %+v does not score like bench.hcl's", ev)
	}
}
