package config

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// allocated is the bytes the Go heap handed out while fn ran (a measure of work that
// does not depend on the machine's load).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Issue 31: ten locals of ten interpolations of the one before took validate past 3 GB.
// The bomb is refused at the first local past 16 MiB, naming its line, having
// allocated a bounded amount.
func TestLocalsExpansionBomb(t *testing.T) {
	lines := []string{"locals {", `  l0 = "xxxxxxxxxx"`}
	for i := 1; i <= 10; i++ {
		lines = append(lines, fmt.Sprintf(`  l%d = "%s"`, i, strings.Repeat(fmt.Sprintf("${local.l%d}", i-1), 10)))
	}
	lines = append(lines, "}", `plugin "a" {`, "  source = local.l10", "}")
	src := strings.Join(lines, "\n") + "\n"
	if len(src) > 1300 {
		t.Fatalf("the bomb is %d bytes; the issue's was 1.2 KB", len(src))
	}
	path := filepath.Join(t.TempDir(), "bomb.hcl")
	var diags hcl.Diagnostics
	alloc := allocated(func() { _, diags = Parse([]byte(src), path, Options{}) })
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Value too large") || !strings.Contains(diags.Error(), "16 MiB") {
		t.Fatalf("diags = %v; want the expansion refused", diags)
	}
	// l7 (10^8 bytes) is the first past the bound.
	if d := diags[0]; d.Subject == nil || d.Subject.Start.Line != 9 || !strings.Contains(d.Detail, path+" line 9") {
		t.Errorf("first diagnostic = %v; want it at line 9 (local.l7), naming the file", d)
	}
	if alloc > 256<<20 {
		t.Errorf("loading the bomb allocated %d MiB; want it bounded (under 256 MiB)", alloc>>20)
	}
}

// The other ways one expression grows past the bound: a for expression, format's width,
// join's separator, a value referring to a large local many times.
func TestExpansionBounds(t *testing.T) {
	big := `  big = "` + strings.Repeat("y", 256<<10) + `"` + "\n"
	for name, c := range map[string]struct{ src, want string }{
		"for":      {"locals {\n  l = [1, 2]\n  x = [for a in local.l : a]\n}\n", "For expressions are not supported"},
		"format":   {"locals {\n  x = format(\"%01000000000d\", 1)\n}\n", "at most 1000"},
		"join":     {"locals {\n" + big + "  x = join(local.big, [" + strings.Repeat(`"a", `, 80) + "\"a\"])\n}\n", "more than 16 MiB"},
		"repeated": {"locals {\n" + big + "  x = \"" + strings.Repeat("${local.big}", 70) + "\"\n}\n", "Value too large"},
		"in all": {"locals {\n" + big + func() string {
			var b strings.Builder
			for i := 0; i < 8; i++ {
				fmt.Fprintf(&b, "  x%d = \"%s\"\n", i, strings.Repeat("${local.big}", 40))
			}
			return b.String()
		}() + "}\n", "in all"},
	} {
		t.Run(name, func(t *testing.T) {
			_, diags := Parse([]byte(c.src), filepath.Join(t.TempDir(), "run.hcl"), Options{})
			if !diags.HasErrors() || !strings.Contains(diags.Error(), c.want) {
				t.Fatalf("diags = %v; want %q", diags, c.want)
			}
		})
	}
	// What real run files do stays allowed.
	f, diags := Parse([]byte("locals {\n  a = \"runs\"\n  b = format(\"%s/%03d-%5.2f\", local.a, 7, 1.5)\n  c = join(\"/\", [local.a, local.b])\n}\n"),
		filepath.Join(t.TempDir(), "run.hcl"), Options{})
	if diags.HasErrors() || f.Locals["c"].AsString() != "runs/runs/007- 1.50" {
		t.Fatalf("diags = %v, c = %#v", diags, f.Locals["c"])
	}
}

