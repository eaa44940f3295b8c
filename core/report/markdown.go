package report

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"

	"github.com/duplexmpe/duplexmpe/core/reference"
	"github.com/duplexmpe/duplexmpe/core/score"
)

// markdown renders report.md: the main results, the contents, then every other section
// (the provenance first) as Markdown tables.
func markdown(s score.Summary, m Meta, ref *reference.Result) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n", mdEscape(Title(m)))
	secs := sections(s, m, ref)
	write := func(sec section) {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n", mdEscape(sec.Title), mdEscape(sec.Intro))
		for _, t := range sec.Tables {
			b.WriteString("\n")
			writeMDTable(&b, t)
		}
	}
	// The main results first, then the contents, the provenance and the rest.
	write(secs[0])
	b.WriteString("\n## Contents\n\n")
	for _, sec := range secs {
		fmt.Fprintf(&b, "- [%s](#%s)\n", mdEscape(sec.Title), slug(sec.Title))
	}
	for _, sec := range secs[1:] {
		write(sec)
	}
	return b.Bytes()
}

func writeMDTable(b *bytes.Buffer, t table) {
	if t.Title != "" {
		fmt.Fprintf(b, "**%s**\n\n", mdEscape(t.Title))
	}
	if len(t.Rows) == 0 {
		b.WriteString("(none)\n")
		return
	}
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	row(t.Header)
	b.WriteString("|" + strings.Repeat(" --- |", len(t.Header)) + "\n")
	for _, r := range t.Rows {
		row(r)
	}
}

// mdEscape keeps text from breaking a table or turning into markup.
func mdEscape(s string) string {
	r := strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "*", `\*`, "`", "\\`")
	return r.Replace(s)
}

// slug is the anchor GitHub and most Markdown renderers give a heading: lower case,
// punctuation dropped, spaces to hyphens.
func slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ' || r == '-':
			b.WriteRune('-')
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
