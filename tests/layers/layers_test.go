// Package layers checks the house's layers from the build's own import graph (go list):
// which packages may import which.
package layers

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/duplexmpe/duplexmpe/"

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// list runs `go list -deps=false -json` (or with -deps) on patterns from the module root.
func list(t *testing.T, args ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Fatalf("go list %v: %v", args, err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// The report is the last stage: only the application layer and the command line, which
// call it, import core/report or a package under it.
func TestOnlyAppAndCLIImportTheReport(t *testing.T) {
	allowed := map[string]bool{module + "core/app": true, module + "core/cli": true}
	// textfmt is moving under core/score (issue 30 item 4); until it has, core/reference
	// still uses it there.
	pending := map[string]bool{module + "core/reference " + module + "core/report/textfmt": true}
	report := module + "core/report"
	n := 0
	for _, p := range list(t, "./core/...") {
		n++
		if p.ImportPath == report || strings.HasPrefix(p.ImportPath, report+"/") || allowed[p.ImportPath] {
			continue
		}
		for _, imp := range p.Imports {
			if (imp == report || strings.HasPrefix(imp, report+"/")) && !pending[p.ImportPath+" "+imp] {
				t.Errorf("%s imports %s: only core/app and core/cli may; hand the package a value instead", strings.TrimPrefix(p.ImportPath, module), strings.TrimPrefix(imp, module))
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list found only %d packages under core/", n)
	}
}

// The run-file parser is plain data: it links no plugin host, gRPC or go-plugin
// (core/pluginstart makes the host's spec of its plugin blocks).
func TestConfigLinksNoGRPC(t *testing.T) {
	pkgs := list(t, "-deps", "./core/config")
	if len(pkgs) < 10 {
		t.Fatalf("go list -deps found only %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		for _, bad := range []string{"google.golang.org/grpc", "github.com/hashicorp/go-plugin", module + "core/pluginhost", module + "sdk"} {
			if p.ImportPath == bad || strings.HasPrefix(p.ImportPath, bad+"/") && bad != module+"sdk" {
				t.Errorf("core/config links %s", p.ImportPath)
			}
		}
	}
}

// The viewer is given its recordings budget by its caller (the report); it does not
// reach up into the plan for it.
func TestViewerIsGivenItsBudget(t *testing.T) {
	for _, p := range list(t, "./core/report/viewer") {
		for _, imp := range p.Imports {
			if imp == module+"core/plan" {
				t.Errorf("core/report/viewer imports core/plan")
			}
		}
	}
}
