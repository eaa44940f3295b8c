package pluginstart

import (
	"context"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/conformance"
)

// Conformance is how the conformance suite (sdk/conformance) starts and configures the
// plugin block b: the lock file check first, as for Start, then the start with its log
// file; Configure gets the block's config, checked against the schema the plugin
// describes and against the version the lock file pins.
func (s *Starter) Conformance(b *config.PluginBlock) (conformance.Target, func(sdk.Info) (map[string]any, error)) {
	configFor := func(info sdk.Info) (map[string]any, error) {
		if err := s.Pins.CheckVersion(b, info.Version); err != nil {
			return nil, err
		}
		cfg, diags := config.CheckPluginConfig(b, info.Config)
		if diags.HasErrors() {
			return nil, &DiagnosticsError{Diags: diags}
		}
		return cfg, nil
	}
	return target{s, b}, configFor
}

type target struct {
	s *Starter
	b *config.PluginBlock
}

func (t target) Launch(ctx context.Context, logger hclog.Logger) (conformance.Plugin, error) {
	hash, err := Hash(HostSpec(t.b))
	if err != nil {
		return nil, err
	}
	if err := t.s.Pins.CheckFiles(t.b, hash); err != nil {
		return nil, err
	}
	spec := HostSpec(t.b)
	if t.s.Opts.LogDir != "" {
		spec.LogFile = filepath.Join(t.s.Opts.LogDir, t.b.Name+".log")
	}
	return spec.Launch(ctx, logger)
}
