package termsafe

import (
	"bytes"
	"strings"
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

func TestShortCutsLongValues(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	got := Short(long, 64)
	if len(got) > 100 || !strings.HasPrefix(got, strings.Repeat("x", 64)+"…") || !strings.Contains(got, "204800 bytes in all") {
		t.Errorf("Short of 200 KB: %q", got)
	}
	if got := Short("id\x1b", 64); got != `id\x1b` {
		t.Errorf("Short of a short value: %q, want it escaped and whole", got)
	}
}

func TestInvisible(t *testing.T) {
	for _, s := range []string{"a\u200bb", "a\u200db", "\ufeffa", "a\u00a0b", "a\u2060", "a\u3164", "a\x1b", "a\tb", "a\u00adb", "a\u202eb"} {
		if _, _, bad := Invisible(s); !bad {
			t.Errorf("Invisible(%q) found nothing", s)
		}
	}
	for _, s := range []string{"p1-explicit", "café", "Ж-1", "日本", "a b"} {
		if r, _, bad := Invisible(s); bad {
			t.Errorf("Invisible(%q) found %U", s, r)
		}
	}
}
