package config

import (
	"strings"
	"testing"
)

// voice_pool replaces voices: read with its seed and minimum, and refused when it
// conflicts with voices, is too small, has a bad F0, or leaves the narrator unset or
// inside it.
func TestVoicePool(t *testing.T) {
	const head = `plugin "tts" { source = "bin/tts" }
dataset "d" {
  scenarios = "scenarios"
  tts       = plugin.tts
`
	f := mustParse(t, t.TempDir(), head+`  voice_pool = { women = { af_heart = 190, bf_emma = 210 }, men = { am_michael = 100, bm_george = 110 } }
  voice_seed = 3
  voice_min_semitones = 1.5
  narrator = "af_sky"
}`, Options{})
	ds := f.Datasets[0]
	if len(ds.VoicePool) != 4 || ds.VoicePool["bm_george"] != 110 || ds.VoiceSex["bf_emma"] != "female" || ds.VoiceSex["am_michael"] != "male" || ds.VoiceSeed != 3 || ds.VoiceMinSemitones != 1.5 || ds.Voices != nil {
		t.Errorf("dataset %+v", ds)
	}
	f = mustParse(t, t.TempDir(), head+`  voice_pool = { women = { a = 190, c = 210 }, men = { b = 100, d = 110 } }
  narrator = "e"
}`, Options{})
	if ds := f.Datasets[0]; ds.VoiceSeed != 1 || ds.VoiceMinSemitones != 2 {
		t.Errorf("defaults: seed %d, min %g", ds.VoiceSeed, ds.VoiceMinSemitones)
	}
	for _, c := range []struct{ body, want string }{
		{`voices = { A = "a", B = "b", C = "c" }
  voice_pool = { women = { a = 190, c = 210 }, men = { b = 100, d = 110 } }
  narrator = "e"`, "Conflicting voices"},
		{`narrator = "e"`, "Missing voices"},
		{`voice_pool = { women = { a = 190, c = 210 }, men = { b = 100 } }
  narrator = "e"`, "Voice pool too small"},
		{`voice_pool = { women = { a = 190, c = 210 }, men = { b = 100, d = 0 } }
  narrator = "e"`, "Bad F0"},
		{`voice_pool = { women = { a = 190, c = 210 }, men = { b = 100, d = 110 } }`, "Missing narrator"},
		{`voice_pool = { women = { a = 190, c = 210 }, men = { b = 100, d = 110 } }
  narrator = "a"`, "Narrator is in the voice pool"},
		{`voices = { A = "a", B = "b", C = "c" }
  voice_seed = 2`, "Setting without voice_pool"},
		{`voice_pool = { women = { a = 190, c = 210 }, kids = { b = 100, d = 110 } }
  narrator = "e"`, "Unknown voice group"},
		{`voice_pool = { women = { a = 190, c = 210 }, men = { b = 100, d = 110 } }
  narrator = "e"
  voice_min_semitones = 13`, "voice_min_semitones out of range"},
	} {
		f, diags := parseIn(t, t.TempDir(), head+"  "+c.body+"\n}", Options{})
		if !diags.HasErrors() || !strings.Contains(diagText(f, diags), c.want) {
			t.Errorf("%s: want %q, got:\n%s", c.body, c.want, diagText(f, diags))
		}
	}
}
