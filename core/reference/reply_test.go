package reference

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseReply(t *testing.T) {
	ok := []struct {
		in   string
		want Reply
	}{
		{`{"decision":"RESPOND","answer":"7:05"}`, Reply{Respond, "7:05"}},
		{"  \n{\"decision\": \"SILENT\", \"answer\": \"\"}\n", Reply{Silent, ""}},
		{`{"decision":"SILENT"}`, Reply{Silent, ""}},
		{`{"answer":"nine dollars","decision":"RESPOND"}`, Reply{Respond, "nine dollars"}},
	}
	for _, c := range ok {
		got, err := ParseReply(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseReply(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	bad := map[string]string{
		"":        "empty",
		"RESPOND": "not a JSON object",
		"```json\n{\"decision\":\"SILENT\"}\n```":      "not a JSON object",
		`{"decision":"respond"}`:                       `"respond"`,
		`{"decision":"MAYBE"}`:                         "not",
		`{"answer":"x"}`:                               `no "decision"`,
		`{"decision":"SILENT","why":"x"}`:              "unknown field",
		`{"decision":"SILENT"} {"decision":"RESPOND"}`: "text after",
		`{"decision":"SILENT"} ok`:                     "text after",
		`{"decision":1}`:                               "expected JSON",
		`{"decision":"SILENT"`:                         "expected JSON",
		`["RESPOND"]`:                                  "not a JSON object",
	}
	for in, want := range bad {
		_, err := ParseReply(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseReply(%q) error %v, want one containing %q", in, err, want)
		}
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{`{"decision":"RESPOND","answer":"x"}`, `{"decision":"SILENT"}`, "SILENT", `{"decision":null}`, "{}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseReply(s)
		if err != nil {
			if !utf8.ValidString(err.Error()) && utf8.ValidString(s) {
				t.Errorf("error message is not valid UTF-8: %q", err)
			}
			return
		}
		if r.Decision != Respond && r.Decision != Silent {
			t.Errorf("accepted decision %q", r.Decision)
		}
	})
}
