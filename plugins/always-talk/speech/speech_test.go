package speech

import (
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk"
)

func TestFrameOutputAddsUpToRealTime(t *testing.T) {
	for _, f := range []sdk.Format{
		{InputRate: 24000, OutputRate: 24000, FrameSize: 1920},
		{InputRate: 16000, OutputRate: 24000, FrameSize: 2560},
		{InputRate: 16000, OutputRate: 22050, FrameSize: 160}, // 220.5 a frame
	} {
		total := 0
		for k := 0; k < 1000; k++ {
			total += FrameOutput(f, k)
			if want := (k + 1) * f.FrameSize * f.OutputRate / f.InputRate; total != want {
				t.Fatalf("%+v: %d samples after %d frames, want %d", f, total, k+1, want)
			}
		}
	}
}

func TestLoopWraps(t *testing.T) {
	l := NewLoop([]float32{1, 2, 3}, 4)
	got := l.Next(7)
	want := []float32{2, 3, 1, 2, 3, 1, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("loop gave %v, want %v", got, want)
		}
	}
}

func TestVoice(t *testing.T) {
	v16, err := Voice(16000)
	if err != nil {
		t.Fatal(err)
	}
	v24, err := Voice(24000)
	if err != nil {
		t.Fatal(err)
	}
	if d := len(v24) - len(v16)*3/2; len(v16) < 7*16000 || d < 0 || d > 1 {
		t.Errorf("voice: %d samples at 16 kHz, %d at 24 kHz", len(v16), len(v24))
	}
}

func TestParseFormat(t *testing.T) {
	f, err := ParseFormat(map[string]any{})
	if err != nil || f != DefaultFormat {
		t.Errorf("defaults: %+v %v", f, err)
	}
	f, err = ParseFormat(map[string]any{"input_rate": 16000.0, "output_rate": 24000.0, "frame_ms": 160.0})
	if err != nil || f != (sdk.Format{InputRate: 16000, OutputRate: 24000, FrameSize: 2560}) {
		t.Errorf("Freeze-Omni shape: %+v %v", f, err)
	}
	for _, bad := range []map[string]any{{"input_rate": 7999.0}, {"frame_ms": 0.5}, {"output_rate": "24k"}, {"input_rate": 22050.0, "frame_ms": 1.0}} {
		if _, err := ParseFormat(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
