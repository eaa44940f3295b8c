package audio

import "testing"

// ResampledLength is what the resampler makes: the scheduler's layout counts on it.
func TestResampledLengthIsTheResamplers(t *testing.T) {
	for _, rates := range [][2]int{{16000, 24000}, {24000, 16000}, {22050, 24000}, {44100, 16000}, {16000, 16000}, {8000, 48000}} {
		for _, n := range []int{0, 1, 7, 160, 16001, 37411} {
			got := len(Resample(PCM{Samples: make([]float32, n), Rate: rates[0]}, rates[1]).Samples)
			if want := ResampledLength(int64(n), rates[0], rates[1]); int64(got) != want {
				t.Errorf("%d samples %d -> %d Hz: the resampler makes %d, ResampledLength says %d", n, rates[0], rates[1], got, want)
			}
		}
	}
}
