package conformance

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
)

// Result is the outcome of one check of Check.
type Result struct {
	// Name is the check's path, e.g. "model/wrong_size_frame".
	Name    string
	Failed  bool
	Skipped bool
	// Messages are what the check reported: its errors when it failed, its log lines.
	Messages []string
}

// Check runs the suite outside `go test` (the harness binary does, for `duplexmpe
// plugins test`) and returns every check's result, sub-checks before the check that
// holds them, in the order they finished.
func Check(target Target, opts Options) []Result {
	r := &recorder{results: &[]Result{}, mu: &sync.Mutex{}}
	r.do(func(t T) { Run(t, target, opts) })
	return *r.results
}

// Failures are the failed checks of results that failed on their own account (not
// only because a sub-check failed).
func Failures(results []Result) []Result {
	var out []Result
	for _, r := range results {
		if !r.Failed {
			continue
		}
		child := false
		for _, o := range results {
			child = child || (o.Failed && strings.HasPrefix(o.Name, r.Name+"/"))
		}
		if !child || len(r.Messages) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// recorder is a T that keeps the results. Like testing.T, Fatal and Skip end the
// check's goroutine, and a failed sub-check fails the check that holds it.
type recorder struct {
	name     string
	failed   bool
	skipped  bool
	messages []string
	cleanups []func()
	results  *[]Result
	mu       *sync.Mutex // guards results
}

// do runs f as this check's body in a goroutine of its own (so that Fatal can end it),
// then the cleanups, last registered first.
func (r *recorder) do(f func(T)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				r.failed = true
				r.messages = append(r.messages, fmt.Sprintf("panic: %v", p))
			}
		}()
		f(r)
	}()
	<-done
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func (r *recorder) Run(name string, f func(T)) bool {
	full := name
	if r.name != "" {
		full = r.name + "/" + name
	}
	c := &recorder{name: full, results: r.results, mu: r.mu}
	c.do(f)
	r.mu.Lock()
	*r.results = append(*r.results, Result{Name: full, Failed: c.failed, Skipped: c.skipped, Messages: c.messages})
	r.mu.Unlock()
	if c.failed {
		r.failed = true
	}
	return !c.failed
}

func (r *recorder) Helper() {}

func (r *recorder) Logf(format string, args ...any) {
	r.messages = append(r.messages, fmt.Sprintf(format, args...))
}

func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.Logf(format, args...)
}

func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

func (r *recorder) Skip(args ...any) {
	r.skipped = true
	r.Logf("%s", fmt.Sprint(args...))
	runtime.Goexit()
}

func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
