package config

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/duplexmpe/duplexmpe/sdk"
)

var testSchema = []sdk.ConfigField{
	{Name: "voice_default", Type: sdk.TypeString, Default: "kal16", Allowed: []string{"kal16", "awb", "rms", "slt"}},
	{Name: "rate", Type: sdk.TypeNumber, Default: 16000.0},
	{Name: "verbose", Type: sdk.TypeBool},
	{Name: "model_path", Type: sdk.TypeString, Required: true},
	{Name: "stops", Type: sdk.TypeListString},
	{Name: "weights", Type: sdk.TypeListNumber},
	{Name: "headers", Type: sdk.TypeMapString},
}

func pluginWithConfig(t *testing.T, config string, opts Options) *PluginBlock {
	t.Helper()
	src := "variable \"m\" {\n  default = \"from-var\"\n}\nplugin \"p\" {\n  source = \"p\"\n" + config + "}\n"
	f, diags := Parse([]byte(src), filepath.Join(t.TempDir(), "run.hcl"), opts)
	if diags.HasErrors() {
		t.Fatalf("parse: %v", diags)
	}
	return f.Plugin("p")
}

func TestCheckPluginConfig(t *testing.T) {
	full := `  config {
    model_path    = var.m
    voice_default = "awb"
    rate          = 22050
    verbose       = true
    stops         = ["a", "b"]
    weights       = [1, 2.5]
    headers       = { Authorization = "x" }
  }
`
	got, diags := CheckPluginConfig(pluginWithConfig(t, full, Options{}), testSchema)
	if diags.HasErrors() {
		t.Fatalf("errors: %v", diags)
	}
	want := map[string]any{
		"model_path": "from-var", "voice_default": "awb", "rate": 22050.0, "verbose": true,
		"stops": []any{"a", "b"}, "weights": []any{1.0, 2.5}, "headers": map[string]any{"Authorization": "x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("config = %#v\nwant %#v", got, want)
	}

	// Defaults fill what is not set; optional fields without defaults stay absent.
	got, diags = CheckPluginConfig(pluginWithConfig(t, "  config {\n    model_path = \"m\"\n  }\n", Options{}), testSchema)
	if diags.HasErrors() {
		t.Fatalf("errors: %v", diags)
	}
	want = map[string]any{"model_path": "m", "voice_default": "kal16", "rate": 16000.0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults: %#v, want %#v", got, want)
	}

	cases := []struct {
		name, config, summary, detail string
		line                          int
	}{
		{"unknown attribute", "  config {\n    model_path = \"m\"\n    voice_defualt = \"awb\"\n  }\n", "Unsupported argument", `Did you mean "voice_default"?`, 8},
		{"wrong type", "  config {\n    model_path = \"m\"\n    rate = \"fast\"\n  }\n", "Incorrect attribute value type", "rate", 8},
		{"wrong list type", "  config {\n    model_path = \"m\"\n    weights = [\"a\"]\n  }\n", "Incorrect attribute value type", "weights", 8},
		{"missing required", "  config {\n    rate = 1\n  }\n", "Missing required argument", `"model_path"`, 6},
		{"missing required without config block", "", "Missing required argument", `Plugin "p"`, 4},
		{"not allowed", "  config {\n    model_path = \"m\"\n    voice_default = \"kal\"\n  }\n", "Value not allowed", `Did you mean "kal16"?`, 8},
		{"nested block", "  config {\n    model_path = \"m\"\n    extra {}\n  }\n", "Unsupported block type", "", 8},
		{"null", "  config {\n    model_path = null\n  }\n", "Missing value", "", 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := CheckPluginConfig(pluginWithConfig(t, tc.config, Options{}), testSchema)
			var found *hcl.Diagnostic
			for _, d := range diags {
				if strings.Contains(d.Summary, tc.summary) && strings.Contains(d.Detail, tc.detail) {
					found = d
				}
			}
			if found == nil {
				t.Fatalf("no %q/%q in %v", tc.summary, tc.detail, diags)
			}
			if found.Subject == nil || found.Subject.Start.Line != tc.line {
				t.Errorf("at %v, want line %d", found.Subject, tc.line)
			}
		})
	}

	// A plugin that describes a type the host does not know is reported, naming it.
	_, diags = CheckPluginConfig(pluginWithConfig(t, "", Options{}), []sdk.ConfigField{{Name: "x", Type: "tensor"}})
	if !diags.HasErrors() || !strings.Contains(diags[0].Detail, `"tensor"`) || !strings.Contains(diags[0].Detail, `Plugin "p"`) {
		t.Errorf("unknown type: %v", diags)
	}
	// An empty schema and no config block is fine.
	got, diags = CheckPluginConfig(pluginWithConfig(t, "", Options{}), nil)
	if diags.HasErrors() || len(got) != 0 {
		t.Errorf("empty: %v %v", got, diags)
	}
	// A block built by hand (no config, no context) is checked too.
	got, diags = CheckPluginConfig(&PluginBlock{Name: "q"}, testSchema[:1])
	if diags.HasErrors() || got["voice_default"] != "kal16" {
		t.Errorf("bare block: %v %v", got, diags)
	}
}
