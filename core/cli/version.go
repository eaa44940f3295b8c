package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/provenance"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// Version is the harness version; release builds set it with -ldflags.
var Version = "0.1.0-dev"

// ReadBuildInfo reports the harness version and the git commit it was built from: the
// harness record of run manifests.
func ReadBuildInfo() provenance.Harness {
	bi := provenance.Harness{Version: Version, ProtocolVersion: sdk.ProtocolVersion}
	if info, ok := debug.ReadBuildInfo(); ok {
		bi.GoVersion = info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				bi.Commit = s.Value
			case "vcs.modified":
				bi.Modified = s.Value == "true"
			}
		}
	}
	return bi
}

func newVersionCmd(st *State) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the harness version, its git commit and the plugin protocol version",
		Example: examples(
			"duplexmpe version --json",
		),
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi := ReadBuildInfo()
			if asJSON {
				return writeJSON(st.Stdout, bi)
			}
			commit := bi.Commit
			if commit == "" {
				commit = "unknown"
			} else if bi.Modified {
				commit += " (modified)"
			}
			fmt.Fprintf(st.Stdout, "duplexmpe %s\ncommit: %s\nplugin protocol: %d\n%s\n", bi.Version, commit, bi.ProtocolVersion, bi.GoVersion)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
