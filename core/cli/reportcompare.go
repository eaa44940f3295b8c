package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/rundir"
)

// reportCompare is `report --compare DIR DIR... --out DIR`: one page with the runs'
// tables side by side (report.WriteComparison).
func reportCompare(st *State, args []string, out string) error {
	if len(args) < 2 {
		return UsageErrorf("report --compare takes two or more run directories (got %d)", len(args))
	}
	if out == "" {
		return UsageErrorf("report --compare needs --out DIR, the folder for %s and %s", report.CompareHTMLFile, report.CompareMarkdownFile)
	}
	dirs := make([]string, len(args))
	for i, a := range args {
		dirs[i] = resolvePath(st, a)
		if _, err := os.Stat(dirs[i]); errors.Is(err, fs.ErrNotExist) {
			return fault.Deterministicf("%s does not exist: give the run directories runs wrote (their `out`)", a)
		}
	}
	dest := resolvePath(st, out)
	lock, err := rundir.Acquire(dest, rundir.Options{Create: true})
	if err != nil {
		return err
	}
	defer lock.Release()
	runs, err := report.WriteComparison(dest, dirs)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(st.Stdout, "Wrote %s and %s in %s (%d runs side by side)\n", report.CompareHTMLFile, report.CompareMarkdownFile, dest, len(runs))
	return err
}
