package config

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// diagWriter prints diagnostics in hcl's text layout (summary, "on FILE line N, in
// CONTEXT:", the numbered source lines with the subject highlighted, the values of the
// expression's variables, the detail). Unlike hcl.NewDiagnosticTextWriter, which scans
// each file from its first line for every diagnostic, it indexes each file's lines once:
// 2,000 warnings on a 2,000-block run file took `validate` 90.9 s (issue 31).
type diagWriter struct {
	w      io.Writer
	files  map[string]*hcl.File
	width  uint
	color  bool
	starts map[string][]int // the byte offset of each line's start, per file
}

func (dw *diagWriter) lineStarts(name string, src []byte) []int {
	if s, ok := dw.starts[name]; ok {
		return s
	}
	s := []int{0}
	for i, c := range src {
		if c == '\n' && i+1 < len(src) {
			s = append(s, i+1)
		}
	}
	dw.starts[name] = s
	return s
}

func (dw *diagWriter) write(d *hcl.Diagnostic) error {
	var on, hl, off string
	if dw.color {
		on, hl, off = "\x1b[33m", "\x1b[1;4m", "\x1b[0m"
		if d.Severity == hcl.DiagError {
			on = "\x1b[31m"
		}
	}
	sev := "Warning"
	if d.Severity == hcl.DiagError {
		sev = "Error"
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%s%s: %s\n\n", on, sev, off, d.Summary)
	if d.Subject != nil {
		dw.snippet(&b, d, hl, off)
		dw.values(&b, d)
	}
	if d.Detail != "" {
		detail := d.Detail
		if dw.width > 0 {
			detail = wrapText(detail, int(dw.width))
		}
		fmt.Fprintf(&b, "%s\n\n", detail)
	}
	_, err := dw.w.Write(b.Bytes())
	return err
}

func (dw *diagWriter) snippet(b *bytes.Buffer, d *hcl.Diagnostic, hl, off string) {
	subj := *d.Subject
	snip := subj
	if d.Context != nil {
		snip = hcl.RangeOver(snip, *d.Context)
	}
	f := dw.files[subj.Filename]
	if f == nil || f.Bytes == nil {
		fmt.Fprintf(b, "  on %s line %d:\n  (source code not available)\n\n", subj.Filename, subj.Start.Line)
		return
	}
	where := ""
	if cs, ok := f.Nav.(interface{ ContextString(int) string }); ok {
		if c := cs.ContextString(subj.Start.Byte); c != "" {
			where = ", in " + c
		}
	}
	fmt.Fprintf(b, "  on %s line %d%s:\n", subj.Filename, subj.Start.Line, where)
	src := f.Bytes
	starts := dw.lineStarts(subj.Filename, src)
	from, to := snip.Start.Byte, snip.End.Byte
	if to <= from {
		to = from + 1 // an empty range shows the line it is on
	}
	hFrom, hTo := subj.Start.Byte, subj.End.Byte
	if hTo <= hFrom {
		hTo = hFrom + 1
	}
	first := sort.Search(len(starts), func(i int) bool { return starts[i] > from }) - 1
	if first < 0 {
		first = 0
	}
	for i := first; i < len(starts) && starts[i] < to; i++ {
		ls, le := starts[i], len(src)
		if i+1 < len(starts) {
			le = starts[i+1]
		}
		line := bytes.TrimRight(src[ls:le], "\n")
		line = bytes.TrimSuffix(line, []byte("\r"))
		end := ls + len(line)
		a, z := max(hFrom, ls), min(hTo, end)
		if a >= z {
			fmt.Fprintf(b, "%4d: %s\n", i+1, clip(line, 240, false))
			continue
		}
		fmt.Fprintf(b, "%4d: %s%s%s%s%s\n", i+1, clip(src[ls:a], 80, true), hl, clip(src[a:z], 120, false), off, clip(src[z:end], 80, false))
	}
	b.WriteByte('\n')
}

// clip shortens a long piece of a source line to about n bytes, keeping its end
// (fromEnd) or its start, and marks the cut with "...": a 100,000-character line is
// shown as a window around the subject.
func clip(p []byte, n int, fromEnd bool) []byte {
	if len(p) <= n {
		return p
	}
	if fromEnd {
		i := len(p) - n
		for i < len(p) && !utf8.RuneStart(p[i]) {
			i++
		}
		return append([]byte("..."), p[i:]...)
	}
	i := n
	for i > 0 && !utf8.RuneStart(p[i]) {
		i--
	}
	return append(append([]byte{}, p[:i]...), "..."...)
}

// values lists what the expression's variables held, as hcl's writer does, for an
// error that depends on them.
func (dw *diagWriter) values(b *bytes.Buffer, d *hcl.Diagnostic) {
	if d.Expression == nil || d.EvalContext == nil {
		return
	}
	seen := map[string]bool{}
	var stmts []string
	for _, t := range d.Expression.Variables() {
		v, diags := t.TraverseAbs(d.EvalContext)
		if diags.HasErrors() || !v.IsKnown() || v.IsMarked() {
			continue
		}
		name := traversalName(t)
		if seen[name] {
			continue
		}
		seen[name] = true
		if v.IsNull() {
			stmts = append(stmts, name+" set to null")
		} else {
			stmts = append(stmts, name+" as "+shortValue(v))
		}
	}
	sort.Strings(stmts)
	for i, s := range stmts {
		lead, tail := "     ", ",\n"
		if i == 0 {
			lead = "with "
		}
		if i == len(stmts)-1 {
			tail = ".\n\n"
		}
		b.WriteString(lead + s + tail)
	}
}

func traversalName(t hcl.Traversal) string {
	var s strings.Builder
	for _, step := range t {
		switch st := step.(type) {
		case hcl.TraverseRoot:
			s.WriteString(st.Name)
		case hcl.TraverseAttr:
			s.WriteString("." + st.Name)
		case hcl.TraverseIndex:
			if st.Key.Type().IsPrimitiveType() {
				s.WriteString("[" + shortValue(st.Key) + "]")
			} else {
				s.WriteString("[...]")
			}
		}
	}
	return s.String()
}

// shortValue describes a value in a few words: a primitive as written (a string cut at
// 200 bytes), a collection by its type and size.
func shortValue(v cty.Value) string {
	ty := v.Type()
	switch {
	case v.IsNull():
		return "null"
	case !v.IsKnown():
		return "(not yet known)"
	case ty == cty.Bool:
		return fmt.Sprint(v.True())
	case ty == cty.Number:
		return v.AsBigFloat().Text('g', 10)
	case ty == cty.String:
		s := v.AsString()
		if len(s) > 200 {
			return fmt.Sprintf("%q... (%d bytes)", s[:200], len(s))
		}
		return fmt.Sprintf("%q", s)
	case ty.IsCollectionType() || ty.IsTupleType():
		n := v.LengthInt()
		if n == 0 {
			return "empty " + ty.FriendlyName()
		}
		return fmt.Sprintf("%s with %d element%s", ty.FriendlyName(), n, plural(n))
	case ty.IsObjectType():
		n := len(ty.AttributeTypes())
		if n == 0 {
			return "object with no attributes"
		}
		return fmt.Sprintf("object with %d attribute%s", n, plural(n))
	}
	return ty.FriendlyName()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// wrapText wraps each line of s at width columns, breaking between words.
func wrapText(s string, width int) string {
	var out strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			out.WriteByte('\n')
		}
		col := 0
		for j, word := range strings.Fields(line) {
			if j > 0 && col+1+len(word) > width {
				out.WriteByte('\n')
				col = 0
			} else if j > 0 {
				out.WriteByte(' ')
				col++
			}
			out.WriteString(word)
			col += len(word)
		}
	}
	return out.String()
}
