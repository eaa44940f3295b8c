package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/core/app"
	"github.com/duplexmpe/duplexmpe/core/fault"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/core/termsafe"
)

func newPluginsCmd(st *State) *cobra.Command {
	var vars []string
	var asJSON, configure bool
	cmd := &cobra.Command{
		Use:   "plugins FILE.hcl [--configure]",
		Short: "Start every plugin of a run file, show what it describes, and check it",
		Long: "Start every plugin of a run file, one at a time, and print what it describes: name, " +
			"version, kinds, protocol version, config schema and identity. Check the version and " +
			"checksum pins, the run file's lock file (FILE.lock.hcl next to it, written by `duplexmpe lock`) when there " +
			"is one, that the plugin serves the roles the run file gives it, and its config block " +
			"against its schema. With --configure, also configure each plugin with its config block, as a " +
			"run does (a model loads its weights), and print the identity it then reports; a value the " +
			"plugin rejects is an error at the run file's line, in the plugin's words.\n\n" +
			"Exit 3 when every failure is one of the run file or the plugin's files (a pin, the config, " +
			"a role, a voice), so checking again unchanged fails the same way; exit 1 when a plugin did " +
			"not start or answer. The messages name the plugin.",
		Example: examples(
			"duplexmpe plugins my-run.hcl",
			"duplexmpe plugins my-run.hcl --configure --json",
		),
		Args: exactArgs(1, "one run file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadRunFile(st, args[0], vars)
			if err != nil {
				return err
			}
			reports, diags := pluginstart.CheckAll(st.Ctx, f, pluginstart.Options{Logger: pluginLogger(st)}, pluginstart.CheckOptions{Configure: configure})
			writeDiagnostics(st, f.Sources, diags, f.Path, args[0])
			if asJSON {
				if err := writeJSON(st.Stdout, reports); err != nil {
					return err
				}
			} else {
				for _, r := range reports {
					writePluginReport(termsafe.Writer{W: st.Stdout}, r) // what a plugin describes is data
				}
			}
			var bad []string
			transient := false
			for _, r := range reports {
				if r.Failed {
					bad = append(bad, r.Name)
					transient = transient || r.Transient
				}
			}
			if len(bad) > 0 {
				fmt.Fprintf(st.Stderr, "%s failed: %s\n", plural(len(bad), "plugin"), strings.Join(bad, ", "))
			}
			switch {
			case transient:
				return ErrReported
			case len(bad) > 0 || diags.HasErrors():
				return fault.Deterministic(ErrReported)
			}
			if !asJSON {
				fmt.Fprintf(st.Stdout, "%s: all checks passed\n", plural(len(reports), "plugin"))
			}
			return nil
		},
	}
	addVarFlag(cmd, &vars)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the reports as JSON")
	cmd.Flags().BoolVar(&configure, "configure", false, "also configure each plugin with its config block and print the identity it reports")
	cmd.AddCommand(newPluginsTestCmd(st))
	return cmd
}

func newPluginsTestCmd(st *State) *cobra.Command {
	var vars []string
	var only string
	cmd := &cobra.Command{
		Use:   "test FILE.hcl [--plugin NAME]",
		Short: "Run the conformance suite against every plugin of a run file (Go, Python, any language)",
		Long: "Run the conformance suite every plugin passes (sdk/conformance, the one sdk/plugintest runs " +
			"from `go test`) against each plugin of a run file, or only --plugin NAME, started as a run " +
			"starts it (lock file, pins) and configured with its config block: the handshake, Describe " +
			"and its config schema, health, Configure, every kind it declares (for a model also the " +
			"refusals of bad frames, through the raw protocol), and that Kill leaves no process of its " +
			"group behind. Exit 1 when any check fails; each failed check is named.",
		Example: examples(
			"duplexmpe plugins test my-run.hcl",
			"duplexmpe plugins test my-run.hcl --plugin my_model",
		),
		Args: exactArgs(1, "one run file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadRunFile(st, args[0], vars)
			if err != nil {
				return err
			}
			s, err := newStarter(st, f)
			if err != nil {
				return err
			}
			tests, err := app.TestPlugins(s, only, newUI(st))
			if err != nil {
				return err
			}
			var failed []string
			for _, pt := range tests {
				if len(pt.Failures) == 0 {
					fmt.Fprintf(st.Stdout, "plugin %q: ok (%s passed)\n", pt.Name, plural(len(pt.Results), "check"))
					continue
				}
				fmt.Fprintf(st.Stdout, "plugin %q: FAILED (%d of %s)\n", pt.Name, len(pt.Failures), plural(len(pt.Results), "check"))
				for _, r := range pt.Failures {
					failed = append(failed, pt.Name+": "+r.Name)
					fmt.Fprintf(st.Stdout, "  %s\n", r.Name)
					for _, m := range r.Messages {
						fmt.Fprintf(st.Stdout, "    %s\n", strings.ReplaceAll(strings.TrimRight(m, "\n"), "\n", "\n    "))
					}
				}
			}
			if len(failed) > 0 {
				fmt.Fprintf(st.Stderr, "%s failed: %s\n", plural(len(failed), "check"), strings.Join(failed, ", "))
				return ErrReported
			}
			return nil
		},
	}
	addVarFlag(cmd, &vars)
	cmd.Flags().StringVar(&only, "plugin", "", "test only this plugin block")
	return cmd
}

