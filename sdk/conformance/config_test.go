package conformance_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/conformance"
)

// The suite configures a plugin exactly as the host does: for the same values, written
// as a run file's config block (what the host checks, core/config.CheckPluginConfig) and
// given as Options.Config (conformance.Config), the plugin gets the same config, or both
// refuse it. A plugin that reads config["threshold"] without a fallback, as the docs'
// example does, so passes the suite only if it works under the host.
func TestConfigFillsDefaultsAsTheHostDoes(t *testing.T) {
	schema := []sdk.ConfigField{
		{Name: "threshold", Type: sdk.TypeNumber, Default: 0.05},
		{Name: "voice", Type: sdk.TypeString, Default: "slt", Allowed: []string{"slt", "awb"}},
		{Name: "tags", Type: sdk.TypeListString},
		{Name: "checkpoint", Type: sdk.TypeString, Required: true},
		{Name: "stream", Type: sdk.TypeBool, Default: false},
		{Name: "weights", Type: sdk.TypePath, Default: "weights"},
	}
	cases := []struct {
		name  string
		block string
		given map[string]any
		fails bool
	}{
		{"only the required field", `checkpoint = "me/m"`, map[string]any{"checkpoint": "me/m"}, false},
		{"an integer", "checkpoint = \"me/m\"\nthreshold = 1", map[string]any{"checkpoint": "me/m", "threshold": 1}, false},
		{"a list and a bool", "checkpoint = \"me/m\"\ntags = [\"a\", \"b\"]\nstream = true",
			map[string]any{"checkpoint": "me/m", "tags": []string{"a", "b"}, "stream": true}, false},
		{"an allowed value", "checkpoint = \"me/m\"\nvoice = \"awb\"", map[string]any{"checkpoint": "me/m", "voice": "awb"}, false},
		{"a required field left out", `threshold = 0.1`, map[string]any{"threshold": 0.1}, true},
		{"an unknown field", "checkpoint = \"me/m\"\ntreshold = 0.1", map[string]any{"checkpoint": "me/m", "treshold": 0.1}, true},
		{"a wrong type", "checkpoint = \"me/m\"\nthreshold = \"high\"", map[string]any{"checkpoint": "me/m", "threshold": "high"}, true},
		{"a value not allowed", "checkpoint = \"me/m\"\nvoice = \"kal\"", map[string]any{"checkpoint": "me/m", "voice": "kal"}, true},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "run.hcl")
			src := "plugin \"p\" {\n  source = \"p\"\n  config {\n    " + strings.ReplaceAll(c.block, "\n", "\n    ") + "\n  }\n}\n"
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			f, diags := config.Load(path, config.Options{Cwd: dir})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			host, hdiags := config.CheckPluginConfig(f.Plugin("p"), schema)
			suite, err := conformance.Config(schema, c.given)
			if hdiags.HasErrors() != c.fails || (err != nil) != c.fails {
				t.Fatalf("host: %v; suite: %v; want failure %v", hdiags, err, c.fails)
			}
			if !c.fails && !reflect.DeepEqual(host, suite) {
				t.Errorf("host sends %#v\nsuite sends %#v", host, suite)
			}
		})
	}
}
