package pluginstart_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/config"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/core/pluginstart"
)

// HostSpec carries every field of the run file's plain description of a plugin to the
// host's spec under the same name, and names the spec by the block: a field added to
// config.PluginSpec and not carried over fails here.
func TestHostSpecCarriesEveryField(t *testing.T) {
	var ps config.PluginSpec
	v := reflect.ValueOf(&ps).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		name := v.Type().Field(i).Name
		switch f.Kind() {
		case reflect.String:
			f.SetString("value of " + name)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{name, "second"}))
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]string{name: "x"}))
		case reflect.Int64:
			f.SetInt(int64(1000 + i)) // time.Duration too
		default:
			t.Fatalf("config.PluginSpec.%s is a %s: teach this test to fill it", name, f.Kind())
		}
	}
	b := &config.PluginBlock{Name: "moshi", Spec: ps}
	got := reflect.ValueOf(pluginstart.HostSpec(b))
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		hf := got.FieldByName(name)
		if !hf.IsValid() {
			t.Errorf("pluginhost.Spec has no field %s", name)
			continue
		}
		if !reflect.DeepEqual(hf.Interface(), v.Field(i).Interface()) {
			t.Errorf("%s: the host's spec has %v, the run file said %v", name, hf.Interface(), v.Field(i).Interface())
		}
	}
	if hs := pluginstart.HostSpec(b); hs.Name != "moshi" || hs.StartTimeout != time.Duration(ps.StartTimeout) || hs.LogFile != "" {
		t.Errorf("spec named %q, log file %q", hs.Name, hs.LogFile)
	}
}

// A reattached plugin, which the host does not start, and a command plugin without a
// dir, which cannot be pinned, have no hash; a source binary has its sha256, and a
// changed binary another.
func TestHashPinsWhatCanBePinned(t *testing.T) {
	for _, s := range []pluginhost.Spec{{Name: "warm", Reattach: `{"x":1}`, Source: "/bin/true"}, {Name: "py", Command: []string{"python3", "-m", "p"}}} {
		if h, err := pluginstart.Hash(s); h != "" || err != nil {
			t.Errorf("%s: hash %q, %v; want none", s.Name, h, err)
		}
	}
	f, bin := runFile(t, "")
	h, err := pluginstart.Hash(pluginstart.HostSpec(f.Plugin("beeper")))
	if err != nil || !strings.HasPrefix(h, "sha256:") {
		t.Fatalf("beeper: %q, %v", h, err)
	}
	if _, err := pluginstart.Hash(pluginhost.Spec{Name: "gone", Source: bin + ".missing"}); err == nil {
		t.Error("a missing binary was hashed")
	}
}

// The lock file records source and dir as the run file wrote them (relative), not as
// resolved, so that a committed lock holds on any checkout.
func TestLockSpecKeepsTheWrittenPaths(t *testing.T) {
	f, _ := runFile(t, "")
	b := f.Plugin("beeper")
	if !strings.HasSuffix(b.Spec.Source, "/beeper") || b.Spec.Source == "beeper" {
		t.Fatalf("the run file's source resolved to %q", b.Spec.Source)
	}
	if ls := pluginstart.LockSpec(b); ls.Source != "beeper" || ls.Name != "beeper" {
		t.Errorf("lock spec source %q, name %q; want the written \"beeper\"", ls.Source, ls.Name)
	}
}

// Each kind of pin mismatch comes with the command that fixes it.
func TestPinFixSaysWhatToRun(t *testing.T) {
	for what, want := range map[string]string{
		pluginhost.PinMissing: "pin it with `duplexmpe lock run.hcl`",
		pluginhost.PinSpec:    "re-pin it with `duplexmpe lock --upgrade run.hcl`; otherwise restore the block",
		pluginhost.PinHash:    "otherwise restore the pinned plugin",
	} {
		if got := pluginstart.PinFix(&pluginhost.PinError{Plugin: "p", What: what}, "run.hcl"); !strings.Contains(got, want) {
			t.Errorf("%s: %q lacks %q", what, got, want)
		}
	}
}
