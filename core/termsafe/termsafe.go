// Package termsafe escapes what the harness prints from data (scenario ids and text,
// gold answers, transcripts, plugin messages) so that a terminal shows it and never
// obeys it: an ESC sequence in a scenario once cleared the screen and set the terminal's
// title through `dataset validate` and `explain`.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// unsafe reports whether r must be escaped: a control character other than tab and
// newline (C0, DEL, C1), or a bidirectional override or isolate, which reorders what
// follows it on screen.
func unsafe(r rune) bool {
	if r == '\t' || r == '\n' {
		return false
	}
	return unicode.IsControl(r) || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u2028' || r == '\u2029'
}

// String is s with every unsafe character written as a Go escape (\x1b, \u202e) and
// every invalid UTF-8 byte as \xNN; anything else is left as it is.
func String(s string) string {
	clean := true
	for _, r := range s {
		if unsafe(r) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Writer escapes everything written through it (String), for output made of data.
// A multi-byte character split across writes is escaped as its bytes.
type Writer struct{ W io.Writer }

func (w Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.W, String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
