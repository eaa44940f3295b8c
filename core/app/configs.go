package app

import (
	"context"
	"path/filepath"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
)

// CheckEvaluationConfigs checks the config block of every plugin evaluation ev uses (its
// dataset's TTS and generating LLM, its models, ASR and judge) against the schema the
// plugin describes (pluginstart.CheckConfigs), before `run` builds or plays anything. A
// plugin recorded in the run's or the dataset's identity directory is not started.
func CheckEvaluationConfigs(ctx context.Context, s *pluginstart.Starter, ev *config.Evaluation) error {
	f := s.File
	var names []string
	dirs := []string{filepath.Join(ev.Out, IdentitiesDir)}
	if ds := f.Dataset(ev.Dataset); ds != nil {
		names = append(names, ds.TTS)
		if ds.Generate != nil && ds.Generate.LLM != "" {
			names = append(names, ds.Generate.LLM)
		}
		dirs = append(dirs, filepath.Join(ds.Out, IdentitiesDir))
	}
	names = append(names, ev.Models...)
	names = append(names, ev.ASR, ev.Judge)
	var blocks []*config.PluginBlock
	for _, n := range names {
		if b := f.Plugin(n); b != nil { // an undeclared name is the run file's check
			blocks = append(blocks, b)
		}
	}
	return s.CheckConfigs(ctx, blocks, dirs)
}

// CheckFileConfigs checks the config block of every plugin of the run file against the
// schema the plugin describes: what `validate` does. Plugins recorded in the identity
// directory of one of the file's evaluations or datasets are not started.
func CheckFileConfigs(ctx context.Context, s *pluginstart.Starter) error {
	f := s.File
	var dirs []string
	for _, ev := range f.Evaluations {
		dirs = append(dirs, filepath.Join(ev.Out, IdentitiesDir))
	}
	for _, ds := range f.Datasets {
		dirs = append(dirs, filepath.Join(ds.Out, IdentitiesDir))
	}
	return s.CheckConfigs(ctx, f.Plugins, dirs)
}
