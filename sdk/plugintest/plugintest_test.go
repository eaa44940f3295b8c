package plugintest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/sdk"
	"github.com/duplexmpe/duplexmpe/sdk/plugintest"
)

// testPluginBin is the last path testPlugin returned, for TestMain to check RemoveBuilt.
var testPluginBin string

// testPlugin builds internal/testplugin (every kind) once per test binary.
func testPlugin(t *testing.T) string {
	t.Helper()
	testPluginBin = plugintest.BuildGo(t, "./internal/testplugin")
	return testPluginBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	bin := testPluginBin
	plugintest.RemoveBuilt()
	if _, err := os.Stat(bin); bin != "" && !os.IsNotExist(err) {
		fmt.Fprintf(os.Stderr, "RemoveBuilt left %s behind (%v)\n", bin, err)
		code = 1
	}
	os.Exit(code)
}

func TestConformanceEveryKind(t *testing.T) {
	plugintest.Run(t, pluginhost.Spec{Name: "testplugin", Source: testPlugin(t)}, plugintest.Options{})
}

// TestHelperRun is the suite run in a child test process by TestSuiteCatchesFaults.
func TestHelperRun(t *testing.T) {
	bin := os.Getenv("PLUGINTEST_HELPER_BIN")
	if bin == "" {
		t.Skip("only run by TestSuiteCatchesFaults")
	}
	plugintest.Run(t, pluginhost.Spec{Name: "faulty", Source: bin, Env: map[string]string{"TESTPLUGIN_FAULT": os.Getenv("TESTPLUGIN_FAULT")}}, plugintest.Options{})
}

// TestSuiteCatchesFaults runs the suite against plugins that each break one rule and
// checks that exactly the right subtest fails.
func TestSuiteCatchesFaults(t *testing.T) {
	bin := testPlugin(t)
	cases := map[string]string{
		"schema":   "TestHelperRun/describe",
		"kinds":    "TestHelperRun/describe",
		"loud":     "TestHelperRun/model/frames",
		"novoices": "TestHelperRun/tts/voices",
		"label":    "TestHelperRun/judge/answer",
	}
	for fault, failing := range cases {
		t.Run(fault, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRun$", "-test.v")
			cmd.Env = append(os.Environ(), "PLUGINTEST_HELPER_BIN="+bin, "TESTPLUGIN_FAULT="+fault)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a plugin with fault %q:\n%s", fault, out)
			}
			if !strings.Contains(string(out), "--- FAIL: "+failing+" ") {
				t.Fatalf("fault %q: want subtest %s to fail; output:\n%s", fault, failing, out)
			}
			if !strings.Contains(string(out), "--- PASS: TestHelperRun/shutdown") {
				t.Fatalf("fault %q: the plugin was not shut down cleanly:\n%s", fault, out)
			}
		})
	}
}

// A panic in plugin code fails that one call with Internal; the process keeps serving.
func TestPanicInPluginCodeFailsOnlyThatCall(t *testing.T) {
	ctx := context.Background()
	c, err := pluginhost.Start(ctx, pluginhost.Spec{Name: "testplugin", Source: testPlugin(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	asr, err := c.ASR()
	if err != nil {
		t.Fatal(err)
	}
	clip := sdk.Audio{Samples: make([]float32, 160), Rate: 16000}
	_, err = asr.Transcribe(ctx, clip, "panic")
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "asked to panic") || !strings.Contains(err.Error(), `"testplugin"`) {
		t.Fatalf("err = %v; want Internal naming the plugin and carrying the panic", err)
	}
	text, err := asr.Transcribe(ctx, clip, "")
	if err != nil || text != "160 samples at 16000 Hz" {
		t.Fatalf("after the panic: %q, %v", text, err)
	}
}
