package flmaudio_test

import (
	"testing"

	"github.com/duplexmpe/duplexmpe/plugins/internal/adaptertest"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// The flm-audio adapter under the real duplexmpe plugin host, with the model library replaced
// by its numpy stand-in (plugins/_standins); the checks are in plugins/internal/adaptertest.
var adapter = adaptertest.Adapter{
	Name:       "flm-audio",
	Factory:    "standin_flmaudio:load",
	Format:     sdk.Format{InputRate: 24000, OutputRate: 24000, FrameSize: 1920},
	LoudFrames: 4,
	QuietAfter: 30,
	BadField:   "top_p_text",
}

func TestConformance(t *testing.T)  { adaptertest.Conformance(t, adapter) }
func TestUnderTheHost(t *testing.T) { adaptertest.UnderTheHost(t, adapter) }
