package minicpmo_test

import (
	"testing"

	"github.com/duplexmpe/duplexmpe/plugins/internal/adaptertest"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// The minicpm-o adapter under the real duplexmpe plugin host, with the model library replaced
// by its numpy stand-in (plugins/_standins); the checks are in plugins/internal/adaptertest.
var adapter = adaptertest.Adapter{
	Name:       "minicpm-o",
	Factory:    "standin_minicpmo:load",
	Format:     sdk.Format{InputRate: 16000, OutputRate: 24000, FrameSize: 16000},
	LoudFrames: 2,
	QuietAfter: 4,
	BadField:   "decode_mode",
}

func TestConformance(t *testing.T)  { adaptertest.Conformance(t, adapter) }
func TestUnderTheHost(t *testing.T) { adaptertest.UnderTheHost(t, adapter) }
