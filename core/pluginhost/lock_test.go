package pluginhost_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/pluginhost"
)

const (
	hashA = "sha256:0000000000000000000000000000000000000000000000000000000000000001"
	hashB = "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
)

func TestLockWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.lock.hcl")
	l := &pluginhost.Lock{}
	l.Set(pluginhost.LockedPlugin{Name: "zeta", Source: "bin/plugins/zeta", Hashes: []string{hashA}})
	l.Set(pluginhost.LockedPlugin{Name: "alpha", Version: "1.2.0", Command: []string{"bash", "run.sh"}, Hashes: []string{hashB, hashA}})
	if err := l.Write(path); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(path)
	got, err := pluginhost.ReadLock(path)
	if err != nil {
		t.Fatalf("ReadLock: %v\n%s", err, first)
	}
	want := []pluginhost.LockedPlugin{
		{Name: "alpha", Version: "1.2.0", Command: []string{"bash", "run.sh"}, Hashes: []string{hashB, hashA}},
		{Name: "zeta", Source: "bin/plugins/zeta", Hashes: []string{hashA}},
	}
	if !reflect.DeepEqual(got.Plugins, want) {
		t.Fatalf("read back %+v\nwant %+v\nfile:\n%s", got.Plugins, want, first)
	}
	// Deterministic: writing what was read gives the same bytes.
	if err := got.Write(path); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(path)
	if string(first) != string(second) {
		t.Fatalf("not deterministic:\n%s\n---\n%s", first, second)
	}
	if !strings.Contains(string(first), `plugin "alpha" {`) || strings.Index(string(first), "alpha") > strings.Index(string(first), "zeta") {
		t.Fatalf("blocks not sorted by name:\n%s", first)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestReadLockErrorsNameFileAndLine(t *testing.T) {
	cases := map[string]struct{ src, want string }{
		"syntax":        {"plugin \"a\" {\n  hashes = [\n", ":3: Missing expression"},
		"unknown attr":  {"plugin \"a\" {\n  source = \"x\"\n  hashes = [\"" + hashA + "\"]\n  colour = \"red\"\n}\n", ":4: Unsupported argument"},
		"missing hash":  {"plugin \"a\" {\n  source = \"x\"\n}\n", ":1: Missing required argument"},
		"bad hash":      {"plugin \"a\" {\n  source = \"x\"\n  hashes = [\"md5:abc\"]\n}\n", ":3: Invalid hash"},
		"both":          {"plugin \"a\" {\n  source = \"x\"\n  command = [\"y\"]\n  hashes = [\"" + hashA + "\"]\n}\n", ":1: Source or command"},
		"wrong type":    {"plugin \"a\" {\n  source = [\"x\"]\n  hashes = [\"" + hashA + "\"]\n}\n", ":2: Invalid source"},
		"duplicate":     {"plugin \"a\" {\n  source = \"x\"\n  hashes = [\"" + hashA + "\"]\n}\nplugin \"a\" {\n  source = \"x\"\n  hashes = [\"" + hashA + "\"]\n}\n", ":5: Duplicate plugin block"},
		"variable use":  {"plugin \"a\" {\n  source = var.x\n  hashes = [\"" + hashA + "\"]\n}\n", ":2:"},
		"unknown block": {"provider \"a\" {}\n", ":1:"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "lock.hcl")
			if err := os.WriteFile(path, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := pluginhost.ReadLock(path)
			if err == nil || !strings.Contains(err.Error(), path+tc.want) {
				t.Fatalf("err = %v; want it to contain %q", err, path+tc.want)
			}
		})
	}
	_, err := pluginhost.ReadLock(filepath.Join(t.TempDir(), "absent.hcl"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("absent file: err = %v; want fs.ErrNotExist", err)
	}
}

func TestLockCheck(t *testing.T) {
	l := &pluginhost.Lock{}
	l.Set(pluginhost.LockedPlugin{Name: "m", Version: "1.0.0", Source: "bin/m", Hashes: []string{hashA}})
	spec := pluginhost.Spec{Name: "m", Source: "bin/m", Version: "1.0.0"}
	if err := l.Check(spec, hashA); err != nil {
		t.Fatalf("matching spec refused: %v", err)
	}
	cases := []struct {
		name string
		spec pluginhost.Spec
		hash string
		what string
		want string
	}{
		{"hash", spec, hashB, pluginhost.PinHash, "hash to " + hashB + ", but the lock file pins " + hashA},
		{"absent", pluginhost.Spec{Name: "other", Source: "bin/m"}, hashA, pluginhost.PinMissing, `"other" is not in`},
		{"source", pluginhost.Spec{Name: "m", Source: "bin/n"}, hashA, pluginhost.PinSpec, `source "bin/n"`},
		{"command", pluginhost.Spec{Name: "m", Command: []string{"bin/m"}}, hashA, pluginhost.PinSpec, "command"},
		{"version", pluginhost.Spec{Name: "m", Source: "bin/m", Version: "2.0.0"}, hashA, pluginhost.PinVersion, `"2.0.0"`},
	}
	for _, tc := range cases {
		err := l.Check(tc.spec, tc.hash)
		var pe *pluginhost.PinError
		if !errors.As(err, &pe) || pe.What != tc.what || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v; want a %s PinError containing %q", tc.name, err, tc.what, tc.want)
		}
	}
}

func FuzzParseLock(f *testing.F) {
	l := &pluginhost.Lock{}
	l.Set(pluginhost.LockedPlugin{Name: "a", Version: "1", Command: []string{"python3", "-m", "x"}, Hashes: []string{hashB}})
	l.Set(pluginhost.LockedPlugin{Name: "b", Source: "bin/b", Hashes: []string{hashA}})
	f.Add(l.Format())
	f.Add([]byte("plugin \"a\" {\n  source = \"x\"\n  hashes = [\"" + hashA + "\"]\n}\n"))
	f.Add([]byte("plugin \"a\" { hashes = null }"))
	f.Fuzz(func(t *testing.T, src []byte) {
		lock, err := pluginhost.ParseLock(src, "fuzz.hcl")
		if err != nil {
			return
		}
		// Whatever parses must survive a write and read back unchanged.
		again, err := pluginhost.ParseLock(lock.Format(), "again.hcl")
		if err != nil {
			t.Fatalf("re-parse of formatted lock failed: %v\n%s", err, lock.Format())
		}
		for _, p := range lock.Plugins {
			q, ok := again.Get(p.Name)
			if !ok || q.Source != p.Source || q.Version != p.Version || !reflect.DeepEqual(q.Command, p.Command) || len(q.Hashes) != len(p.Hashes) {
				t.Fatalf("round trip changed %+v into %+v", p, q)
			}
		}
	})
}
