package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/score"
)

// markdown renders report.md: the meta header, then every section as a Markdown table.
func markdown(s score.Summary, m Meta) []byte {
	var b bytes.Buffer
	title := "Duplex-MPE report"
	if m.Run != "" {
		title += ": " + m.Run
	}
	fmt.Fprintf(&b, "# %s\n\n", mdEscape(title))
	writeMDTable(&b, metaTable(s, m))
	secs := sections(s, m)
	b.WriteString("\n## Contents\n\n")
	for _, sec := range secs {
		fmt.Fprintf(&b, "- [%s](#%s)\n", mdEscape(sec.Title), sec.ID)
	}
	for _, sec := range secs {
		fmt.Fprintf(&b, "\n<a id=\"%s\"></a>\n## %s\n\n%s\n", sec.ID, mdEscape(sec.Title), mdEscape(sec.Intro))
		for _, t := range sec.Tables {
			b.WriteString("\n")
			writeMDTable(&b, t)
		}
	}
	return b.Bytes()
}

func writeMDTable(b *bytes.Buffer, t table) {
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
