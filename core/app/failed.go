package app

import (
	"fmt"
	"strings"
)

// FailedConversations is the error of an evaluation that played to the end (and scored
// and reported what it could) while some conversations failed: the model crashed, hung,
// or sent what the protocol refuses. The command could not finish its work, so it must
// not exit 0; running it again may pass, since a run plays failed conversations again.
// Nil when none failed.
func (r *EvaluateResult) FailedConversations() error {
	if r == nil || r.Play == nil || r.Play.Total.Failed == 0 {
		return nil
	}
	p := r.Play
	var per []string
	for i, name := range p.Models {
		if c := p.Counts[i]; c != nil && c.Failed > 0 {
			per = append(per, fmt.Sprintf("%s: %d", name, c.Failed))
		}
	}
	return fmt.Errorf("evaluation %q: %d conversations failed (%s); each item's failure.json in %s says why, the report counts them as failed, and the same command plays them again",
		p.Evaluation, p.Total.Failed, strings.Join(per, ", "), p.Out)
}
