package protocol

import (
	"strings"
	"testing"
)

func TestDefaultsAreSection8AndValid(t *testing.T) {
	p := Defaults()
	want := Params{PreambleGap: 0.5, TurnGap: 0.5, TOnsetWindow: 5, TEndSilence: 2, TWaitCap: 60,
		N4Gap: 3, YieldDeadline: 2, YieldObserve: 0.5, MinEligible: 30, Tail: 2, BootstrapResamples: 10000}
	if p != want {
		t.Fatalf("Defaults() = %+v, want %+v", p, want)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := DefaultVAD().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidateNamesEveryBadValue(t *testing.T) {
	p := Defaults()
	p.TurnGap = -1
	p.TWaitCap = 4 // below t_onset_window = 5
	p.MinEligible = 0
	err := p.Validate()
	if err == nil {
		t.Fatal("bad params accepted")
	}
	for _, name := range []string{"turn_gap", "t_wait_cap", "min_eligible"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}

func TestVADNegativeThreshold(t *testing.T) {
	v := DefaultVAD()
	if got := v.EffectiveNegThreshold(); got < 0.3499 || got > 0.3501 {
		t.Errorf("default negative threshold = %g, want threshold - 0.15 = 0.35", got)
	}
	v.NegThreshold = 0.2
	if got := v.EffectiveNegThreshold(); got != 0.2 {
		t.Errorf("explicit negative threshold = %g, want 0.2", got)
	}
	// Silero's floor (section 4.2): max(threshold - 0.15, 0.01). A low threshold used to
	// give a negative lower threshold, refused by Validate.
	low := VAD{Model: SileroV5, Threshold: 0.1}
	if got := low.EffectiveNegThreshold(); got != 0.01 {
		t.Errorf("negative threshold for threshold 0.1 = %g, want the floor 0.01", got)
	}
	if err := low.Validate(); err != nil {
		t.Errorf("threshold 0.1 refused: %v", err)
	}
	for _, bad := range []VAD{
		{Model: "silero-v4", Threshold: 0.5},
		{Model: SileroV5, Threshold: 1.2},
		{Model: SileroV5, Threshold: 0.5, NegThreshold: 0.7},
		{Model: SileroV5, Threshold: 0.5, MergePause: -0.1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestIsSilenceLabel(t *testing.T) {
	for _, l := range Labels {
		want := l == LabelN1 || l == LabelN2 || l == LabelN3
		if IsSilenceLabel(l) != want {
			t.Errorf("IsSilenceLabel(%s) = %v", l, !want)
		}
	}
}
