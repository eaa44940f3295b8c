package main

import (
	"strings"
	"testing"
)

// Whatever a server replies, reading it never panics, and an accepted reply is a
// message with at least one text block.
func FuzzParseMessages(f *testing.F) {
	for _, s := range []string{
		`{"type":"message","model":"m","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":3,"output_tokens":1}}`,
		`{"type":"message","content":[{"type":"thinking","thinking":"x"},{"type":"text","text":"y"}]}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		`{"type":"message","content":[]}`, `{"type":`, `null`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r, _, _, err := parseMessages([]byte(body))
		if err == nil && r.Type != "message" {
			t.Fatalf("accepted %q", body)
		}
	})
}

func TestParseMessages(t *testing.T) {
	cases := []struct{ body, text, err string }{
		{`{"type":"message","content":[{"type":"thinking","thinking":"x"},{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, "ab", ""},
		{`{"type":"message","content":[{"type":"tool_use","id":"t"}]}`, "", "no text content block"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "", `type "error"`},
		{`{"type":"message","content":[{"type":"text","text":null}]}`, "", "no text content block"},
	}
	for _, c := range cases {
		_, text, _, err := parseMessages([]byte(c.body))
		if text != c.text || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("parseMessages(%s) = %q, %v; want %q, %q", c.body, text, err, c.text, c.err)
		}
	}
}
