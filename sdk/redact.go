package sdk

import (
	"net/url"
	"regexp"
	"strings"
)

// Redacted stands in for a secret removed from a URL.
const Redacted = "REDACTED"

// secretParam matches the query parameter names that carry credentials (key=, api_key=,
// token=, access_token=, sig=, password=, ...).
var secretParam = regexp.MustCompile(`(?i)(^|[_-])(key|apikey|token|secret|password|passwd|pwd|sig|signature|auth|authorization|credential|credentials|session|code)$`)

// tokenLike is a value that looks like a credential whatever its parameter is called:
// 20 or more letters, digits and -_.~+/= with at least one digit and one letter.
var tokenLike = regexp.MustCompile(`^[A-Za-z0-9._~+/=-]{20,}$`)

func looksLikeToken(v string) bool {
	return tokenLike.MatchString(v) && strings.ContainsAny(v, "0123456789") &&
		strings.IndexFunc(v, func(r rune) bool { return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' }) >= 0
}

// URLSecrets lists the secrets a URL carries: its password (a user name alone, often a
// token, when it is 8 characters or more), and the values of its credential-like query
// parameters (by name, or by a token-like value). A plugin adds them to what it redacts
// from its messages, wherever they appear.
func URLSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	if u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, p)
		} else if n := u.User.Username(); len(n) >= 8 {
			out = append(out, n)
		}
	}
	for name, vals := range u.Query() {
		for _, v := range vals {
			if v != "" && (secretParam.MatchString(name) || looksLikeToken(v)) {
				out = append(out, v)
			}
		}
	}
	return out
}

// RedactURL is raw with its secrets replaced by REDACTED: the user information, and
// the values of credential-like query parameters. Anything that is not an absolute URL
// comes back unchanged.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return raw
	}
	changed := false
	if u.User != nil {
		u.User, changed = url.User(Redacted), true
	}
	if u.RawQuery != "" {
		q := u.Query()
		for name, vals := range q {
			for i, v := range vals {
				if v != "" && (secretParam.MatchString(name) || looksLikeToken(v)) {
					vals[i], changed = Redacted, true
				}
			}
			q[name] = vals
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	if !changed {
		return raw
	}
	return u.String()
}

// urlInText finds the URLs in a message.
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>()\[\]{}]+`)

// RedactURLs applies RedactURL to every URL in text (an error message, a log line).
func RedactURLs(text string) string {
	if !strings.Contains(text, "://") {
		return text
	}
	return urlInText.ReplaceAllStringFunc(text, RedactURL)
}

// RedactConfig is a copy of a plugin's config with RedactURLs applied to every string
// value (nested lists and maps too), for the records a run writes: the config the
// plugin is given keeps its secrets, what is written to disk does not.
func RedactConfig(cfg map[string]any) map[string]any {
	if cfg == nil {
		return nil
	}
	out := make(map[string]any, len(cfg))
	for k, v := range cfg {
		out[k] = redactValue(v)
	}
	return out
}

func redactValue(v any) any {
	switch v := v.(type) {
	case string:
		return RedactURLs(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactValue(e)
		}
		return out
	case map[string]any:
		return RedactConfig(v)
	default:
		return v
	}
}
