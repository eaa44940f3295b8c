package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/fault"
)

func init() { register(newDatasetCmd) }

func newDatasetCmd(st *State) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dataset",
		Short: "Validate, summarise and generate Duplex-MPE scenario sets",
		Long: "A dataset is a directory with dataset.json and scenarios.jsonl (and clips/ once\n" +
			"synthesised), or a bare scenarios .jsonl file. See docs/dataset.md.",
	}
	cmd.AddCommand(newDatasetValidateCmd(st), newDatasetStatsCmd(st), newDatasetGenerateCmd(st))
	return cmd
}

func newDatasetValidateCmd(st *State) *cobra.Command {
	var asJSON, strict bool
	cmd := &cobra.Command{
		Use:   "validate PATH",
		Short: "Check every rule of the scenario spec, the pair rules and the clips; exit 1 on any violation",
		Long: "Check every rule of the scenario spec, the pair rules and the clips; exit 1 on any violation.\n" +
			"Differences between the versions of a pair that the protocol allows (turn count, label\n" +
			"sequence, turns besides T and the one before it, T's position bucket: docs/protocol.md\n" +
			"section 2.3) are reported as warnings; --strict makes them violations.",
		Args: exactArgs(1, "a dataset directory or a scenarios .jsonl file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, vs, err := dataset.ValidatePath(resolvePath(st, args[0]))
			if err != nil {
				return err
			}
			ws := dataset.Warnings(d)
			if strict {
				for i := range ws {
					ws[i].Warning = false
				}
				vs = append(vs, ws...)
				ws = nil
			}
			if asJSON {
				enc := json.NewEncoder(st.Stdout)
				enc.SetIndent("", "  ")
				all := append(append([]dataset.Violation{}, vs...), ws...)
				if err := enc.Encode(all); err != nil {
					return err
				}
			} else {
				for _, v := range append(append([]dataset.Violation{}, vs...), ws...) {
					fmt.Fprintln(st.Stderr, v.String())
				}
			}
			if len(vs) > 0 {
				fmt.Fprintf(st.Stderr, "%s: %d violations in %d scenarios\n", args[0], len(vs), len(d.Scenarios))
				return fault.Deterministic(ErrReported)
			}
			if !asJSON {
				c := dataset.CountOf(d.Scenarios)
				clips := fmt.Sprintf("%d turn clips", c.Clips)
				if d.PreamblePath() != "" {
					clips += " and a preamble"
				}
				warned := ""
				if len(ws) > 0 {
					warned = fmt.Sprintf("; %d warnings", len(ws))
				}
				fmt.Fprintf(st.Stdout, "%s: valid (%d scenarios, %d pairs, %d turns, %s)%s\n", args[0], c.Scenarios, c.Pairs, c.Turns, clips, warned)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the violations (and warnings, marked) as JSON on stdout")
	cmd.Flags().BoolVar(&strict, "strict", false, "treat the pair differences the protocol allows as violations")
	return cmd
}

func newDatasetStatsCmd(st *State) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats PATH",
		Short: "Print counts by condition, speakers, labels, T position, N2 addressee, N4 events, durations",
		Args:  exactArgs(1, "a dataset directory or a scenarios .jsonl file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := dataset.Load(resolvePath(st, args[0]))
			if err != nil {
				return err
			}
			s := dataset.ComputeStats(d)
			if asJSON {
				enc := json.NewEncoder(st.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			s.Print(st.Stdout)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newDatasetGenerateCmd(st *State) *cobra.Command {
	var spec construct.GenerateSpec
	var out string
	cmd := &cobra.Command{
		Use:   "generate --out FILE",
		Short: "Write procedurally generated scenario pairs (no network, deterministic for a seed) to a .jsonl file",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return UsageErrorf("--out FILE is required")
			}
			if spec.Pairs < 1 {
				return UsageErrorf("--pairs must be at least 1 (got %d)", spec.Pairs)
			}
			scs, err := construct.Generate(spec)
			if err != nil {
				return err
			}
			raw, err := dataset.MarshalScenarios(scs)
			if err != nil {
				return err
			}
			if err := atomicfile.WriteFile(resolvePath(st, out), raw); err != nil {
				return err
			}
			fmt.Fprintf(st.Stdout, "%s: %d pairs (%d scenarios), seed %d\n", out, spec.Pairs, len(scs), spec.Seed)
			return nil
		},
	}
	cmd.Flags().IntVar(&spec.Pairs, "pairs", 12, "number of explicit/implicit pairs")
	cmd.Flags().Int64Var(&spec.Seed, "seed", 1, "random seed")
	cmd.Flags().Float64Var(&spec.FourSpeakerShare, "four-speaker-share", 0.25, "fraction of pairs with four speakers")
	cmd.Flags().StringVar(&out, "out", "", "the scenarios .jsonl file to write")
	return cmd
}

// resolvePath makes a command-line path absolute against the State's working
// directory, so commands never depend on the process's own.
func resolvePath(st *State, p string) string {
	if filepath.IsAbs(p) || st.Getwd == nil {
		return p
	}
	wd, err := st.Getwd()
	if err != nil {
		return p
	}
	return filepath.Join(wd, p)
}

// displayPath shows a path relative to the State's working directory when it lies
// below it, else as it is.
func displayPath(st *State, p string) string {
	if st.Getwd == nil {
		return p
	}
	wd, err := st.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}
