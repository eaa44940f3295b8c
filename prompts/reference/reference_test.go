package reference

import (
	"strings"
	"testing"
)

func TestRenderPutsCurrentTurnLast(t *testing.T) {
	p, err := Render(Decide, Data{
		Duty:    "You are Aria.",
		History: []Line{{"A", "Hello\nthere"}, {"B", "Hi."}},
		Current: Line{"C", "Aria, what time is it?"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.System, "You are Aria.") || !strings.Contains(p.System, `"decision"`) {
		t.Errorf("system: %q", p.System)
	}
	lines := strings.Split(p.User, "\n")
	if last := lines[len(lines)-1]; last != "C: Aria, what time is it?" {
		t.Errorf("last line %q", last)
	}
	if !strings.Contains(p.User, "A: Hello there\nB: Hi.") {
		t.Errorf("history not one line per turn: %q", p.User)
	}

	empty, err := Render(Decide, Data{Duty: "d", Current: Line{"A", "x"}})
	if err != nil || !strings.Contains(empty.User, "(nothing yet)") {
		t.Errorf("first turn: %q %v", empty.User, err)
	}
}

func TestHash(t *testing.T) {
	h, err := Hash(Decide)
	if err != nil || !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 {
		t.Fatalf("%q %v", h, err)
	}
	if _, err := Hash("nope.tmpl"); err == nil {
		t.Error("missing template hashed")
	}
}
