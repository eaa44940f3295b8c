package config

import (
	"encoding/json"
	"fmt"

	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// RawPluginConfig is a plugin block's config block as written, each attribute
// evaluated and encoded as JSON, before any schema fills in defaults or checks types.
// Together with the plugin's hash it determines the checked config, so it keys what a
// plugin reported after an earlier Configure (core/pluginstart's identity records).
func RawPluginConfig(b *PluginBlock) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	if b.Config == nil {
		return out, nil
	}
	attrs, diags := b.Config.JustAttributes()
	if diags.HasErrors() {
		return nil, fmt.Errorf("plugin %q: config: %s", b.Name, diags.Error())
	}
	for name, a := range attrs {
		v, diags := a.Expr.Value(b.ctx)
		if diags.HasErrors() {
			return nil, fmt.Errorf("plugin %q: config %s: %s", b.Name, name, diags.Error())
		}
		raw, err := ctyjson.Marshal(v, v.Type())
		if err != nil {
			return nil, fmt.Errorf("plugin %q: config %s: %w", b.Name, name, err)
		}
		out[name] = raw
	}
	return out, nil
}
