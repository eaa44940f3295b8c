package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/app"
)

func newBuildCmd(st *State) *cobra.Command {
	var vars []string
	var only string
	cmd := &cobra.Command{
		Use:   "build FILE.hcl",
		Short: "Build the run file's datasets: write or generate the scripts, synthesise every turn, save",
		Long: "Build every dataset block of a run file (or only --dataset NAME): read the scenarios\n" +
			"(or generate them procedurally or with an llm plugin), synthesise each distinct turn\n" +
			"once through the tts plugin into <out>/clips/, and write <out>/dataset.json and\n" +
			"<out>/scenarios.jsonl. Clips already built are reused, so a rebuild synthesises\n" +
			"nothing and an interrupted build resumes where it stopped.",
		Example: examples(
			"duplexmpe build bench.hcl",
			"duplexmpe build examples/runs/open-v1.hcl --dataset open_v1_test",
		),
		Args: exactArgs(1, "one run file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadRunFile(st, args[0], vars)
			if err != nil {
				return err
			}
			if len(f.Datasets) == 0 {
				return fmt.Errorf("%s has no dataset block; add dataset \"name\" { scenarios = ..., tts = plugin.x }", args[0])
			}
			s, err := newStarter(st, f)
			if err != nil {
				return err
			}
			ui := newUI(st)
			ui.Built = func(r *app.BuildResult) { printBuilt(st, r) }
			found := false
			for _, ds := range f.Datasets {
				if only != "" && ds.Name != only {
					continue
				}
				found = true
				if _, err := app.BuildDataset(st.Ctx, s, ds, ui); err != nil {
					return reported(st, f, args[0], err)
				}
			}
			if !found {
				return UsageErrorf("--dataset %q: %s has no such dataset block", only, args[0])
			}
			return nil
		},
	}
	addVarFlag(cmd, &vars)
	cmd.Flags().StringVar(&only, "dataset", "", "build only this dataset block")
	return cmd
}

func printBuilt(st *State, r *app.BuildResult) {
	for _, note := range r.Report.Rebuilt {
		fmt.Fprintf(st.Stderr, "dataset %s: %s\n", r.Block.Name, note)
	}
	c := r.Dataset.Manifest.Counts
	damaged := ""
	if n := len(r.Report.Rebuilt); n > 0 {
		damaged = fmt.Sprintf(", %d of them damaged", n)
	}
	started := ""
	if !r.Started {
		started = "; tts plugin not started"
	}
	simulated := ""
	if n := r.Report.Simulated; n > 0 {
		simulated = fmt.Sprintf(", %d simulated in the room", n)
	}
	fmt.Fprintf(st.Stdout, "dataset %s: %d scenarios (%d pairs), %d clips (%d synthesised%s%s, %d reused)%s -> %s\n",
		r.Block.Name, c.Scenarios, c.Pairs, r.Report.Clips, r.Report.Synthesised, simulated, damaged, r.Report.Reused, started, r.Block.Out)
}
