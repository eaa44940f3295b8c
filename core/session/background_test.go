package session

import (
	"math"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// A room's background loop is added under every input sample, from its offset on and
// round its end, without moving anything the schedule lays out.
func TestBackgroundPlaysUnderTheWholeInput(t *testing.T) {
	format := sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1600}
	dry := &scripted{format: format}
	conv := conversation(16000, 0.35, sixTurns)
	recDry := run(t, dry, conv, testOptions())

	// A loop of 0.7 s whose samples are all distinct, started 0.25 s in.
	bed := make([]float32, 11200)
	for i := range bed {
		bed[i] = float32(i+1) * 1e-6
	}
	const at = 4000
	wet := &scripted{format: format}
	conv.Background, conv.BackgroundAt = audio.PCM{Samples: bed, Rate: 16000}, at
	recWet := run(t, wet, conv, testOptions())

	if len(wet.input) != len(dry.input) || recWet.Frames != recDry.Frames {
		t.Fatalf("the background changed the schedule: %d input samples in %d frames, %d in %d without it",
			len(wet.input), recWet.Frames, len(dry.input), recDry.Frames)
	}
	for i, tu := range recWet.Timeline.Turns {
		if d := recDry.Timeline.Turns[i]; tu.Start != d.Start || tu.End != d.End {
			t.Fatalf("turn %d at %g-%g with the background, %g-%g without", i, tu.Start, tu.End, d.Start, d.End)
		}
	}
	for i := range wet.input {
		want := dry.input[i] + bed[(at+i)%len(bed)]
		if math.Abs(float64(wet.input[i]-want)) > 1e-7 {
			t.Fatalf("input sample %d = %g, want %g (dry %g + background sample %d)", i, wet.input[i], want, dry.input[i], (at+i)%len(bed))
		}
	}
}

// A background at another rate is resampled to the model's input rate, its offset
// with it.
func TestBackgroundIsResampledToTheInputRate(t *testing.T) {
	format := sdk.Format{InputRate: 16000, OutputRate: 16000, FrameSize: 1600}
	conv := conversation(16000, 0.35, sixTurns)
	bed := constant(0.01, 24000, 2.0)
	m := &scripted{format: format}
	conv.Background, conv.BackgroundAt = bed, 12000
	run(t, m, conv, testOptions())
	dry := &scripted{format: format}
	conv.Background = audio.PCM{}
	run(t, dry, conv, testOptions())
	// Away from the loop's seam the constant bed adds 0.01 to every sample.
	for _, i := range []int{100, 5000, 16000, 31000} {
		if d := wet(m.input, dry.input, i); math.Abs(d-0.01) > 1e-3 {
			t.Errorf("sample %d: the background added %g, want 0.01", i, d)
		}
	}
}

func wet(a, b []float32, i int) float64 { return float64(a[i] - b[i]) }
