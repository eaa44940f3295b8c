package sdk_test

import (
	"testing"

	"github.com/duplexmpe/duplexmpe/sdk"
)

func TestConcurrency(t *testing.T) {
	for _, tc := range []struct {
		caps []string
		want int
	}{
		{nil, 0},
		{[]string{sdk.CapText, "model.concurrency=3"}, 3},
		{[]string{"model.concurrency=x", "model.concurrency=0", "model.concurrency=-2"}, 0},
		{[]string{"model.concurrency=0", "model.concurrency=2"}, 2},
	} {
		if got := sdk.Concurrency(tc.caps); got != tc.want {
			t.Errorf("Concurrency(%q) = %d; want %d", tc.caps, got, tc.want)
		}
	}
}
