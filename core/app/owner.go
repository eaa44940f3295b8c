package app

import (
	"os"
	"path/filepath"

	"github.com/duplexmpe/duplexmpe/core/fault"
)

// checkOwner refuses to run an evaluation of runFile into the run directory dir when
// another run file made it (its RunInfo names one that is not runFile, nor a link to
// it): the run would take the directory over, count only its own models, and offer to
// prune the other run file's results. Editing the run file (adding a model) changes
// nothing here; a directory without RunInfo (new, or merged from shards) belongs to
// whichever run file runs in it first. adopt (`run --adopt`) takes it over, for the
// same run file moved or renamed: RunInfo then records the new path. The refusal is
// deterministic (exit 3).
func checkOwner(dir, runFile string, adopt bool) error {
	info, err := ReadRunInfo(dir)
	if err != nil || info.RunFile == "" || adopt || sameFile(info.RunFile, runFile) {
		return nil // none, or unreadable: the run writes its own
	}
	gone := ""
	if _, err := os.Stat(info.RunFile); err != nil {
		gone = ", which is no longer there"
	}
	return fault.Deterministicf("%s was made by the run file %s%s, not by %s: a run directory holds the results of one run file, and this run would count only its own models "+
		"(and offer to prune the others' results). Give this evaluation an out of its own (out = \"runs/<name>\", or --var out=DIR when out is a variable); "+
		"or, if %s is that run file moved or renamed, run it with --adopt, which records it as the directory's run file and keeps every result there",
		dir, info.RunFile, gone, runFile, runFile)
}

// sameFile: a and b name one file, by path or, when both exist, by identity (a link).
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
