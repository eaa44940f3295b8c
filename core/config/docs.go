package config

import (
	"fmt"
	"strings"
)

// Markdown renders the language reference from Spec and FunctionDocs. docs/run-files.md
// holds it between the markers DocsBegin and DocsEnd; a test keeps the two equal.
func Markdown() string {
	var b strings.Builder
	for _, bs := range Spec.Blocks {
		writeBlock(&b, bs, "")
	}
	b.WriteString("### Functions\n\n")
	b.WriteString("| function | result |\n|---|---|\n")
	for _, f := range FunctionDocs {
		fmt.Fprintf(&b, "| `%s` | %s |\n", f.Signature, f.Doc)
	}
	b.WriteString("\n### Values\n\n")
	b.WriteString("- `var.<name>`: a variable; `local.<name>`: a local value.\n")
	b.WriteString("- `path.root`: the absolute directory of the run file; `path.cwd`: the directory duplexmpe runs in.\n")
	b.WriteString("- Relative paths in attributes of type path (and in `file`, `abspath`) resolve against the run file's directory.\n")
	b.WriteString("- A duration is a string such as `\"800ms\"`, `\"2s\"` or `\"1m30s\"`, or a number of seconds; it must not be negative.\n")
	return b.String()
}

// The markers around the generated part of docs/run-files.md.
const (
	DocsBegin = "<!-- BEGIN GENERATED: go test ./core/config -run TestDocs -update -->"
	DocsEnd   = "<!-- END GENERATED -->"
)

func writeBlock(b *strings.Builder, bs *BlockSpec, parent string) {
	title := bs.Type
	if parent != "" {
		title = parent + " > " + bs.Type
	}
	header := bs.Type
	for _, l := range bs.Labels {
		header += fmt.Sprintf(" \"<%s>\"", l)
	}
	fmt.Fprintf(b, "### `%s`\n\n", title)
	fmt.Fprintf(b, "`%s { ... }`", header)
	if parent != "" {
		b.WriteString(", at most one per " + strings.Split(parent, " > ")[len(strings.Split(parent, " > "))-1])
	}
	fmt.Fprintf(b, "\n\n%s\n\n", bs.Doc)
	if len(bs.Attrs) > 0 {
		b.WriteString("| attribute | type | required | default | meaning |\n|---|---|---|---|---|\n")
		for _, a := range bs.Attrs {
			req := "no"
			if a.Required {
				req = "yes"
			}
			def := a.Default
			if def == "" {
				def = "-"
			} else {
				def = "`" + def + "`"
			}
			fmt.Fprintf(b, "| `%s` | `%s` | %s | %s | %s |\n", a.Name, a.Type, req, def, a.Doc)
		}
		b.WriteString("\n")
	}
	for _, c := range bs.Blocks {
		writeBlock(b, c, title)
	}
}
