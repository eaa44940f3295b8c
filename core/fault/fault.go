// Package fault tells a scheduler whether retrying a failed command can help. A
// deterministic failure is one of the input: a run file that does not load, a plugin
// refused by its pin or its config schema, a dataset that breaks the rules, a run
// directory that holds another run. Run again unchanged, it fails the same way, so a
// Slurm array or a Kubernetes Indexed Job should stop retrying it (the CLI exits 3).
// Everything else (a plugin that crashed, a service that is down, an interrupted run, a
// full disk) is transient: a retry may pass (exit 1).
//
// Failures are classified where they arise, by type: an error type says it is
// deterministic with a Deterministic() bool method, and an untyped error is marked with
// Deterministic(err). Nothing is classified by its message.
package fault

import "fmt"

// deterministicError marks an error as deterministic.
type deterministicError struct{ err error }

func (e *deterministicError) Error() string       { return e.err.Error() }
func (e *deterministicError) Unwrap() error       { return e.err }
func (e *deterministicError) Deterministic() bool { return true }

// Deterministic marks err as a failure of the input that a retry cannot mend; nil stays
// nil. errors.Is and errors.As see through it.
func Deterministic(err error) error {
	if err == nil {
		return nil
	}
	return &deterministicError{err}
}

// Deterministicf is Deterministic(fmt.Errorf(format, args...)).
func Deterministicf(format string, args ...any) error {
	return Deterministic(fmt.Errorf(format, args...))
}

// IsDeterministic reports whether err is deterministic: an error in its chain says so.
// A joined error (errors.Join, or fmt.Errorf with several %w) is deterministic only when
// each of its parts is, since a retry may mend the others.
func IsDeterministic(err error) bool {
	if err == nil {
		return false
	}
	if d, ok := err.(interface{ Deterministic() bool }); ok && d.Deterministic() {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		errs := u.Unwrap()
		for _, e := range errs {
			if !IsDeterministic(e) {
				return false
			}
		}
		return len(errs) > 0
	case interface{ Unwrap() error }:
		return IsDeterministic(u.Unwrap())
	}
	return false
}
