package pluginhost

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/sdk/conformance"
)

// Launch starts the plugin for the conformance suite (sdk/conformance, sdk/plugintest):
// a Spec is a conformance.Target, so a plugin's test runs the suite against the very
// process the harness would start.
func (s Spec) Launch(ctx context.Context, logger hclog.Logger) (conformance.Plugin, error) {
	c, err := Start(ctx, s, logger)
	if err != nil {
		return nil, err
	}
	return conformancePlugin{Client: c, pgid: c.Pid()}, nil
}

// conformancePlugin remembers the process group, which Pid forgets at Kill.
type conformancePlugin struct {
	*Client
	pgid int
}

func (p conformancePlugin) Survivors() ([]int, bool, error) {
	if p.spec.Reattach != "" {
		return nil, true, nil
	}
	pids, err := GroupMembers(p.pgid)
	return pids, false, err
}
