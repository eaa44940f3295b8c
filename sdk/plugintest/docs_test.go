package plugintest_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/adding-a-model.md as a plugin author reads it: it names `duplexmpe plugins test`
// (it never did); its conformance snippets configure the example model with fields of
// that model's own schema (they passed `factory`, which only the repository's adapters
// declare, so a plugin written from the guide was refused); and what its Python example
// imports, the capability constants among them, is exported by the SDK.
func TestAddingAModelGuideMatchesTheSDK(t *testing.T) {
	raw, err := os.ReadFile("../../docs/adding-a-model.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	if !strings.Contains(doc, "duplexmpe plugins test my-run.hcl") {
		t.Error("the guide never names `duplexmpe plugins test`")
	}

	example := regexp.MustCompile("(?s)```python\n(from duplexmpe_plugin import .*?class MyModel\\(Model\\).*?)```").FindStringSubmatch(doc)
	if example == nil {
		t.Fatal("no Python example with class MyModel in the guide")
	}
	var fields []string
	for _, m := range regexp.MustCompile(`ConfigField\("(\w+)"`).FindAllStringSubmatch(example[1], -1) {
		fields = append(fields, m[1])
	}
	if len(fields) == 0 {
		t.Fatal("the example model declares no config field")
	}
	var used []string
	for _, m := range regexp.MustCompile(`Config: map\[string\]any\{([^}]*)\}`).FindAllStringSubmatch(doc, -1) {
		for _, k := range regexp.MustCompile(`"(\w+)":`).FindAllStringSubmatch(m[1], -1) {
			used = append(used, k[1])
		}
	}
	for _, m := range regexp.MustCompile(`config_json='(\{[^']*\})'`).FindAllStringSubmatch(doc, -1) {
		for _, k := range regexp.MustCompile(`"(\w+)":`).FindAllStringSubmatch(m[1], -1) {
			used = append(used, k[1])
		}
	}
	if len(used) == 0 {
		t.Fatal("found no conformance or Configure snippet with a config in the guide")
	}
	for _, k := range used {
		if !slices.Contains(fields, k) {
			t.Errorf("a snippet configures %q, which the guide's model does not declare (its fields: %v)", k, fields)
		}
	}

	initPy, err := os.ReadFile("../python/src/duplexmpe_plugin/__init__.py")
	if err != nil {
		t.Fatal(err)
	}
	all := regexp.MustCompile(`(?s)__all__ = \[(.*?)\]`).FindSubmatch(initPy)
	if all == nil {
		t.Fatal("no __all__ in the Python SDK")
	}
	imports := regexp.MustCompile(`(?s)from duplexmpe_plugin import \((.*?)\)`).FindStringSubmatch(example[1])
	if imports == nil {
		t.Fatal("the example does not import from duplexmpe_plugin")
	}
	for _, name := range strings.FieldsFunc(imports[1], func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
		if !strings.Contains(string(all[1]), `"`+name+`"`) {
			t.Errorf("the example imports %s, which the Python SDK does not export", name)
		}
	}
	if !strings.Contains(example[1], "CAP_TEXT") {
		t.Error("the example spells its capability instead of using the SDK's constant")
	}
}
