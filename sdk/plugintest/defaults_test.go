package plugintest_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// docsStylePlugin is a Python model written the way docs/adding-a-model.md writes one:
// its configure reads config["temperature"] with no fallback, trusting the host to fill
// in the defaults.
const docsStylePlugin = `import numpy as np
from duplexmpe_plugin import (TYPE_NUMBER, TYPE_STRING, ConfigField, Conversation, Format,
                              InvalidArgument, Model, Output, serve)

class MyModel(Model):
    name = "my-model"
    version = "0.1.0"
    checkpoint = ""  # identity is asked before configure too
    config = (
        ConfigField("checkpoint", TYPE_STRING, default="me/my-model", description="HF repository"),
        ConfigField("temperature", TYPE_NUMBER, default=0.8, description="sampling temperature"),
    )

    def configure(self, config):
        if not config["temperature"] >= 0:
            raise InvalidArgument(f"temperature: expected >= 0, got {config['temperature']!r}")
        self.checkpoint = config["checkpoint"]

    def identity(self):
        return {"checkpoint": self.checkpoint}

    def start(self, req):
        return MyConversation()

class MyConversation(Conversation):
    format = Format(input_rate=16000, output_rate=16000, frame_size=1280)

    def step(self, frame):
        return Output(samples=np.zeros(1280, dtype=np.float32))

if __name__ == "__main__":
    serve(MyModel())
`

// The suite fills in the defaults of the fields Options.Config leaves out, as the host
// does for a config block: a plugin written like the docs' example passes with only one
// of its two fields given (it failed with a bare KeyError 'temperature' before).
func TestSuiteFillsInDefaultsAsTheHostDoes(t *testing.T) {
	python, err := filepath.Abs("../../.venv/bin/python")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(python); err != nil {
		t.Skip("needs the repository's .venv: run `make deps-py` first")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.py"), []byte(docsStylePlugin), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := pluginhost.Spec{Name: "my-model", Command: []string{python, "plugin.py"}, Dir: dir, StartTimeout: time.Minute}
	plugintest.Run(t, spec, plugintest.Options{Config: map[string]any{"checkpoint": "me/other-model"}})
}
