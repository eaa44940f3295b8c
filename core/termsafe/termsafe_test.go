package termsafe

import (
	"bytes"
	"testing"
)

func TestStringEscapesWhatATerminalWouldObey(t *testing.T) {
	cases := map[string]string{
		"plain, with\ttab\nand newline": "plain, with\ttab\nand newline",
		"\x1b[2J\x1b]0;owned\x07":       `\x1b[2J\x1b]0;owned\x07`,
		"carriage\rreturn":              `carriage\x0dreturn`,
		"c1 \u009b control":             `c1 \x9b control`,
		"bidi \u202eevil":               `bidi \u202eevil`,
		"bad \xff byte":                 `bad \xff byte`,
		"Aria, wie spät ist es? 日本":     "Aria, wie spät ist es? 日本",
	}
	for in, want := range cases {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	var b bytes.Buffer
	if _, err := (Writer{W: &b}).Write([]byte("id \x1b[2J\n")); err != nil || b.String() != "id \\x1b[2J\n" {
		t.Errorf("Writer wrote %q (%v)", b.String(), err)
	}
}
