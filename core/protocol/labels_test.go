package protocol

import (
	"strings"
	"testing"
)

// The report and the viewer print "Aria should <Should>", so Should is a bare verb
// phrase: "Aria should may answer" was on every viewer page (issue 30).
func TestShouldReadsAfterAriaShould(t *testing.T) {
	for _, m := range LabelMeanings {
		first := strings.Fields(m.Should)[0]
		switch first {
		case "may", "might", "can", "could", "should", "must", "will", "would", "to":
			t.Errorf("%s: %q reads \"Aria should %s\"", m.Label, m.Should, m.Should)
		}
	}
}
