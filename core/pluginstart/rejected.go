package pluginstart

import (
	"errors"
	"fmt"
	"regexp"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
)

// rejectedConfig is the diagnostic of a Configure the plugin refused with
// InvalidArgument, the SDKs' answer when a plugin's configure rejects a value (Go: an
// error without a status of its own; Python: InvalidArgument, ValueError, TypeError or
// KeyError). It carries the plugin's own message and points at the config block, or at
// the one attribute of it the message names. The same config is refused again on every
// try, so it is a fault of the run file. It is nil for any other failure (the process
// died, a download failed with another status), which a retry may mend.
func rejectedConfig(b *config.PluginBlock, err error) *hcl.Diagnostic {
	var ce *pluginhost.CallError
	if !errors.As(err, &ce) || ce.Exited {
		return nil
	}
	st, ok := status.FromError(ce.Err)
	if !ok || st.Code() != codes.InvalidArgument {
		return nil
	}
	rng := b.ConfigRange
	if a := namedAttribute(b, st.Message()); a != nil {
		rng = a.Range
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Plugin rejected its config",
		Detail: fmt.Sprintf("Plugin %q refused the config it was given: %s. The schema allowed the value; the plugin's own check did not. Change it in the config block.",
			b.Name, st.Message()),
		Subject: &rng,
	}
}

// namedAttribute is the attribute of b's config block that msg names as a whole word,
// when exactly one does.
func namedAttribute(b *config.PluginBlock, msg string) *hcl.Attribute {
	if b.Config == nil {
		return nil
	}
	attrs, _ := b.Config.JustAttributes()
	names := make([]string, 0, len(attrs))
	for name := range attrs {
		names = append(names, name)
	}
	sort.Strings(names)
	var found *hcl.Attribute
	for _, name := range names {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(msg) {
			if found != nil {
				return nil
			}
			found = attrs[name]
		}
	}
	return found
}
