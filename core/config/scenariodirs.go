package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// scenarioDirs checks each dataset's scenarios directory. One that does not exist is
// an error for a command about to start the plugins (validate, run: Options.
// PluginsMustExist), a warning for the others, unless it lies in the out folder of
// another dataset of the file, which build writes: nothing else makes a scenarios
// directory, so the run would fail the same way after starting (issue 30: `run` exited
// 1, "retry"). A path that is a file is an error.
func (l *loader) scenarioDirs() {
	for _, ds := range l.f.Datasets {
		rng, ok := ds.AttrRanges["scenarios"]
		if ds.Scenarios == "" || !ok {
			continue
		}
		info, err := os.Stat(ds.Scenarios)
		switch {
		case err == nil && !info.IsDir():
			l.d.add(errorf(rng, "Not a directory", "%s is a file; scenarios must be a directory.", ds.Scenarios))
			continue
		case err == nil || !errors.Is(err, fs.ErrNotExist):
			continue
		}
		if l.builtBy(ds) {
			continue
		}
		sev := hcl.DiagWarning
		if l.opts.PluginsMustExist {
			sev = hcl.DiagError
		}
		l.d.add(&hcl.Diagnostic{Severity: sev, Summary: "Missing scenario directory",
			Detail:  fmt.Sprintf("Dataset %q: its scenarios directory %s does not exist, and no dataset of this file builds it. Fix the path (a release split is datasets/open-v1/dev or datasets/open-v1/test).", ds.Name, ds.Scenarios),
			Subject: &rng})
	}
}

// builtBy says whether ds's scenarios directory lies in the out folder of another
// dataset of the file.
func (l *loader) builtBy(ds *Dataset) bool {
	for _, other := range l.f.Datasets {
		if other == ds || other.Out == "" {
			continue
		}
		rel, err := filepath.Rel(other.Out, ds.Scenarios)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
