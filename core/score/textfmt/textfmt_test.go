package textfmt

import (
	"math"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/score"
)

func TestFormats(t *testing.T) {
	for got, want := range map[string]string{
		Rate(score.Rate{K: 19, N: 20, Rate: 0.95, Lo: 0.7639, Hi: 0.9911, Available: true}): "0.950 (19/20) [0.764, 0.991]",
		Rate(score.Rate{N: 12, Text: "n/a (n=12)"}):                                         "n/a (n=12)",
		Rate(score.Rate{N: 0}): "n/a (n=0)",
		Paired(11.0/12, 12):    "0.917 (11/12)",
		Paired(0, 0):           "n/a (n=0)",
		Signed(-0.0001):        "+0.000",
		Signed(-0.25):          "-0.250",
		P(math.NaN()):          "n/a",
		P(0.00098):             "9.8e-04",
		P(0.396):               "0.396",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
