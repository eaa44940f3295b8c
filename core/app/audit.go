package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/duplexmpe/duplexmpe/core/audit"
	"github.com/duplexmpe/duplexmpe/core/audit/answers"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
)

// DefaultAuditJudge is the judge `dataset audit` puts the wrong answers to when none is
// named: the lexical judge `make build` writes beside the duplexmpe binary
// (bin/plugins/lexical-judge), the benchmark's shipped judge.
func DefaultAuditJudge() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return filepath.Join(filepath.Dir(exe), "plugins", "lexical-judge")
}

// AuditDataset runs the shortcut audit (core/audit) on a release or scenario set. The
// answers check puts the wrong-answer family of every gold (core/audit/answers) to the
// judge plugin at judgeSource, started as any run starts it; judgeSource "" leaves that
// check not run. A judge that cannot start or answer is the judge's failure (exit 1 when
// a retry may help), not a finding about the set.
func AuditDataset(ctx context.Context, path, judgeSource string) (*audit.Report, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fault.Deterministic(fmt.Errorf("audit: %w", err))
	}
	var opts audit.Options
	if judgeSource != "" {
		if _, err := os.Stat(judgeSource); err != nil {
			return nil, fault.Deterministic(fmt.Errorf("audit: the judge %s: %w (run `make build`, or name one with --judge)", judgeSource, err))
		}
		opts.Answers = func(all []dataset.Scenario) ([]audit.Check, error) {
			return auditAnswers(ctx, all, judgeSource)
		}
	}
	rep, err := audit.Path(path, opts)
	if err != nil {
		var je *judgeError
		if errors.As(err, &je) {
			return nil, err
		}
		return nil, fault.Deterministic(err)
	}
	return rep, nil
}

// judgeError marks a failure of the audit's judge, so that it is not mistaken for a
// damaged set.
type judgeError struct{ err error }

func (e *judgeError) Error() string { return e.err.Error() }
func (e *judgeError) Unwrap() error { return e.err }

func auditAnswers(ctx context.Context, all []dataset.Scenario, source string) ([]audit.Check, error) {
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "audit-judge", Source: source}, nil)
	if err != nil {
		return nil, &judgeError{fmt.Errorf("audit: starting the judge %s: %w", source, err)}
	}
	defer c.Kill()
	if err := c.Configure(ctx, map[string]any{}); err != nil {
		return nil, &judgeError{fmt.Errorf("audit: configuring the judge %s: %w", source, err)}
	}
	j, err := c.Judge()
	if err != nil {
		return nil, &judgeError{fmt.Errorf("audit: the plugin %s is not a judge: %w", source, err)}
	}
	info, err := c.Describe(ctx)
	if err != nil {
		return nil, &judgeError{fmt.Errorf("audit: describing the judge %s: %w", source, err)}
	}
	r, err := answers.CheckAnswers(ctx, all, j)
	if err != nil {
		return nil, &judgeError{fmt.Errorf("audit: the judge %s failed: %w", source, err)}
	}
	// The judge is named by what it is (its name and version), not where it lies.
	return AnswersChecks(r, info.Name+" "+info.Version), nil
}

// AnswersChecks states an answers report as the audit's two checks: no pair accepts a
// wrong answer, and yes/no golds are few and balanced.
func AnswersChecks(r answers.Report, judge string) []audit.Check {
	wrong := audit.Check{Name: "answers", Goal: "0 pairs accept a wrong answer",
		Value: fmt.Sprintf("%d of %d pairs accept one of %d wrong answers", r.AcceptedPairs, r.Pairs, r.Judged),
		Pass:  r.AcceptedPairs == 0, Detail: "judge " + judge}
	for _, a := range r.Accepted {
		wrong.Items = append(wrong.Items, fmt.Sprintf("%s accepts %q (%s) for %q", a.ScenarioID, a.Text, a.Kind, a.Gold))
	}
	right := audit.Check{Name: "answers: golds accepted", Goal: "every gold and accepted variant judged correct",
		Value: fmt.Sprintf("%d of %d refused", len(r.Refused), r.Rights), Pass: len(r.Refused) == 0}
	for _, f := range r.Refused {
		right.Items = append(right.Items, fmt.Sprintf("%s refuses %q for %q: %s", f.ScenarioID, f.Text, f.Gold, f.Rationale))
	}
	yn := audit.Check{Name: "answers: yes/no golds",
		Goal:  fmt.Sprintf("at most %.0f%% of golds yes or no, yes and no within %d", 100*answers.MaxYesNoShare, answers.MaxYesNoImbalance),
		Value: fmt.Sprintf("%d of %d (%.1f%%): %d yes, %d no", r.YesNoPairs, r.Pairs, 100*r.YesNoShare, r.Yes, r.No)}
	d := r.Yes - r.No
	yn.Pass = r.YesNoShare <= answers.MaxYesNoShare && d <= answers.MaxYesNoImbalance && -d <= answers.MaxYesNoImbalance
	return []audit.Check{wrong, right, yn}
}
