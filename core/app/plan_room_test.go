package app

import (
	"testing"

	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/plan"
	"github.com/duplexmpe/duplexmpe/core/room"
)

// A room built from a clean set synthesises the lines of its babble, which no clean set
// holds: plan counts them; a room whose background is noise synthesises nothing more.
func TestPlanCountsARoomsBabble(t *testing.T) {
	base := plan.Build{Clips: 3, AudioS: 6}
	lr, _ := room.ByName("living-room")
	living := withBabble(base, lr)
	if living.Clips != 3+len(construct.BabbleLines) || living.AudioS <= base.AudioS || living.CPUSeconds != living.AudioS*plan.SynthesisCPUPerAudioS {
		t.Errorf("living room: %+v from %+v, want the %d babble lines added", living, base, len(construct.BabbleLines))
	}
	car, _ := room.ByName("car")
	if car := withBabble(base, car); car != base {
		t.Errorf("car: %+v, want %+v", car, base)
	}
}
