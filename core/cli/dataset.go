package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/construct"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/review"
)

func newDatasetCmd(st *State) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dataset",
		Short: "Validate, summarise and generate Duplex-MPE scenario sets",
		Long: "A dataset is a directory with dataset.json and scenarios.jsonl (and clips/ once\n" +
			"synthesised), or a bare scenarios .jsonl file. See docs/dataset.md.",
	}
	cmd.AddCommand(newDatasetValidateCmd(st), newDatasetStatsCmd(st), newDatasetGenerateCmd(st),
		newDatasetCompileCmd(st), newDatasetLintCmd(st), newDatasetVerifyCmd(st), newDatasetReviewCmd(st),
		newDatasetAuditCmd(st))
	return cmd
}

func newDatasetValidateCmd(st *State) *cobra.Command {
	var asJSON, strict bool
	cmd := &cobra.Command{
		Use:   "validate PATH",
		Short: "Check every rule of the scenario spec, the pair rules and the clips; exit 3 on any violation",
		Long: "Check every rule of the scenario spec, the pair rules and the clips; exit 3 on any violation.\n" +
			"The versions of a pair may differ only in T, the turn before T and N4 events\n" +
			"(docs/protocol.md section 2.3); anything else is a violation. Two allowed differences\n" +
			"are reported as warnings, N4 events that differ and T in another position bucket;\n" +
			"--strict makes them violations.",
		Example: examples(
			"duplexmpe dataset validate datasets/open-v1/dev",
			"duplexmpe dataset validate build/datasets/shipped --strict --json",
		),
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
				all := append(append([]dataset.Violation{}, vs...), ws...)
				if err := writeJSON(st.Stdout, all); err != nil {
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
		Short: "Print the release and its hash, counts by condition, speakers, labels, T position, N2 addressee, N4 events, cues, gaps, attributes, durations",
		Example: examples(
			"duplexmpe dataset stats datasets/open-v1",
		),
		Args: exactArgs(1, "a dataset directory, a scenarios .jsonl file or a release directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := dataset.StatsOf(resolvePath(st, args[0]))
			if err != nil {
				return err
			}
			return printOrJSON(st.Stdout, asJSON, s, s.Print)
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
		Short: "Write procedurally generated scenario pairs (a format stress generator, not benchmark content) to a .jsonl file",
		Long: "Write procedurally generated scenario pairs to a .jsonl file: no network, deterministic for a seed.\n" +
			"It is a format and scale stress generator, NOT benchmark content: its turns come from\n" +
			"templates (at 2,000 pairs most explicit turns repeat word for word in another scenario),\n" +
			"and its implicit requests are not validated as inferable. Evaluate on the Duplex-MPE\n" +
			"release in datasets/open-v1 (docs/datasheet.md); use this to test plugins and scale.",
		Args: exactArgs(0, "no arguments"),
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

func newDatasetCompileCmd(st *State) *cobra.Command {
	var check bool
	cmd := &cobra.Command{
		Use:   "compile RELEASE.json",
		Short: "Compile a release's authoring files (pairs stated once) into its dev and test splits and MANIFEST.json",
		Long: "Compile a release's authoring files (one JSON line a pair, both versions of T side by side)\n" +
			"into the standard scenarios.jsonl of each split and the release manifest (docs/datasheet.md).\n" +
			"Every scenario and pair rule is checked first; nothing is written on an error (exit 3).\n" +
			"--check writes nothing and exits 3 when the files on disk differ from what would be written.",
		Example: "  duplexmpe dataset compile datasets/open-v1/authoring/release.json\n" +
			"  duplexmpe dataset compile --check datasets/open-v1/authoring/release.json",
		Args: exactArgs(1, "a release spec (release.json)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := construct.ReadReleaseSpec(resolvePath(st, args[0]))
			if err != nil {
				return fault.Deterministic(err)
			}
			rf, err := construct.CompileRelease(spec)
			if err != nil {
				return fault.Deterministic(err)
			}
			if check {
				stale := construct.StaleReleaseFiles(spec.Out, rf)
				for _, f := range stale {
					fmt.Fprintf(st.Stderr, "%s: differs from what %s compiles to\n", displayPath(st, filepath.Join(spec.Out, f)), args[0])
				}
				if len(stale) > 0 {
					fmt.Fprintf(st.Stderr, "run 'duplexmpe dataset compile %s' and commit the result\n", args[0])
					return fault.Deterministic(ErrReported)
				}
			} else if err := construct.WriteRelease(spec.Out, rf); err != nil {
				return err
			}
			r := rf.Release
			fmt.Fprintf(st.Stdout, "%s %s (%s): ", r.Name, r.Version, r.SHA256)
			for i, sp := range r.Splits {
				if i > 0 {
					fmt.Fprint(st.Stdout, ", ")
				}
				fmt.Fprintf(st.Stdout, "%s %d pairs", sp.Name, sp.Pairs)
			}
			fmt.Fprintln(st.Stdout)
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "write nothing; exit 3 if the compiled files on disk are not up to date")
	return cmd
}

func newDatasetLintCmd(st *State) *cobra.Command {
	var gridFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "lint PATH",
		Short: "Measure a scenario set against a benchmark's construction rules; exit 3 if one misses its goal",
		Long: "Measure a scenario set against the construction rules of a benchmark release (docs/datasheet.md):\n" +
			"the scenario and pair rules, verbatim repetition of turns across pairs, distinct T requests,\n" +
			"attribute and T-position balance, speakers, N4 events, labels in every scenario, context facts,\n" +
			"Aria's name in implicit turns. PATH is a set or a release directory (every split together).",
		Example: "  duplexmpe dataset lint --grid datasets/open-v1/authoring/grid.json datasets/open-v1",
		Args:    exactArgs(1, "a dataset directory, a scenarios .jsonl file or a release directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var grid *dataset.Grid
			if gridFile != "" {
				g, err := dataset.LoadGrid(resolvePath(st, gridFile))
				if err != nil {
					return fault.Deterministic(err)
				}
				grid = g
			}
			d, err := dataset.LoadAny(resolvePath(st, args[0]))
			if err != nil {
				return fault.Deterministic(err)
			}
			rep := dataset.Lint(d, grid)
			if err := printOrJSON(st.Stdout, asJSON, rep, rep.Print); err != nil {
				return err
			}
			if n := rep.Failed(); n > 0 {
				fmt.Fprintf(st.Stderr, "%s: %d checks miss their goal\n", args[0], n)
				return fault.Deterministic(ErrReported)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&gridFile, "grid", "", "the declared attribute grid (JSON); without it the attributes are only counted")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the checks as JSON")
	return cmd
}

func newDatasetVerifyCmd(st *State) *cobra.Command {
	var manifest string
	cmd := &cobra.Command{
		Use:   "verify DATASET_DIR --manifest MANIFEST.json",
		Short: "Check a built copy of a release split against the release manifest and its clips; exit 3 on a difference",
		Long: "Check a built dataset against a release manifest: every scenario's script must hash as the\n" +
			"manifest records it, none missing, none extra; and every rule of 'dataset validate', the\n" +
			"clips' SHA-256 (clips.sha256) included.",
		Example: "  duplexmpe dataset verify build/datasets/open-v1-dev --manifest datasets/open-v1/MANIFEST.json",
		Args:    exactArgs(1, "a built dataset directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if manifest == "" {
				return UsageErrorf("--manifest MANIFEST.json is required")
			}
			r, err := dataset.LoadRelease(resolvePath(st, manifest))
			if err != nil {
				return fault.Deterministic(err)
			}
			d, vs, err := dataset.ValidatePath(resolvePath(st, args[0]))
			if err != nil {
				return fault.Deterministic(err)
			}
			split, problems := dataset.VerifyRelease(d, r)
			for _, v := range vs {
				problems = append(problems, v.String())
			}
			for _, p := range problems {
				fmt.Fprintln(st.Stderr, p)
			}
			if len(problems) > 0 {
				fmt.Fprintf(st.Stderr, "%s: %d differences from %s %s\n", args[0], len(problems), r.Name, r.Version)
				return fault.Deterministic(ErrReported)
			}
			fmt.Fprintf(st.Stdout, "%s: %s (%d scenarios, every script as released, every clip as built)\n", args[0], dataset.ReleaseLabel(r, split), len(d.Scenarios))
			return nil
		},
	}
	cmd.Flags().StringVar(&manifest, "manifest", "", "the release manifest (MANIFEST.json, or its directory)")
	return cmd
}

func newDatasetReviewCmd(st *State) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "review RELEASE_DIR VALIDATION_DIR",
		Short: "Score a release's blind validation: label agreement and Cohen's kappa, implicit inferability, gold derivable",
		Long: "Score the blind reviews of a release sample (docs/datasheet.md, Validation): VALIDATION_DIR holds\n" +
			"key-R.tsv (item -> scenario id) and review-R.jsonl for each reviewer R, and adjudication.tsv.\n" +
			"Prints per-label agreement, Cohen's kappa, the implicit requests the reviewers attributed to\n" +
			"Aria, the gold answers they derived, and every disagreement.",
		Example: "  duplexmpe dataset review datasets/open-v1 datasets/open-v1/validation",
		Args:    exactArgs(2, "a release directory and its validation directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := dataset.LoadAny(resolvePath(st, args[0]))
			if err != nil {
				return fault.Deterministic(err)
			}
			v, err := review.ReadValidation(resolvePath(st, args[1]))
			if err != nil {
				return fault.Deterministic(err)
			}
			fig, err := v.Figures(d.Scenarios)
			if err != nil {
				return fault.Deterministic(err)
			}
			return printOrJSON(st.Stdout, asJSON, fig, fig.Print)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the figures as JSON")
	return cmd
}
