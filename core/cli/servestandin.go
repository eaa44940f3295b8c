package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/duplexmpe/duplexmpe/plugins/standin"
)

func init() { register(newServeStandinCmd) }

func newServeStandinCmd(st *State) *cobra.Command {
	var addr, key string
	cmd := &cobra.Command{
		Use:   "serve-standin openai|anthropic",
		Short: "Start a local stand-in of a hosted API, to try the openai or anthropic plugin offline",
		Long: "Serve a local stand-in of the OpenAI-compatible API (chat completions, transcriptions,\n" +
			"speech) or of the Anthropic Messages API, the one the plugins' tests run against. Set\n" +
			"the plugin block's base_url to the address it prints. Its judge verdicts are\n" +
			"deterministic (an answer is correct when it contains the gold answer; a few\n" +
			"backchannels are acknowledgements), so it checks the wiring, not a model. It runs\n" +
			"until interrupted (Ctrl-C).",
		Args: exactArgs(1, "the API to stand in for: "+strings.Join(standin.Kinds, " or ")),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(standin.Kinds, args[0]) {
				return UsageErrorf("serve-standin: no stand-in %q; choose %s", args[0], strings.Join(standin.Kinds, " or "))
			}
			return standin.Serve(st.Ctx, standin.Options{Kind: args[0], Addr: addr, Key: key}, st.Stdout)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8089", "address to listen on (port 0: any free port)")
	cmd.Flags().StringVar(&key, "key", "", "the API key the stand-in wants (default: any)")
	return cmd
}
