package freezeomni_test

import (
	"testing"

	"github.com/duplexmpe/duplexmpe/plugins/internal/adaptertest"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// The freeze-omni adapter under the real duplexmpe plugin host, with the model library replaced
// by its numpy stand-in (plugins/_standins); the checks are in plugins/internal/adaptertest.
var adapter = adaptertest.Adapter{
	Name:       "freeze-omni",
	Factory:    "standin_freezeomni:load",
	Format:     sdk.Format{InputRate: 16000, OutputRate: 24000, FrameSize: 2560},
	LoudFrames: 5,
	QuietAfter: 10,
	BadField:   "top_p",
}

func TestConformance(t *testing.T)  { adaptertest.Conformance(t, adapter) }
func TestUnderTheHost(t *testing.T) { adaptertest.UnderTheHost(t, adapter) }
