package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/report"
)

func init() { register(newReportCmd) }

func newReportCmd(st *State) *cobra.Command {
	var out, ref string
	cmd := &cobra.Command{
		Use:   "report RUN_DIR [--reference DIR]",
		Short: "Render the report of a scored run again: report.md, results.json, results.csv, report.html",
		Long: `Reads RUN_DIR/` + report.SummaryFile + ` and RUN_DIR/` + report.MetaFile + ` (written by ` + "`duplexmpe score`" + `),
writes ` + report.MarkdownFile + `, ` + report.JSONFile + `, ` + report.CSVFile + ` and ` + report.HTMLFile + ` into RUN_DIR (or --out),
and prints the main table. Nothing is re-scored: to change the protocol values, score again.
The HTML works from disk with no network; with the run directory's per-item records next
to it, it links every table cell to the conversations behind it, and viewer/ gets a page
and a stereo recording (room left, model right) per conversation.
The text reference run the evaluation names (reference = reference.x, recorded when the
run was scored) is shown after the paired section; --reference DIR shows the one in
DIR/reference.json instead (written by ` + "`duplexmpe reference`" + `).`,
		Args: exactArgs(1, "one run directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := reportDirArg(st, args[0])
			s, meta, err := report.Load(dir)
			if err != nil {
				return err
			}
			if ref != "" {
				meta.ReferenceDir = reportDirArg(st, ref)
			}
			dest := dir
			if out != "" {
				dest = reportDirArg(st, out)
			}
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
	return cmd
}

// reportDirArg resolves a command-line path against the State's working directory.
func reportDirArg(st *State, path string) string {
	if filepath.IsAbs(path) || st.Getwd == nil {
		return path
	}
	if wd, err := st.Getwd(); err == nil {
		return filepath.Join(wd, path)
	}
	return path
}
