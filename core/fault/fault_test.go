package fault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

type inputError struct{}

func (inputError) Error() string       { return "bad input" }
func (inputError) Deterministic() bool { return true }

func TestIsDeterministic(t *testing.T) {
	base := errors.New("the run file is bad")
	marked := Deterministic(base)
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", base, false},
		{"marked", marked, true},
		{"marked, wrapped", fmt.Errorf("evaluation %q: %w", "x", marked), true},
		{"typed", inputError{}, true},
		{"typed, wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", inputError{})), true},
		{"interrupted", fmt.Errorf("stopped: %w", context.Canceled), false},
		{"joined, all deterministic", errors.Join(marked, inputError{}), true},
		{"joined with a transient one", errors.Join(marked, errors.New("plugin died")), false},
		{"two %w, one transient", fmt.Errorf("%w and %w", marked, fs.ErrNotExist), false},
		{"formatted", Deterministicf("pin %s refused", "x"), true},
	}
	for _, c := range cases {
		if got := IsDeterministic(c.err); got != c.want {
			t.Errorf("%s: IsDeterministic(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
	if !errors.Is(marked, base) || Deterministic(nil) != nil || marked.Error() != base.Error() {
		t.Error("the mark changes what the error is or says")
	}
}
