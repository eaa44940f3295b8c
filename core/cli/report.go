package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/report"
	"github.com/duplexmpe/duplexmpe/core/rundir"
)

func newReportCmd(st *State) *cobra.Command {
	var out, ref string
	var budget byteSize
	var compare bool
	cmd := &cobra.Command{
		Use:   "report RUN_DIR [--reference DIR] | --compare DIR DIR... --out DIR",
		Short: "Render the report of a scored run again: report.md, results.json, results.csv, report.html",
		Long: `Reads RUN_DIR/` + report.SummaryFile + ` and RUN_DIR/` + report.MetaFile + ` (written by ` + "`duplexmpe score`" + `),
writes ` + report.MarkdownFile + `, ` + report.JSONFile + `, ` + report.CSVFile + ` and ` + report.HTMLFile + ` into RUN_DIR (or --out),
and prints the main table. Nothing is re-scored: to change the protocol values, score again.
The HTML works from disk with no network; with the run directory's per-item records next
to it, it links every table cell to the conversations behind it, and viewer/ gets a page
and a stereo recording (room left, model right) per conversation.
The text reference run the evaluation names (reference = reference.x, recorded when the
run was scored) is shown after the paired section; --reference DIR shows the one in
DIR/reference.json instead (written by ` + "`duplexmpe reference`" + `).
The stereo recordings go within a budget (--recordings-budget, 2GiB by default, the
figure duplexmpe plan counts): conversations with a failed decision first, then the
rest in item order; the pages of the others play the model's stored audible output.
With --compare, the scored runs given are shown side by side on one page, ` + report.CompareHTMLFile + `
and ` + report.CompareMarkdownFile + ` in --out: each run's main table as its report prints it.`,
		Example: examples(
			"duplexmpe report runs/bench",
			"duplexmpe report runs/bench --reference runs/reference --out /tmp/report",
			"duplexmpe report --compare runs/bench runs/bench-natural --out /tmp/compare",
		),
		Args: func(cmd *cobra.Command, args []string) error {
			if compare {
				return nil // reportCompare checks its own
			}
			return exactArgs(1, "one run directory")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if compare {
				return reportCompare(st, args, out)
			}
			dir := resolvePath(st, args[0])
			if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
				return fault.Deterministicf("%s does not exist: give the run directory a run wrote (its `out`)", args[0])
			}
			if out != "" {
				if err := rundir.CheckOut(resolvePath(st, out), "--out"); err != nil {
					return err
				}
			}
			s, meta, err := report.Load(dir)
			if err != nil {
				return err
			}
			if ref != "" {
				meta.ReferenceDir = resolvePath(st, ref)
			}
			if budget > 0 {
				meta.RecordingsBudget = int64(budget)
			}
			dest := dir
			if out != "" {
				dest = resolvePath(st, out)
			}
			lock, err := rundir.Acquire(dest, rundir.Options{Create: true})
			if err != nil {
				return err
			}
			defer lock.Release()
			if err := report.WriteAll(dest, s, meta); err != nil {
				return err
			}
			if err := report.MainTable(st.Stdout, s); err != nil {
				return err
			}
			_, err = fmt.Fprintf(st.Stdout, "\nWrote %s, %s, %s and %s in %s\n",
				report.MarkdownFile, report.JSONFile, report.CSVFile, report.HTMLFile, dest)
			return err
		},
	}
	cmd.Flags().StringVar(&ref, "reference", "", "show the text reference run in this directory (its reference.json) beside the speech models")
	cmd.Flags().StringVar(&out, "out", "", "write the report files into this directory instead of RUN_DIR (item links then point nowhere)")
	cmd.Flags().BoolVar(&compare, "compare", false, "show the scored runs given (two or more) side by side on one page in --out")
	cmd.Flags().Var(&budget, "recordings-budget", "the most bytes the viewer's stereo recordings may take, e.g. 500MB or 20GiB (default 2GiB)")
	return cmd
}

// byteSize is a flag's size in bytes: a number with an optional unit, KB, MB, GB, TB
// (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024).
type byteSize int64

func (b *byteSize) String() string {
	if *b == 0 {
		return ""
	}
	return strconv.FormatInt(int64(*b), 10)
}

func (b *byteSize) Type() string { return "size" }

func (b *byteSize) Set(s string) error {
	num := strings.TrimRight(strings.TrimSpace(s), "KMGTBiB kmgtib")
	unit := strings.ToUpper(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), num)))
	mult, ok := map[string]float64{"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
		"KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || v <= 0 || v*mult >= math.MaxInt64 {
		return fmt.Errorf("%q is not a size: write a positive number of bytes, or one with a unit such as 500MB or 20GiB", s)
	}
	*b = byteSize(v * mult)
	return nil
}
