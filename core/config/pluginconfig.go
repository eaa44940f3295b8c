package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/duplexmpe/duplexmpe/sdk/contract"
)

// configTypes maps the sdk's config field types to cty types.
var configTypes = map[string]cty.Type{
	contract.TypeString:     cty.String,
	contract.TypeNumber:     cty.Number,
	contract.TypeBool:       cty.Bool,
	contract.TypeListString: cty.List(cty.String),
	contract.TypeListNumber: cty.List(cty.Number),
	contract.TypeMapString:  cty.Map(cty.String),
	contract.TypePath:       cty.String, // the host resolves a relative one against the run file (pluginhost.Spec.ConfigDir)
}

// CheckPluginConfig checks a plugin block's config block against the schema the plugin
// described: unknown attributes (with a suggestion), wrong types, missing required
// attributes and values outside Allowed are errors at the attribute. It returns the
// config with defaults filled in, as JSON-compatible values (string, float64, bool,
// []any, map[string]any), ready for Configure.
func CheckPluginConfig(block *PluginBlock, schema []contract.ConfigField) (map[string]any, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	rng := block.ConfigRange
	bs := &hcl.BodySchema{}
	fields := map[string]contract.ConfigField{}
	for _, f := range schema {
		if _, known := configTypes[f.Type]; !known {
			diags = append(diags, errorf(rng, "Plugin describes an unsupported config type",
				"Plugin %q describes config field %q with type %q; the supported types are %s. This is a bug in the plugin.",
				block.Name, f.Name, f.Type, strings.Join(slices.Sorted(maps.Keys(configTypes)), ", ")))
			continue
		}
		fields[f.Name] = f
		bs.Attributes = append(bs.Attributes, hcl.AttributeSchema{Name: f.Name, Required: f.Required})
	}
	body := block.Config
	if body == nil {
		body = hcl.EmptyBody()
	}
	content, cdiags := body.Content(bs)
	for _, dg := range cdiags {
		// An empty or missing config block has no range of its own; point at the block.
		if dg.Subject == nil || dg.Subject.Filename == "" {
			r := rng
			dg.Subject = &r
		}
		dg.Detail = fmt.Sprintf("Plugin %q: %s", block.Name, dg.Detail)
	}
	diags = append(diags, cdiags...)

	out := map[string]any{}
	d := &decoder{ctx: block.ctx}
	for _, f := range schema {
		if _, ok := fields[f.Name]; !ok {
			continue
		}
		a := content.Attributes[f.Name]
		if a == nil {
			if f.Default != nil {
				out[f.Name] = f.Default
			}
			continue
		}
		v, ok := d.value(a, configTypes[f.Type])
		if !ok {
			continue
		}
		val := toJSON(v)
		if _, err := json.Marshal(val); err != nil {
			d.add(errorf(a.Expr.Range(), "Invalid value", "Plugin %q: %s cannot be sent to the plugin: %s.", block.Name, f.Name, err))
			continue
		}
		if s, isString := val.(string); isString && len(f.Allowed) > 0 && !contains(f.Allowed, s) {
			detail := fmt.Sprintf("Plugin %q accepts %s = one of %s; got %q.", block.Name, f.Name, quoteList(f.Allowed), s)
			if sug := suggest(s, f.Allowed); sug != "" {
				detail += fmt.Sprintf(" Did you mean %q?", sug)
			}
			d.add(errorf(a.Expr.Range(), "Value not allowed", "%s", detail))
			continue
		}
		out[f.Name] = val
	}
	return out, append(diags, d.diags...)
}

// toJSON turns a known, non-null value of a config type into what encoding/json would
// decode: numbers become float64.
func toJSON(v cty.Value) any {
	if v.IsNull() {
		return nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString()
	case ty == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return f
	case ty == cty.Bool:
		return v.True()
	case ty.IsListType():
		list := []any{}
		for _, el := range v.AsValueSlice() {
			list = append(list, toJSON(el))
		}
		return list
	case ty.IsMapType():
		m := map[string]any{}
		for k, el := range v.AsValueMap() {
			m[k] = toJSON(el)
		}
		return m
	}
	return nil
}
