package cli

import "github.com/spf13/cobra"

// commands is every top-level command of duplexmpe, grouped by what a person does with
// it. A new command is one constructor in its own file and one line here; --help lists
// them in alphabetical order (cobra sorts). Command groups (dataset, plugins test) add
// their subcommands in their own constructor.
func commands(st *State) []*cobra.Command {
	return []*cobra.Command{
		// Check a run file and its plugins before running anything.
		newValidateCmd(st),
		newPluginsCmd(st),
		newLockCmd(st),
		newPlanCmd(st),

		// Run an evaluation, then score, report and compare it.
		newRunCmd(st),
		newScoreCmd(st),
		newReportCmd(st),
		newExplainCmd(st),
		newCompareCmd(st),
		newRunsCmd(st),
		newPruneCmd(st),
		newMergeCmd(st),

		// Build and inspect datasets, audio and the text reference.
		newBuildCmd(st),
		newDatasetCmd(st),
		newSampleCmd(st),
		newAgreementCmd(st),
		newReferenceCmd(st),
		newVADCmd(st),

		newVersionCmd(st),
	}
}
