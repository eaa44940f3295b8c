package prompts

import (
	"strings"
	"testing"
)

func TestTemplatesRender(t *testing.T) {
	p, err := Render(Scenario, map[string]any{"Turns": 12, "TIndex": 5, "TBefore": 5, "TAfter": 6,
		"SpeakerList": "A, B, C", "Devices": "Aria and a smart speaker", "ResolveByAsker": true, "BriefJSON": `{"turns":12}`})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.System, "You write scripts") || !strings.Contains(p.User, "Exactly 12 turns") ||
		!strings.HasSuffix(p.User, "BRIEF:\n{\"turns\":12}") || strings.Contains(p.System+p.User, "{{") {
		t.Fatalf("scenario prompt:\n%s\n---\n%s", p.System, p.User)
	}
	r, err := Render(Rewrite, map[string]any{"TIndex": 4, "PrevIndex": 3, "ScenarioJSON": "{}"})
	if err != nil || !strings.Contains(r.User, "turn index 4") || !strings.Contains(r.System, "Never use the word Aria") {
		t.Fatalf("rewrite prompt: %v\n%s", err, r.User)
	}
}

func TestMissingFieldIsAnError(t *testing.T) {
	if _, err := Render(Rewrite, map[string]any{"TIndex": 4}); err == nil {
		t.Fatal("a missing template field rendered")
	}
}

func TestHash(t *testing.T) {
	a, err := Hash(Scenario)
	b, _ := Hash(Rewrite)
	if err != nil || !strings.HasPrefix(a, "sha256:") || len(a) != 71 || a == b {
		t.Fatalf("hashes %q %q (%v)", a, b, err)
	}
	if _, err := Hash("nope.tmpl"); err == nil {
		t.Fatal("hash of a missing template")
	}
}
