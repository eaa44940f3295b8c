package app

import (
	"strings"

	"github.com/duplexmpe/duplexmpe/core/pluginstart"
	"github.com/duplexmpe/duplexmpe/sdk/conformance"
)

// PluginTest is the conformance suite's verdict on one plugin block.
type PluginTest struct {
	Name    string
	Results []conformance.Result
	// Failures are the checks that failed on their own account.
	Failures []conformance.Result
}

// TestPlugins runs the conformance suite (sdk/conformance) against every plugin block of
// the run file, or only the one named only, each started the checked way and configured
// with its config block. A plugin that fails is reported, not an error: the suite goes
// on with the next one.
func TestPlugins(s *pluginstart.Starter, only string, ui UI) ([]PluginTest, error) {
	f := s.File
	if only != "" && f.Plugin(only) == nil {
		var names []string
		for _, p := range f.Plugins {
			names = append(names, p.Name)
		}
		return nil, usageErrorf("--plugin %q: %s declares no such plugin block (it declares %s)", only, f.Path, strings.Join(names, ", "))
	}
	var out []PluginTest
	for _, b := range f.Plugins {
		if only != "" && b.Name != only {
			continue
		}
		target, configFor := s.Conformance(b)
		results := conformance.Check(target, conformance.Options{ConfigFor: configFor, Logger: ui.Logger})
		out = append(out, PluginTest{Name: b.Name, Results: results, Failures: conformance.Failures(results)})
	}
	return out, nil
}
