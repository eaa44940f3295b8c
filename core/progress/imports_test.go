package progress

import (
	"os/exec"
	"strings"
	"testing"
)

// The domain counts, the CLI draws: no package of this module that the reporting
// packages (and this one) are built from may import the terminal and bar libraries, and
// the bar library must not be in their build at all (the terminal test also comes in
// through go-hclog's colours, which ask for their own output, not ours). Only core/cli
// imports them; that it does shows the names below are the libraries' true paths. The
// import graph is read from the go command.
func TestOnlyTheCLIDrawsProgress(t *testing.T) {
	const self = "github.com/duplexmpe/duplexmpe/"
	const bars = "github.com/vbauerster/mpb/"
	drawing := []string{bars, "github.com/mattn/go-isatty", "golang.org/x/term"}
	domain := []string{"core/progress", "core/construct", "core/evaluate", "core/app"}

	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to read the import graph: %v", err)
	}
	// Each line: a package of the build, then its own imports.
	list := func(deps bool, pkgs ...string) map[string][]string {
		args := []string{"list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}
		if deps {
			args = append(args, "-deps")
		}
		for _, p := range pkgs {
			args = append(args, self+p)
		}
		out, err := exec.Command(goTool, args...).Output()
		if err != nil {
			t.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		imports := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			imports[f[0]] = f[1:]
		}
		return imports
	}
	drawer := func(imp string) bool {
		for _, lib := range drawing {
			if strings.HasPrefix(imp, lib) {
				return true
			}
		}
		return false
	}

	cli := list(false, "core/cli")[self+"core/cli"]
	for _, lib := range drawing[:2] {
		if !strings.Contains(" "+strings.Join(cli, " "), " "+lib) {
			t.Errorf("core/cli does not import %s: update this test's list of drawing libraries", lib)
		}
	}
	build := list(true, domain...)
	for _, p := range domain {
		if build[self+p] == nil {
			t.Fatalf("go list -deps did not list %s", p)
		}
	}
	for pkg, imports := range build {
		if strings.HasPrefix(pkg, bars) {
			t.Errorf("%s is in the build of %v: bars belong to core/cli", pkg, domain)
		}
		if !strings.HasPrefix(pkg, self) {
			continue
		}
		for _, imp := range imports {
			if drawer(imp) {
				t.Errorf("%s imports %s, and %v are built from it: terminal detection and bars belong to core/cli (a progress.Printer)", pkg, imp, domain)
			}
		}
	}
}
