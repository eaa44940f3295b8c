package main

import (
	"strings"
	"testing"
)

// Whatever a server replies, reading it never panics; an accepted reply always has the
// content the caller dereferences, and usage is never negative from a well-formed reply.
func FuzzParseChat(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`,
		`{"choices":[{"message":{"content":null}}]}`,
		`{"choices":[]}`, `{"choices":`, `null`, `[]`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r, _, err := parseChat([]byte(body))
		if err == nil && (len(r.Choices) == 0 || r.Choices[0].Message.Content == nil) {
			t.Fatalf("accepted %q without content", body)
		}
	})
}

func TestParseChat(t *testing.T) {
	for body, want := range map[string]string{
		`{"choices":[{"message":{"content":"x"}}]}`:  "",
		`{"choices":[{"message":{"content":null}}]}`: "no choices[0].message.content",
		`{"choices":[]}`: "no choices",
		`{"choices":[{"message":{"content":3}}]}`: "cannot unmarshal",
	} {
		_, _, err := parseChat([]byte(body))
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("parseChat(%s) error %v; want %q", body, err, want)
		}
	}
}
