package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command constructor of the package is called from the command tree (commands.go
// or its group's constructor): a command file whose constructor nobody lists would be
// dead code that --help never shows.
func TestEveryCommandConstructorIsInTheTree(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	ctor := regexp.MustCompile(`^new\w+Cmd$`)
	defined := map[string]bool{}
	called := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if ctor.MatchString(n.Name.Name) {
					defined[n.Name.Name] = true
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && ctor.MatchString(id.Name) {
					called[id.Name] = true
				}
			}
			return true
		})
	}
	if len(defined) < 15 {
		t.Fatalf("found only %d command constructors: %v", len(defined), defined)
	}
	for name := range defined {
		if !called[name] {
			t.Errorf("%s is defined but no command list calls it", name)
		}
	}
}

// A command group answers a subcommand it does not have as the root does: a usage
// error, exit 2, "unknown command". It printed its help and exited 0, so a CI step calling
// a command this version lacks passed.
func TestEveryGroupRefusesAnUnknownSubcommand(t *testing.T) {
	root := newRoot(&State{Stdout: &strings.Builder{}, Stderr: &strings.Builder{}})
	var groups [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		// A group: subcommands, and no argument of its own in its Use line.
		if c.HasSubCommands() && !strings.Contains(c.Use, " ") {
			groups = append(groups, path)
		}
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string{}, path...), sub.Name()))
		}
	}
	walk(root, nil)
	if len(groups) < 2 { // the root and dataset at least
		t.Fatalf("found the groups %v", groups)
	}
	for _, g := range groups {
		args := append(append([]string{}, g...), "lint2")
		code, _, stderr := runInDir(t, t.TempDir(), nil, args...)
		if code != ExitUsage || !strings.Contains(stderr, `unknown command "lint2"`) {
			t.Errorf("duplexmpe %s: exit %d, want 2 and unknown command\n%s", strings.Join(args, " "), code, stderr)
		}
		if len(g) > 0 {
			code, stdout, stderr := runInDir(t, t.TempDir(), nil, g...)
			if code != ExitOK || !strings.Contains(stdout, "Available Commands") {
				t.Errorf("duplexmpe %s alone: exit %d, want its help\n%s%s", strings.Join(g, " "), code, stdout, stderr)
			}
		}
	}
}

// The main commands show Examples in --help (none did), and every example is a command
// line the binary accepts: its command exists, its flags parse, and its arguments are
// as many as the command takes.
func TestHelpExamplesAreValidCommandLines(t *testing.T) {
	main := [][]string{{"run"}, {"validate"}, {"plugins"}, {"plugins", "test"}, {"lock"}, {"score"},
		{"report"}, {"explain"}, {"compare"}, {"build"}, {"merge"}, {"dataset", "validate"}}
	root := newRoot(&State{Stdout: &strings.Builder{}, Stderr: &strings.Builder{}})
	for _, path := range main {
		c, _, err := root.Find(path)
		if err != nil || c.Example == "" {
			t.Errorf("duplexmpe %s has no Examples in --help", strings.Join(path, " "))
			continue
		}
		code, help, _ := runInDir(t, t.TempDir(), nil, append(path, "--help")...)
		if code != ExitOK || !strings.Contains(help, "Examples:\n  duplexmpe "+strings.Join(path, " ")) {
			t.Errorf("duplexmpe %s --help shows no Examples section:\n%s", strings.Join(path, " "), help)
		}
	}
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		for _, line := range strings.Split(c.Example, "\n") {
			line, _, _ = strings.Cut(line, "#")
			args := strings.Fields(line)
			if len(args) == 0 {
				continue
			}
			checked++
			if args[0] != "duplexmpe" {
				t.Errorf("%s: example %q does not start with duplexmpe", c.CommandPath(), line)
				continue
			}
			// A fresh tree for each line: parsed flags stay set on a command.
			fresh := newRoot(&State{Stdout: &strings.Builder{}, Stderr: &strings.Builder{}})
			cmd, rest, err := fresh.Find(args[1:])
			if err != nil || cmd == fresh {
				t.Errorf("%s: example %q names no command: %v", c.CommandPath(), line, err)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
				continue
			}
			if cmd.Args != nil {
				if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
					t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
				}
			}
		}
	}
	walk(root)
	if checked < len(main) {
		t.Errorf("checked only %d example lines", checked)
	}
}
