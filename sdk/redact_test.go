package sdk

import (
	"fmt"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@api.example.com/v1":         "https://REDACTED@api.example.com/v1",
		"https://api.example.com/v1?key=abc&lang=en": "https://api.example.com/v1?key=REDACTED&lang=en",
		"https://h/v1?access_token=x1&api-key=y2":    "https://h/v1?access_token=REDACTED&api-key=REDACTED",
		"https://h/v1?q=sk0123456789abcdefXYZ0":      "https://h/v1?q=REDACTED",
		"http://127.0.0.1:8000/v1":                   "http://127.0.0.1:8000/v1",
		"https://h/v1?model=gpt-4o-mini&monkey=no":   "https://h/v1?model=gpt-4o-mini&monkey=no",
		"not a url": "not a url",
		"https://tok_0123456789abcdefghij@h.example.com/x": "https://REDACTED@h.example.com/x",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	msg := `Post "https://u:secretpw@h/v1/chat?key=k123": dial tcp: refused; retry https://h/ok`
	want := `Post "https://REDACTED@h/v1/chat?key=REDACTED": dial tcp: refused; retry https://h/ok`
	if got := RedactURLs(msg); got != want {
		t.Errorf("RedactURLs = %q, want %q", got, want)
	}
	if s := URLSecrets("https://u:secretpw@h/v1?key=k123&lang=en"); len(s) != 2 || s[0] != "secretpw" || s[1] != "k123" {
		t.Errorf("URLSecrets = %q", s)
	}
}

// The identity records a run writes hold a plugin's config with every URL's secrets
// redacted, nested values too; values that hold no secret, and other types, are kept;
// the config given is not changed; redacting twice gives the same (a record read back
// compares equal to the config it was written from).
func TestRedactConfig(t *testing.T) {
	cfg := map[string]any{
		"base_url": "https://alice:hunter2pass@api.example.test/v1?key=AIzaSyD-secretsecretsecret",
		"model":    "gpt-x",
		"n":        3.0,
		"extra":    []any{"http://127.0.0.1:8000/v1?token=abc", map[string]any{"u": "http://bob:pw@h/"}},
	}
	got := RedactConfig(cfg)
	raw := fmt.Sprint(got)
	for _, secret := range []string{"hunter2pass", "AIzaSyD", "token=abc", "bob:pw"} {
		if strings.Contains(raw, secret) {
			t.Errorf("%q kept: %v", secret, got)
		}
	}
	if got["model"] != "gpt-x" || got["n"] != 3.0 || !strings.Contains(got["base_url"].(string), "api.example.test/v1") {
		t.Errorf("non-secret values changed: %v", got)
	}
	if !strings.Contains(cfg["base_url"].(string), "hunter2pass") {
		t.Error("the config given was changed")
	}
	if again := RedactConfig(got); fmt.Sprint(again) != raw {
		t.Errorf("not idempotent:\n%v\n%v", again, got)
	}
	if RedactConfig(nil) != nil {
		t.Error("nil config")
	}
}
