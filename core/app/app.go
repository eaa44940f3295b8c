// Package app is the application layer under the command line: one function per
// command that does work, taking a checked run file and returning what it did, for the
// CLI to print. The CLI parses flags, calls one of these, and prints; the stages of the
// data flow (dataset, evaluate, score, report) know nothing of run files, and this
// package is where the two meet.
//
// The rule for which commands go through app: a command that joins stages of the data
// flow for a run file or a run directory (a dataset built before it is played, plugins
// started to play or to score, a plan read against the run store, scorings set side by
// side) calls one function here. A command that works on one input with one package
// calls that package directly, and app has no function for it. So, through app:
//
//	BuildDataset   build one dataset block: scripts, TTS, clips      (duplexmpe build)
//	Evaluate       build, play every conversation, score, report   (duplexmpe run)
//	Score          score a run directory again, then report          (duplexmpe score)
//	Plan           what a run will cost, read against its store      (duplexmpe plan)
//	RunReference   the text reference track                          (duplexmpe reference)
//	TestPlugins    the conformance suite against a run file's plugins (duplexmpe plugins test)
//	Compare        scorings side by side, paired tests               (duplexmpe compare)
//	Prune          remove the items of earlier plans                 (duplexmpe prune)
//	ListRuns, PrintRuns  the run directories under a folder, by store and run.json (duplexmpe runs)
//	CheckFileConfigs  every plugin's config block against its schema, recorded or described (duplexmpe validate)
//	AuditDataset, DefaultAuditJudge  the shortcut audit, its answers check put to a judge plugin (duplexmpe dataset audit)
//
// with ReadRunInfo and ReferenceJobs, which read what those commands need (run.json,
// a run file's reference blocks). Directly, with no function here: validate's checks of the
// run file itself (core/config),
// plugins and lock (core/pluginstart), report and explain (core/report,
// core/score/explain), merge (core/store), sample and agreement (core/review), dataset
// but audit (core/dataset, core/construct, core/review), vad (core/vad) and version. A new
// command that joins stages gets its function here; TestPackageDocNamesWhatTheCLICalls
// keeps this list true.
//
// Every plugin is started the checked way (core/pluginstart); the loops themselves are
// core/evaluate's Run (play) and Score. Progress, plugin warnings and each stage's
// result as it finishes reach the caller through UI, so a long run shows what it did as
// it goes.
package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/core/progress"
	"github.com/duplexmpe/duplexmpe/core/store"
)

// UI is how a command shows what it does while it runs; the CLI fills it. Every field
// may be nil.
type UI struct {
	// Logger receives the plugins' log lines.
	Logger hclog.Logger
	// Progress shows the counted phases of work (clips synthesised, conversations
	// played and scored): each is a core/progress Counter the stages report into.
	Progress progress.Printer
	// Notef prints a remark that is not a result (the CLI writes it to stderr).
	Notef func(format string, args ...any)
	// Built, Played and Scored receive each stage's result as soon as it is done;
	// Planned the plan of a run, with the plugins started, just before it plays.
	Built   func(*BuildResult)
	Planned func(*PlayResult)
	Played  func(*PlayResult)
	Scored  func(*ScoreResult)
}

// counter is a phase of work ("scoring", "minimal", "conversations") shown by
// ui.Progress; the stage it is handed to starts it, and the caller finishes it.
func (ui UI) counter(verb, name, unit string) *progress.Counter {
	return progress.New(ui.Progress, verb, name, unit)
}

func (ui UI) notef(format string, args ...any) {
	if ui.Notef != nil {
		ui.Notef(format, args...)
	}
}

func (ui UI) starter() pluginstart.Options { return pluginstart.Options{Logger: ui.Logger} }

// UsageError is a mistake in what the command line asked for (a --judge naming no
// plugin block, a --reference naming no reference block): the CLI exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// ProblemsError is a failure with many problems (the violations of a set of scripts):
// the CLI prints each problem on its own line, then Summary when there is one.
type ProblemsError struct {
	Problems []string
	Summary  string
}

// Deterministic: the scripts must change (core/fault).
func (e *ProblemsError) Deterministic() bool { return true }

func (e *ProblemsError) Error() string {
	s := strings.Join(e.Problems, "\n")
	if e.Summary != "" {
		s += "\n" + e.Summary
	}
	return s
}

// RunInfo is RUN_DIR/run.json: where the run came from, so that `score RUN_DIR` and
// `report RUN_DIR` can find the run file again. It is not part of the manifest, which
// must be equal on every shard wherever it ran.
type RunInfo struct {
	RunFile    string   `json:"run_file"`
	Evaluation string   `json:"evaluation"`
	Vars       []string `json:"vars,omitempty"`
	// Partial is set by `run --limit N` when the run played fewer pairs than its dataset
	// holds; a run without --limit writes run.json without it. Scoring marks the summary
	// and the report with it, so a partial run is never mistaken for a full one.
	Partial *Partial `json:"partial,omitempty"`
}

// Partial says which part of its dataset a `run --limit N` played: the first Pairs of
// its OfPairs pairs (both conditions of each), in the dataset's order.
type Partial struct {
	Dataset string `json:"dataset"`
	Pairs   int    `json:"pairs"`
	OfPairs int    `json:"of_pairs"`
}

// String is the line the report and the command line show for a partial run.
func (p *Partial) String() string {
	return fmt.Sprintf("the first %d of the %d pairs of dataset %s (run --limit %d): not the dataset's result; run without --limit to play the rest into the same directory",
		p.Pairs, p.OfPairs, p.Dataset, p.Pairs)
}

// RunInfoFile is the name of RunInfo in a run directory.
const RunInfoFile = store.RunInfoFile

// ReadRunInfo reads a run directory's run.json.
func ReadRunInfo(runDir string) (RunInfo, error) {
	var info RunInfo
	err := readJSONFile(filepath.Join(runDir, RunInfoFile), &info)
	return info, err
}

// writeJSONFile writes v as indented JSON, atomically.
func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'))
}

func readJSONFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// startBlock starts the plugin block name of s's run file the checked way; missing is
// the error when the file declares no such block.
func startBlock(ctx context.Context, s *pluginstart.Starter, name string, missing error) (*pluginstart.Plugin, error) {
	b := s.File.Plugin(name)
	if b == nil {
		return nil, missing
	}
	return s.Start(ctx, b)
}
