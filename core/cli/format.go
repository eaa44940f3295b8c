package cli

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
)

// The formatting helpers every command shares: how a result becomes JSON or text, and
// how a command-line path is read against the State's working directory. One place, so
// every command prints JSON and resolves paths the same way.

// writeJSON writes v as indented JSON, the shape every --json flag prints.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printOrJSON writes v as indented JSON, or as print renders it.
func printOrJSON(w io.Writer, asJSON bool, v any, print func(io.Writer)) error {
	if asJSON {
		return writeJSON(w, v)
	}
	print(w)
	return nil
}

// resolvePath makes a command-line path absolute against the State's working
// directory, so commands never depend on the process's own.
func resolvePath(st *State, p string) string {
	if filepath.IsAbs(p) || st.Getwd == nil {
		return p
	}
	wd, err := st.Getwd()
	if err != nil {
		return p
	}
	return filepath.Join(wd, p)
}

// displayPath shows a path relative to the State's working directory when it lies
// below it, else as it is.
func displayPath(st *State, p string) string {
	if st.Getwd == nil {
		return p
	}
	wd, err := st.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// examples formats command lines for a command's Example field, one per line, indented
// as cobra prints its other sections. Each must be a valid command line of that command
// (TestHelpExamplesAreValidCommandLines parses them).
func examples(lines ...string) string {
	return "  " + strings.Join(lines, "\n  ")
}
