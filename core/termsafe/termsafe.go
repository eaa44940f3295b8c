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

// Short is String(s) cut to its first n characters when it has more, ending with "…"
// and how long s was: a 200 KB id in a message is shown, not echoed whole.
func Short(s string, n int) string {
	count := 0
	for i := range s {
		if count == n {
			return String(s[:i]) + fmt.Sprintf("… (%d bytes in all)", len(s))
		}
		count++
	}
	return String(s)
}

// Invisible returns the first character of s that an id must not hold, and its byte
// offset: a control character (tab and newline included), a format character (zero-width
// space and joiners, bidirectional marks, the byte-order mark, soft hyphen), a space
// other than U+0020, or a filler that prints as nothing; ok is false when there is none.
// Two ids differing only by such a character print alike.
func Invisible(s string) (r rune, at int, ok bool) {
	for i, r := range s {
		if invisible(r) {
			return r, i, true
		}
	}
	return 0, 0, false
}

func invisible(r rune) bool {
	switch {
	case unicode.IsControl(r), unicode.Is(unicode.Cf, r), r == utf8.RuneError:
		return true
	case unicode.Is(unicode.Zs, r) && r != ' ', r == '\u2028', r == '\u2029':
		return true
	case r == '\u115f', r == '\u1160', r == '\u3164', r == '\uffa0', r == '\u034f', r == '\u180e':
		return true // Hangul fillers, the combining grapheme joiner, the Mongolian vowel separator
	case r >= '\ufe00' && r <= '\ufe0f', r >= '\U000e0100' && r <= '\U000e01ef', r >= '\U000e0000' && r <= '\U000e007f':
		return true // variation selectors and tags
	}
	return false
}
