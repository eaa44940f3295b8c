package pluginstart

import (
	"context"
	"errors"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/duplexmpe/duplexmpe/core/config"
)

// CheckConfigs checks the config block of each plugin in blocks against the schema the
// plugin describes, before anything is built or played: a typo in a config block is then
// reported in seconds, at its line, instead of after an hour of dataset build.
//
// A plugin with an identity record (Known) in one of identityDirs is not started: the
// record's key covers the config block as written, and it holds the schema the plugin
// described, which the block is checked against again. Any other plugin is started and
// described and then killed (Check, without Configure and without asking a TTS plugin
// for its voices, which some list only once configured).
//
// The result is nil when every block fits; a *DiagnosticsError (deterministic: the run
// file or the plugin's files must change) with every problem found; or, when a plugin
// could not be started or did not answer and nothing deterministic was found, an error
// a retry may mend.
func (s *Starter) CheckConfigs(ctx context.Context, blocks []*config.PluginBlock, identityDirs []string) error {
	var diags hcl.Diagnostics
	var transient []string
	seen := map[string]bool{}
	for _, b := range blocks {
		if b == nil || seen[b.Name] {
			continue
		}
		seen[b.Name] = true
		if k := s.recalled(b, identityDirs); k != nil {
			_, cdiags := config.CheckPluginConfig(b, k.Info.Config)
			diags = append(diags, cdiags...)
			continue
		}
		r, pdiags := s.Check(ctx, b, CheckOptions{SchemaOnly: true})
		if r.Transient {
			transient = append(transient, r.Problems...)
			continue
		}
		diags = append(diags, pdiags...)
	}
	if diags.HasErrors() {
		return &DiagnosticsError{Diags: diags}
	}
	if len(transient) > 0 {
		return errors.New(strings.Join(transient, "; ") + " (checking the plugins' config blocks)")
	}
	return nil
}

// recalled is b's identity record from the first of dirs that has one, or nil.
func (s *Starter) recalled(b *config.PluginBlock, dirs []string) *Known {
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		if k, err := s.WithIdentities(dir).Recall(b); err == nil && k != nil {
			return k
		}
	}
	return nil
}