// writePluginReport prints what `plugins` found about one plugin.
func writePluginReport(w io.Writer, r *pluginstart.Report) {
	status := "ok"
	if r.Failed {
		status = "FAILED"
	}
	what := r.Source
	if what == "" {
		what = strings.Join(r.Command, " ")
		if r.Dir != "" {
			what += " (in " + r.Dir + ")"
		}
	}
	fmt.Fprintf(w, "plugin %q: %s\n  runs: %s\n", r.Name, status, what)
	if r.Hash != "" {
		fmt.Fprintf(w, "  hash: %s\n", r.Hash)
	}
	if r.Info != nil {
		i := r.Info
		fmt.Fprintf(w, "  describes: %s %s, protocol %d, kinds %s\n", i.Name, i.Version, i.ProtocolVersion, orNone(i.Kinds))
		if i.Description != "" {
			fmt.Fprintf(w, "  %s\n", i.Description)
		}
		if len(i.Capabilities) > 0 {
			fmt.Fprintf(w, "  capabilities: %s\n", strings.Join(i.Capabilities, ", "))
		}
		if len(i.Identity) > 0 {
			writeIdentity(w, "  identity:", i.Identity)
		}
		if len(i.Config) == 0 {
			fmt.Fprintf(w, "  config schema: none\n")
		} else {
			fmt.Fprintf(w, "  config schema:\n")
			for _, f := range i.Config {
				line := fmt.Sprintf("    %s (%s", f.Name, f.Type)
				if f.Required {
					line += ", required"
				}
				if f.Default != nil {
					b, _ := json.Marshal(f.Default)
					line += ", default " + string(b)
				}
				if len(f.Allowed) > 0 {
					line += ", one of " + strings.Join(f.Allowed, " | ")
				}
				if f.Transport {
					line += ", transport: not in item keys"
				}
				line += ")"
				if f.Description != "" {
					line += ": " + f.Description
				}
				fmt.Fprintln(w, line)
			}
		}
	}
	fmt.Fprintf(w, "  used as: %s\n", orNone(r.Uses))
	if r.Voices != nil {
		fmt.Fprintf(w, "  voices: %s\n", orNone(r.Voices))
	}
	if r.Config != nil {
		b, _ := json.Marshal(r.Config)
		fmt.Fprintf(w, "  config: %s\n", b)
	}
	if r.Configured {
		fmt.Fprintf(w, "  configured: ok\n")
		writeIdentity(w, "  identity after configure:", r.Identity)
	}
	if len(r.Problems) > 0 {
		fmt.Fprintf(w, "  problems: %d (see the errors)\n", len(r.Problems))
	}
}

// writeIdentity prints an identity under heading, one key a line, sorted.
func writeIdentity(w io.Writer, heading string, id map[string]string) {
	keys := make([]string, 0, len(id))
	for k := range id {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		fmt.Fprintf(w, "%s none\n", heading)
		return
	}
	fmt.Fprintln(w, heading)
	for _, k := range keys {
		fmt.Fprintf(w, "    %s = %s\n", k, id[k])
	}
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}
