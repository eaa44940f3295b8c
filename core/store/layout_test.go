package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestRunDirectoryNamesAreDeclaredOnce walks the Go code of core/ (tests aside) and
// fails on a file name of the run directory written as a literal outside this package:
// every reader and writer names them by the constants of layout.go, so that a name
// changes in one place. It also fails on a second declaration of session.json's shape
// (a struct with session.json's fields "format", "frames" and "latency").
func TestRunDirectoryNamesAreDeclaredOnce(t *testing.T) {
	// Names that only a run directory has: any literal equal to one is a second
	// declaration. (Other folders have files of their own with some of these names: a
	// built dataset has its manifest.json, core/dataset's own.)
	files := map[string]bool{}
	for _, n := range []string{ManifestFile, RunInfoFile, LockFile, TranscriptsCache, JudgementsCache, SummaryFile, ReportMetaFile,
		ScoredFile, ViewFile, ReportMarkdownFile, ReportHTMLFile, ResultsJSONFile, ResultsCSVFile} {
		files[n] = true
	}
	for _, n := range ItemFiles {
		files[n] = true
	}
	allowed := map[string]map[string]bool{"dataset": {ManifestFile: true}}
	// Files where a folder's name means another folder: bin/plugins, the built plugins.
	allowedElements := map[string]map[string]bool{filepath.Join("tools", "benchscale", "main.go"): {PluginsDir: true},
		// `make build`'s bin/plugins (the judge the audit starts by default), not a run
		// directory's plugins/.
		filepath.Join("core", "app", "audit.go"): {PluginsDir: true}}
	// Folder and marker names are common words: a literal counts only as a path
	// element (an argument of filepath.Join or path.Join).
	elements := map[string]bool{ItemsDir: true, PluginsDir: true, LogsDir: true, CacheDir: true, VerdictsDir: true, ViewerDir: true, DoneMarker: true, FailedMarker: true}

	var found []string
	fset := token.NewFileSet()
	// The whole module: core, sdk, plugins, tools, tests, examples.
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch {
			case path == filepath.Join(root, "core", "store"):
				return filepath.SkipDir // this package declares them
			case path == filepath.Join(root, "tests", "reliability", "damage"):
				// Damages item files by the names on disk, for this package's own tests
				// too (verify_test.go), so it cannot import it.
				return filepath.SkipDir
			case path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules"),
				filepath.Dir(path) == root && (d.Name() == "build" || d.Name() == "bin" || d.Name() == "runs"):
				return filepath.SkipDir // not the module's source: caches, environments, outputs
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		pkg := f.Name.Name
		rel, _ := filepath.Rel(root, path)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.StructType:
				if declaresSession(n) {
					found = append(found, fset.Position(n.Pos()).String()+": session.json's shape declared again (use store.SessionInfo)")
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Join" {
					for _, a := range n.Args {
						if s, ok := literal(a); ok && elements[s] && !allowedElements[rel][s] {
							found = append(found, fset.Position(a.Pos()).String()+": "+strconv.Quote(s)+" as a path element")
						}
					}
				}
			case *ast.BasicLit:
				if s, ok := literal(n); ok && files[s] && !allowed[pkg][s] {
					found = append(found, fset.Position(n.Pos()).String()+": "+strconv.Quote(s))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: name it by core/store's constant (layout.go)", f)
	}
}

func literal(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(b.Value)
	return s, err == nil
}

// declaresSession reports whether st is a struct for session.json: every JSON field of
// it one of session.json's ("format", "frames", "latency", "t_wait"), "frames" among
// them with "format" or "latency". (A record.Record holds these and more: it is not.)
func declaresSession(st *ast.StructType) bool {
	ses := map[string]bool{"format": true, "frames": true, "latency": true, "t_wait": true}
	has := map[string]bool{}
	for _, f := range st.Fields.List {
		if f.Tag == nil {
			return false
		}
		tag, err := strconv.Unquote(f.Tag.Value)
		if err != nil {
			return false
		}
		name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
		if !ses[name] {
			return false
		}
		has[name] = true
	}
	return has["frames"] && (has["format"] || has["latency"])
}