// Issue 31: 100,000 nested [ overflowed the parser's Go stack (a crash, exit 2, a 31 KB
// trace); long operator chains cost seconds and hundreds of MB. Each is a clean error
// naming the file and line.
func TestNestingBounds(t *testing.T) {
	const n = 100000
	for name, c := range map[string]struct{ src, want string }{
		"brackets":    {"x = " + strings.Repeat("[", n) + "\n", "nests brackets"},
		"parentheses": {"locals {\n  x = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n}\n", "nests brackets"},
		"braces":      {strings.Repeat("x { ", n) + "\n", "nests brackets"},
		"templates":   {"locals {\n  x = " + strings.Repeat(`"${`, n/5) + "1" + strings.Repeat(`}"`, n/5) + "\n}\n", "nests brackets"},
		"negations":   {"locals {\n  x = " + strings.Repeat("!", n) + "true\n}\n", "chains operators"},
		"conditions":  {"locals {\n  x = " + strings.Repeat("true ? 1 : ", n/10) + "1\n}\n", "chains operators"},
		"wrapped sum": {"locals {\n  x = (" + strings.Repeat("1 +\n", n/10) + "1)\n}\n", "chains operators"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "deep.hcl")
			f, diags := Parse([]byte(c.src), path, Options{})
			if !diags.HasErrors() || !strings.Contains(diags.Error(), c.want) || !strings.Contains(diags.Error(), path) {
				t.Fatalf("diags = %.500v; want %q naming the file", diags, c.want)
			}
			var out bytes.Buffer
			if err := WriteDiagnostics(&out, f.Sources, diags, 0, false); err != nil || out.Len() > 2000 {
				t.Errorf("printed %d bytes (err %v); want the long line shown as a short window", out.Len(), err)
			}
		})
	}
	// 100 levels of real nesting are fine.
	if _, diags := Parse([]byte("locals {\n  x = "+strings.Repeat("[", 90)+strings.Repeat("]", 90)+"\n}\n"), filepath.Join(t.TempDir(), "ok.hcl"), Options{}); diags.HasErrors() {
		t.Fatalf("90 nested brackets: %v", diags)
	}
}

func TestBlockCountBound(t *testing.T) {
	src := strings.Repeat("locals {\n}\n", maxBlocks+1)
	_, diags := Parse([]byte(src), filepath.Join(t.TempDir(), "many.hcl"), Options{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "more than 10000 blocks") {
		t.Fatalf("diags = %.300v", diags)
	}
	if diags[0].Subject.Start.Line != 2*maxBlocks+1 {
		t.Errorf("refused at line %d; want the first block past the bound", diags[0].Subject.Start.Line)
	}
}

func unusedPlugins(n int) []byte {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "plugin \"p%d\" {\n  source = \"bin/p%d\"\n}\n", i, i)
	}
	return []byte(b.String())
}

// Issue 31: validate took 90.9 s on 2,000 unused plugin blocks: hcl's text writer scans
// the file from its first line for every diagnostic (one warning per block). The work
// (bytes allocated) of loading and printing grows linearly: four times the blocks cost
// about four times as much, not sixteen.
func TestDiagnosticsLinearInBlocks(t *testing.T) {
	cost := func(n int) uint64 {
		path := filepath.Join(t.TempDir(), "run.hcl")
		return allocated(func() {
			f, diags := Parse(unusedPlugins(n), path, Options{PluginsMustExist: true})
			if len(diags) < n {
				t.Fatalf("%d diagnostics for %d blocks", len(diags), n)
			}
			if err := WriteDiagnostics(&bytes.Buffer{}, f.Sources, diags, 0, false); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := cost(250), cost(1000)
	if ratio := float64(large) / float64(small); ratio > 6 {
		t.Fatalf("1,000 blocks allocated %.1f times what 250 did; want about 4 (linear)", ratio)
	}
}

// The writer prints what hcl's did, line numbers, context and highlights included.
func TestDiagnosticsAsHCLPrintsThem(t *testing.T) {
	src := "locals {\n  a = \"x\"\n  b = local.a + 1\n}\nplugin \"p\" {\n  source = \"bin/p\"\n  frame_timeout = 0\n}\nplugin \"p\" {\n  source = \"bin/q\"\n}\nwhat = 3\n"
	path := filepath.Join(t.TempDir(), "run.hcl")
	f, diags := Parse([]byte(src), path, Options{})
	if len(diags) < 3 {
		t.Fatalf("diags = %v; want several", diags)
	}
	var ours, theirs bytes.Buffer
	if err := WriteDiagnostics(&ours, f.Sources, diags, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := hcl.NewDiagnosticTextWriter(&theirs, f.Sources, 0, false).WriteDiagnostics(diags); err != nil {
		t.Fatal(err)
	}
	if ours.String() != theirs.String() {
		t.Fatalf("ours:\n%s\nhcl's:\n%s", ours.String(), theirs.String())
	}
}

// go test -bench ValidateManyPlugins ./core/config: the figure in docs/reliability.md.
func BenchmarkValidateManyPlugins(b *testing.B) {
	src := unusedPlugins(2000)
	path := filepath.Join(b.TempDir(), "run.hcl")
	for i := 0; i < b.N; i++ {
		f, diags := Parse(src, path, Options{PluginsMustExist: true})
		_ = WriteDiagnostics(&bytes.Buffer{}, f.Sources, diags, 0, false)
	}
}
