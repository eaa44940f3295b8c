package voila_test

import (
	"testing"

	"github.com/duplexmpe/duplexmpe/plugins/internal/adaptertest"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// The voila adapter under the real duplexmpe plugin host, with the model library replaced
// by its numpy stand-in (plugins/_standins); the checks are in plugins/internal/adaptertest.
var adapter = adaptertest.Adapter{
	Name:       "voila",
	Factory:    "standin_voila:load",
	Format:     sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 640},
	LoudFrames: 5,
	QuietAfter: 30,
	BadField:   "top_k",
}

func TestConformance(t *testing.T)  { adaptertest.Conformance(t, adapter) }
func TestUnderTheHost(t *testing.T) { adaptertest.UnderTheHost(t, adapter) }
